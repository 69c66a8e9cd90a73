#include "report/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "core/number_text.h"

namespace mlalab::report {
namespace {

constexpr std::string_view kMinus = "\u2212";
constexpr double kWholePercentFrom = 10.0;  // short_percent drops the decimal from here on

// Every enum's values with their names, so that name_of and parse_* cannot drift apart.
constexpr std::pair<ab::ArmRole, std::string_view> kArmRoles[] = {
    {ab::ArmRole::kBaseline, "baseline"},
    {ab::ArmRole::kBaselineRepeat, "baseline_repeat"},
    {ab::ArmRole::kVariant, "variant"}};
constexpr std::pair<ab::Direction, std::string_view> kDirections[] = {
    {ab::Direction::kHigherIsBetter, "higher_is_better"},
    {ab::Direction::kLowerIsBetter, "lower_is_better"}};
constexpr std::pair<ab::Correction, std::string_view> kCorrections[] = {
    {ab::Correction::kHolm, "holm"}, {ab::Correction::kBenjaminiHochberg, "benjamini_hochberg"}};
constexpr std::pair<ab::CorrectionFamily, std::string_view> kFamilies[] = {
    {ab::CorrectionFamily::kEachVariant, "each_variant"},
    {ab::CorrectionFamily::kWholeSweep, "whole_sweep"}};
constexpr std::pair<ab::ContextSpec::Kind, std::string_view> kContextKinds[] = {
    {ab::ContextSpec::Kind::kFixed, "fixed"},
    {ab::ContextSpec::Kind::kUniform, "uniform"},
    {ab::ContextSpec::Kind::kLogNormal, "lognormal"}};
constexpr std::pair<ab::StopReason, std::string_view> kStopReasons[] = {
    {ab::StopReason::kKeepGoing, "keep_going"},
    {ab::StopReason::kSettled, "settled"},
    {ab::StopReason::kAaCheckFailed, "a_a_check_failed"},
    {ab::StopReason::kRoundBudgetSpent, "round_budget_spent"},
    {ab::StopReason::kTimeBudgetSpent, "time_budget_spent"}};
// Results of schema 1 and 2 stopped a point once every interval was narrower than the minimum
// effect ("precision_reached"): the earlier rule's way of saying the point had settled.
constexpr std::string_view kEarlierSettledName = "precision_reached";
constexpr ab::PointVerdict kPointVerdicts[] = {
    ab::PointVerdict::kFaster,      ab::PointVerdict::kSlower,    ab::PointVerdict::kSmallChange,
    ab::PointVerdict::kWithinNoise, ab::PointVerdict::kAmbiguous, ab::PointVerdict::kWithheld};
constexpr ab::VariantVerdict kVariantVerdicts[] = {
    ab::VariantVerdict::kAccepted, ab::VariantVerdict::kRejected,
    ab::VariantVerdict::kInconclusive, ab::VariantVerdict::kMixed};

template <typename Enum, std::size_t N>
std::string_view lookup(const std::pair<Enum, std::string_view> (&table)[N], Enum value) {
  for (const auto& [entry, name] : table) {
    if (entry == value) return name;
  }
  return "unknown";
}

template <typename Enum, std::size_t N>
Enum parse(const std::pair<Enum, std::string_view> (&table)[N], std::string_view text,
           std::string_view what) {
  std::string allowed;
  for (const auto& [entry, name] : table) {
    if (name == text) return entry;
    allowed += allowed.empty() ? "" : ", ";
    allowed += name;
  }
  throw std::invalid_argument(fmt::format("unknown {} '{}' (allowed: {})", what, text, allowed));
}

template <typename Enum, std::size_t N>
Enum parse_verdict(const Enum (&values)[N], std::string_view text, std::string_view what) {
  for (const Enum value : values) {
    if (ab::to_string(value) == text) return value;
  }
  throw std::invalid_argument(fmt::format("unknown {} '{}'", what, text));
}

// fmt's fixed notation, with U+2212 for the minus and no sign on a value that rounds to 0.
std::string fixed(double value, int decimals, bool plus) {
  std::string digits = fmt::format("{:.{}f}", std::abs(value), decimals);
  const bool zero = digits.find_first_not_of("0.") == std::string::npos;
  if (zero) return digits;
  if (value < 0) return std::string(kMinus) + digits;
  return plus ? "+" + digits : digits;
}

}  // namespace

std::string signed_percent(double pct, int decimals) {
  if (std::isnan(pct)) return "n/a";
  if (std::isinf(pct)) return pct > 0 ? "+∞%" : std::string(kMinus) + "∞%";
  return fixed(pct, decimals, true) + "%";
}

std::string short_percent(double pct) {
  const bool whole = std::isfinite(pct) && std::abs(pct) >= kWholePercentFrom - 0.05;
  return signed_percent(pct, whole ? 0 : 1);
}

std::string interval_text(const ab::Interval& interval, int decimals) {
  const auto end = [&](double value) {
    if (std::isinf(value)) return value > 0 ? std::string("+∞") : std::string(kMinus) + "∞";
    if (std::isnan(value)) return std::string("n/a");
    return fixed(value, decimals, true);
  };
  return fmt::format("[{}, {}]", end(interval.lower), end(interval.upper));
}

std::string quantity_text(double value) {
  if (!std::isfinite(value)) return "n/a";
  constexpr double kGroupFrom = 1000.0;  // from here on whole numbers, grouped
  if (std::abs(value) >= kGroupFrom) return group_thousands(std::llround(value), kMinus);
  return fmt::format("{:.4g}", value);
}

int decimals_for(double resolution) {
  // The slack keeps 0.1 (stored a little above a tenth) at one decimal.
  return std::max(0, static_cast<int>(std::ceil(-std::log10(resolution) - 1e-9)));
}

std::string si_text(double value, double resolution) {
  struct Prefix {
    double scale;
    const char* suffix;
  };
  constexpr Prefix kPrefixes[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  Prefix prefix{1, ""};
  for (const Prefix& larger : kPrefixes) {
    if (std::abs(value) >= larger.scale) {
      prefix = larger;
      break;
    }
  }
  std::string digits =
      fmt::format("{:.{}f}", value / prefix.scale, decimals_for(resolution / prefix.scale));
  if (digits.find('.') != std::string::npos) {
    digits.erase(digits.find_last_not_of('0') + 1);
    if (digits.back() == '.') digits.pop_back();
  }
  return digits + prefix.suffix;
}

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "n/a";
  constexpr double kMinute = 60;
  constexpr double kHour = 3600;
  if (seconds < kMinute) return fmt::format("{:.1f} s", seconds);
  const long long whole = std::llround(seconds);
  if (seconds < kHour) return fmt::format("{} min {:02} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02} min", whole / 3600, (whole % 3600) / 60);
}

std::string point_label(int concurrency) { return fmt::format("C{}", concurrency); }

std::string point_list(const std::vector<int>& concurrencies) {
  std::string text;
  for (std::size_t i = 0; i < concurrencies.size(); ++i) {
    if (i > 0) text += i + 1 == concurrencies.size() ? " and " : ", ";
    text += point_label(concurrencies[i]);
  }
  return text;
}

std::string xml_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      case '\'': escaped += "&apos;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

std::string_view name_of(ab::ArmRole role) { return lookup(kArmRoles, role); }
std::string_view name_of(ab::Direction direction) { return lookup(kDirections, direction); }
std::string_view name_of(ab::Correction correction) { return lookup(kCorrections, correction); }
std::string_view name_of(ab::CorrectionFamily family) { return lookup(kFamilies, family); }
std::string_view name_of(ab::ContextSpec::Kind kind) { return lookup(kContextKinds, kind); }
std::string_view name_of(ab::StopReason reason) { return lookup(kStopReasons, reason); }
std::string_view name_of(ab::PointVerdict verdict) { return ab::to_string(verdict); }
std::string_view name_of(ab::VariantVerdict verdict) { return ab::to_string(verdict); }

ab::ArmRole parse_arm_role(std::string_view text) { return parse(kArmRoles, text, "arm role"); }
ab::Direction parse_direction(std::string_view text) {
  return parse(kDirections, text, "direction");
}
ab::Correction parse_correction(std::string_view text) {
  return parse(kCorrections, text, "correction");
}
ab::CorrectionFamily parse_correction_family(std::string_view text) {
  return parse(kFamilies, text, "correction family");
}
ab::ContextSpec::Kind parse_context_kind(std::string_view text) {
  return parse(kContextKinds, text, "context kind");
}
ab::StopReason parse_stop_reason(std::string_view text) {
  if (text == kEarlierSettledName) return ab::StopReason::kSettled;
  return parse(kStopReasons, text, "stop reason");
}
ab::PointVerdict parse_point_verdict(std::string_view text) {
  return parse_verdict(kPointVerdicts, text, "point verdict");
}
ab::VariantVerdict parse_variant_verdict(std::string_view text) {
  return parse_verdict(kVariantVerdicts, text, "variant verdict");
}

}  // namespace mlalab::report
