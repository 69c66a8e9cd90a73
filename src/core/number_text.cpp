#include "core/number_text.h"

#include <cstdlib>

namespace mlalab {

std::string group_thousands(long long value, std::string_view minus_sign) {
  const std::string digits = std::to_string(std::llabs(value));
  std::string grouped = value < 0 ? std::string(minus_sign) : std::string();
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped.push_back(',');
    grouped.push_back(digits[i]);
  }
  return grouped;
}

std::string counted(long long count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

}  // namespace mlalab
