#include "report/format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace mlalab::report {
namespace {

TEST(Format, Percentages) {
  EXPECT_EQ(signed_percent(3.24), "+3.2%");
  EXPECT_EQ(signed_percent(-14), "−14.0%");
  EXPECT_EQ(signed_percent(-0.04), "0.0%");  // no sign on what rounds to zero
  EXPECT_EQ(signed_percent(std::nan("")), "n/a");
  EXPECT_EQ(short_percent(-14.2), "−14%");
  EXPECT_EQ(short_percent(-3.04), "−3.0%");
  EXPECT_EQ(short_percent(20), "+20%");
  const double infinity = std::numeric_limits<double>::infinity();
  EXPECT_EQ(interval_text({.lower = -4, .upper = 2.25}), "[−4.0, +2.2]");
  EXPECT_EQ(interval_text({.lower = -infinity, .upper = infinity}), "[−∞, +∞]");
}

TEST(Format, Quantities) {
  EXPECT_EQ(quantity_text(-12345.6), "−12,346");
  EXPECT_EQ(quantity_text(12345.6), "12,346");
  EXPECT_EQ(quantity_text(123.44), "123.4");
  EXPECT_EQ(si_text(1500, 500), "1.5k");
  EXPECT_EQ(si_text(2e6, 1e6), "2M");
  EXPECT_EQ(si_text(500, 100), "500");
  // A step of 5 at 1,000 needs three decimals of "k"; 1,000 itself drops its zeros.
  EXPECT_EQ(si_text(1005, 5), "1.005k");
  EXPECT_EQ(si_text(1000, 5), "1k");
  EXPECT_EQ(si_text(0.0002, 0.0001), "0.0002");
  EXPECT_EQ(decimals_for(1), 0);
  EXPECT_EQ(decimals_for(50), 0);
  EXPECT_EQ(decimals_for(0.1), 1);
  EXPECT_EQ(decimals_for(0.5), 1);
  EXPECT_EQ(decimals_for(0.02), 2);
  EXPECT_EQ(duration_text(12.34), "12.3 s");
  EXPECT_EQ(duration_text(245), "4 min 05 s");
  EXPECT_EQ(duration_text(3720), "1 h 02 min");
}

TEST(Format, PointsAndText) {
  EXPECT_EQ(point_list({1, 2, 64}), "C1, C2 and C64");
  EXPECT_EQ(point_list({8}), "C8");
  EXPECT_EQ(xml_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
}

TEST(Format, EnumNamesRoundTrip) {
  for (const auto reason : {ab::StopReason::kKeepGoing, ab::StopReason::kSettled,
                            ab::StopReason::kAaCheckFailed, ab::StopReason::kRoundBudgetSpent,
                            ab::StopReason::kTimeBudgetSpent}) {
    EXPECT_EQ(parse_stop_reason(name_of(reason)), reason);
  }
  for (const auto verdict : {ab::PointVerdict::kFaster, ab::PointVerdict::kSlower,
                             ab::PointVerdict::kSmallChange, ab::PointVerdict::kWithinNoise,
                             ab::PointVerdict::kAmbiguous, ab::PointVerdict::kWithheld}) {
    EXPECT_EQ(parse_point_verdict(name_of(verdict)), verdict);
  }
  EXPECT_EQ(parse_variant_verdict("MIXED"), ab::VariantVerdict::kMixed);
  EXPECT_EQ(parse_arm_role("baseline_repeat"), ab::ArmRole::kBaselineRepeat);
  EXPECT_THROW(parse_correction("bonferroni"), std::invalid_argument);
}

// results.json spells the stopping rule's reasons in snake_case, the new ones included.
TEST(Format, StopReasonsAsResultsJsonSpellsThem) {
  EXPECT_EQ(name_of(ab::StopReason::kSettled), "settled");
  EXPECT_EQ(name_of(ab::StopReason::kAaCheckFailed), "a_a_check_failed");
  EXPECT_EQ(name_of(ab::StopReason::kRoundBudgetSpent), "round_budget_spent");
  EXPECT_EQ(parse_point_verdict("SMALL_CHANGE"), ab::PointVerdict::kSmallChange);
  EXPECT_EQ(parse_point_verdict("WITHHELD"), ab::PointVerdict::kWithheld);
}

// Committed results of schema 1 and 2 stopped points on "precision_reached": still read, as
// settled; never written.
TEST(Format, TheEarlierPrecisionReachedReadsAsSettled) {
  EXPECT_EQ(parse_stop_reason("precision_reached"), ab::StopReason::kSettled);
  EXPECT_EQ(name_of(parse_stop_reason("precision_reached")), "settled");
  EXPECT_THROW(parse_stop_reason("precision"), std::invalid_argument);
}

}  // namespace
}  // namespace mlalab::report
