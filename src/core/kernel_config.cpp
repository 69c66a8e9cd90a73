#include "core/kernel_config.h"

#include <fmt/format.h>

#include <charconv>

namespace mlalab {
namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::string> resolved_split_text(int splits, int workers) {
  if (workers > 0) return fmt::format("{} workers", workers);
  if (splits > 0) return std::to_string(splits);
  return std::nullopt;
}

std::string SplitPolicy::to_string() const {
  switch (kind) {
    case Kind::kHeuristic: return "heuristic";
    case Kind::kFixed: return "fixed:" + std::to_string(value);
    case Kind::kTargetCtas: return "target_ctas:" + std::to_string(value);
    case Kind::kBalanced: return value == 0 ? "balanced" : "balanced:" + std::to_string(value);
  }
  return "?";
}

std::optional<SplitPolicy> parse_split_policy(std::string_view text, std::string* error) {
  constexpr int kMaxTargetCtas = 1 << 20;
  auto fail = [&](std::string why) -> std::optional<SplitPolicy> {
    if (error) {
      *error = "split policy '" + std::string(text) + "': " + why +
               " (allowed: heuristic, fixed:N with N in [1, " + std::to_string(kMaxSplits) +
               "], target_ctas:T with T in [1, " + std::to_string(kMaxTargetCtas) +
               "], balanced, balanced:W with W in [1, " + std::to_string(kMaxBalancedWorkers) +
               "])";
    }
    return std::nullopt;
  };
  if (text == "heuristic" || text == "default") return SplitPolicy{};
  if (text == "balanced") return SplitPolicy{.kind = SplitPolicy::Kind::kBalanced, .value = 0};
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return fail("unknown form");
  const auto kind = text.substr(0, colon);
  const auto number = parse_int(text.substr(colon + 1));
  if (!number) return fail("value is not an integer");
  if (kind == "fixed") {
    if (*number < 1 || *number > kMaxSplits) return fail("N out of range");
    return SplitPolicy{.kind = SplitPolicy::Kind::kFixed, .value = *number};
  }
  if (kind == "target_ctas") {
    if (*number < 1 || *number > kMaxTargetCtas) return fail("T out of range");
    return SplitPolicy{.kind = SplitPolicy::Kind::kTargetCtas, .value = *number};
  }
  if (kind == "balanced") {
    if (*number < 1 || *number > kMaxBalancedWorkers) return fail("W out of range");
    return SplitPolicy{.kind = SplitPolicy::Kind::kBalanced, .value = *number};
  }
  return fail("unknown kind '" + std::string(kind) + "'");
}

constexpr std::string_view kWgmmaPrefix = "wgmma_";
constexpr std::string_view kWholeTilesSuffix = "_whole";

std::string variant_name(const VariantShape& shape) {
  return fmt::format("{}h{}_t{}_w{}_s{}{}",
                     shape.family == KernelFamily::kWgmma ? kWgmmaPrefix : std::string_view{},
                     shape.block_h, shape.block_t, shape.warps, shape.stages,
                     shape.whole_tiles ? kWholeTilesSuffix : std::string_view{});
}

std::optional<VariantShape> parse_variant_name(std::string_view name) {
  // An optional family prefix, then four '_'-separated fields, each a letter followed by a
  // number, in the order h t w s, then an optional suffix.
  const bool wgmma = name.starts_with(kWgmmaPrefix);
  if (wgmma) name.remove_prefix(kWgmmaPrefix.size());
  const bool whole_tiles = name.ends_with(kWholeTilesSuffix);
  if (whole_tiles) name.remove_suffix(kWholeTilesSuffix.size());
  constexpr std::string_view kPrefixes = "htws";
  int values[4] = {};
  std::size_t start = 0;
  for (int field = 0; field < 4; ++field) {
    const auto end = field == 3 ? name.size() : name.find('_', start);
    if (end == std::string_view::npos || end <= start + 1 || name[start] != kPrefixes[field]) {
      return std::nullopt;
    }
    const auto number = parse_int(name.substr(start + 1, end - start - 1));
    if (!number) return std::nullopt;
    values[field] = *number;
    start = end + 1;
  }
  return VariantShape{.family = wgmma ? KernelFamily::kWgmma : KernelFamily::kPortable,
                      .block_h = values[0], .block_t = values[1], .warps = values[2],
                      .stages = values[3], .whole_tiles = whole_tiles};
}

}  // namespace mlalab
