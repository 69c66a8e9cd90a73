#include "bench/timeline_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mlalab::bench {
namespace {

using kernels::CtaTimeline;

// A CTA that started at `start_ns` and finished parts at `ends_ns` (sequence i, 3 steps each).
CtaTimeline cta(std::uint64_t start_ns, std::vector<std::uint64_t> ends_ns, unsigned sm = 0) {
  CtaTimeline record{};
  record.start_ns = start_ns;
  record.sm = sm;
  record.parts = static_cast<int>(ends_ns.size());
  for (int i = 0; i < record.parts && i < kernels::kTimelineParts; ++i) {
    record.part[i] = {.end_ns = ends_ns[i], .sequence = i, .steps = 3, .part_slot = i - 1};
  }
  return record;
}

TEST(SummarizeTimeline, EndsAreTheLastPartsFromTheFirstStartGroupedByParts) {
  // Started at 1,000, 1,100 and 1,050 ns. Ends, from 1,000 ns: 8.0 µs (two parts), 6.1 µs
  // (one), 0.05 µs (none: its start) and 4.5 µs (one).
  const std::vector<CtaTimeline> records{cta(1000, {5000, 9000}), cta(1100, {7100}),
                                         cta(1050, {}), cta(1000, {5500})};
  const TimelineSummary summary = summarize_timeline(records);
  EXPECT_EQ(summary.ctas, 4);
  EXPECT_DOUBLE_EQ(summary.last_start_us, 0.1);
  EXPECT_DOUBLE_EQ(summary.min_end_us, 0.05);
  EXPECT_DOUBLE_EQ(summary.max_end_us, 8.0);
  EXPECT_DOUBLE_EQ(summary.median_end_us, (4.5 + 6.1) / 2);
  ASSERT_EQ(summary.by_parts.size(), 3u);
  EXPECT_EQ(summary.by_parts.at(0).ctas, 1);
  EXPECT_EQ(summary.by_parts.at(1).ctas, 2);
  EXPECT_DOUBLE_EQ(summary.by_parts.at(1).mean_end_us, (6.1 + 4.5) / 2);
  EXPECT_DOUBLE_EQ(summary.by_parts.at(1).max_end_us, 6.1);
  EXPECT_DOUBLE_EQ(summary.by_parts.at(2).mean_end_us, 8.0);
  EXPECT_EQ(summary.truncated_ctas, 0);
  EXPECT_EQ(summarize_timeline({}).ctas, 0);
}

TEST(SummarizeTimeline, ACtaOfMorePartsThanRecordedEndsAtItsLastRecordedPart) {
  std::vector<std::uint64_t> ends;
  for (int part = 1; part <= kernels::kTimelineParts + 3; ++part) ends.push_back(1000 * part);
  CtaTimeline busy = cta(0, ends);
  const TimelineSummary summary = summarize_timeline({busy});
  EXPECT_EQ(summary.truncated_ctas, 1);
  EXPECT_DOUBLE_EQ(summary.max_end_us, kernels::kTimelineParts * 1.0);
  EXPECT_EQ(summary.by_parts.begin()->first, kernels::kTimelineParts + 3);
  EXPECT_NE(timeline_summary_text(summary).find("more than 15 parts"), std::string::npos)
      << timeline_summary_text(summary);
}

TEST(TimelineJson, HoldsEachRowWithATimelineItsCtasInMicrosecondsAndItsSummary) {
  BenchRow with{.variant = "h16_t16_w4_s2", .heads = 16, .batch = 2, .context = 100};
  with.timeline = {cta(2000, {4000}, 7), cta(2500, {3000, 6500}, 3)};
  const BenchRow without{.variant = "h16_t16_w4_s2", .batch = 4};
  const nlohmann::json json = timeline_json({with, without});
  ASSERT_EQ(json.size(), 1u);
  const nlohmann::json& row = json[0];
  EXPECT_EQ(row["batch"], 2);
  ASSERT_EQ(row["ctas"].size(), 2u);
  const nlohmann::json& second = row["ctas"][1];
  EXPECT_EQ(second["sm"], 3);
  EXPECT_DOUBLE_EQ(second["start_us"].get<double>(), 0.5);
  ASSERT_EQ(second["parts"].size(), 2u);
  EXPECT_DOUBLE_EQ(second["parts"][1]["end_us"].get<double>(), 4.5);
  EXPECT_EQ(second["parts"][0]["partial"], false);  // slot −1: the final result
  EXPECT_EQ(second["parts"][1]["partial"], true);
  EXPECT_EQ(second["parts"][1]["sequence"], 1);
  EXPECT_DOUBLE_EQ(row["summary"]["max_end_us"].get<double>(), 4.5);
  EXPECT_EQ(row["summary"]["by_parts"]["2"]["ctas"], 1);
}

}  // namespace
}  // namespace mlalab::bench
