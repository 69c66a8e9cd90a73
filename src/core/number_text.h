#pragma once
// Numbers as every part of mlalab prints them for people.
#include <string>
#include <string_view>

namespace mlalab {

// 101376 → "101,376", −2048 → "-2,048" (or with `minus_sign`, e.g. the reports' "−").
std::string group_thousands(long long value, std::string_view minus_sign = "-");

}  // namespace mlalab
