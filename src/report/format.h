#pragma once
// Text shared by the report's printers: numbers as people read them, and the names of the
// result model's enums as the files spell them. Pure functions of values.
#include <string>
#include <string_view>
#include <vector>

#include "ab/run_record.h"

namespace mlalab::report {

// A change in %, always signed, with a real minus sign (U+2212): "+3.2%", "−14.0%". A value
// that rounds to zero prints unsigned ("0.0%"); NaN prints "n/a".
std::string signed_percent(double pct, int decimals = 1);

// The same with fewer digits where they do not matter: no decimal from 10 % on ("−14%"),
// one below ("−3.2%"). For sentences.
std::string short_percent(double pct);

// An interval in %, "[−4.0, +2.2]"; an unbounded end prints as −∞ or +∞.
std::string interval_text(const ab::Interval& interval, int decimals = 1);

// A positive quantity with about four significant digits: "12,345", "123.4", "0.1234".
std::string quantity_text(double value);

// How many decimals a number needs to show a digit of size `resolution`: 0 for 1 or more,
// 1 for 0.1 or 0.5, 2 for 0.02.
int decimals_for(double resolution);

// A compact axis label with an SI prefix, showing digits down to `resolution` (the step between
// labels) and no trailing zeros: (500, 100) → "500", (1500, 500) → "1.5k", (1005, 5) →
// "1.005k", (2e6, 1e6) → "2M".
std::string si_text(double value, double resolution);

// Seconds as "0.8 s", "12.3 s", "4 min 05 s", "1 h 02 min".
std::string duration_text(double seconds);

// A sweep point's short name: concurrency 8 → "C8".
std::string point_label(int concurrency);

// "C1, C2 and C64"
std::string point_list(const std::vector<int>& concurrencies);


// XML text and attribute escaping: & < > " '.
std::string xml_escape(std::string_view text);

// Enum names as results.json and fingerprint.json spell them (snake_case, stable), and back.
// The parsers throw std::invalid_argument naming the unknown word. parse_stop_reason also
// reads "precision_reached", written by results of schema 1 and 2, as kSettled.
std::string_view name_of(ab::ArmRole role);
std::string_view name_of(ab::Direction direction);
std::string_view name_of(ab::Correction correction);
std::string_view name_of(ab::CorrectionFamily family);
std::string_view name_of(ab::ContextSpec::Kind kind);
std::string_view name_of(ab::StopReason reason);
std::string_view name_of(ab::PointVerdict verdict);
std::string_view name_of(ab::VariantVerdict verdict);
ab::ArmRole parse_arm_role(std::string_view text);
ab::Direction parse_direction(std::string_view text);
ab::Correction parse_correction(std::string_view text);
ab::CorrectionFamily parse_correction_family(std::string_view text);
ab::ContextSpec::Kind parse_context_kind(std::string_view text);
ab::StopReason parse_stop_reason(std::string_view text);
ab::PointVerdict parse_point_verdict(std::string_view text);
ab::VariantVerdict parse_variant_verdict(std::string_view text);

}  // namespace mlalab::report
