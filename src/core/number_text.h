#pragma once
// Numbers as every part of mlalab prints them for people.
#include <string>
#include <string_view>

namespace mlalab {

// 101376 → "101,376", −2048 → "-2,048" (or with `minus_sign`, e.g. the reports' "−").
std::string group_thousands(long long value, std::string_view minus_sign = "-");

// A count and its noun, plural but for one: (1, "arm") → "1 arm", (3, "usable CPU") →
// "3 usable CPUs".
std::string counted(long long count, std::string_view noun);

}  // namespace mlalab
