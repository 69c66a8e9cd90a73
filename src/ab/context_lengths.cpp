#include "ab/context_lengths.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <stdexcept>

#include "bench/problem.h"

namespace mlalab::ab {

std::vector<int> sample_context_lengths(const ContextSpec& spec, int count) {
  if (count < 0) throw std::invalid_argument("sample_context_lengths: count must be ≥ 0");
  if (spec.kind == ContextSpec::Kind::kFixed) return std::vector<int>(count, spec.length);
  if (spec.min_length < 1 || spec.min_length > spec.max_length) {
    throw std::invalid_argument(fmt::format(
        "sample_context_lengths: need 1 ≤ min ≤ max, got [{}, {}]", spec.min_length,
        spec.max_length));
  }
  if (spec.kind == ContextSpec::Kind::kUniform) {
    return bench::uniform_random_lengths(count, spec.min_length, spec.max_length, spec.seed);
  }
  std::mt19937_64 generator(spec.seed);
  std::vector<int> lengths;
  lengths.reserve(count);
  // Lognormal: z from two draws by Box-Muller (the cosine half only, so that request i always
  // uses draws 2i and 2i + 1).
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  constexpr int kMantissaShift = 11;
  for (int i = 0; i < count; ++i) {
    const double u1 = (static_cast<double>(generator() >> kMantissaShift) + 1.0) * kTwoToMinus53;
    const double u2 = static_cast<double>(generator() >> kMantissaShift) * kTwoToMinus53;
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    const double length = std::round(spec.length * std::exp(spec.sigma * z));
    const double clamped = std::clamp(length, static_cast<double>(spec.min_length),
                                      static_cast<double>(spec.max_length));
    lengths.push_back(static_cast<int>(clamped));
  }
  return lengths;
}

}  // namespace mlalab::ab
