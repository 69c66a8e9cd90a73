#include "report/throughput_svg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "report/record_view.h"
#include "report/report_writer.h"
#include "report/svg_parsing.h"
#include "report/synthetic_record.h"

namespace mlalab::report {
namespace {

using testing::count;
using testing::tag_balance_problem;

std::string svg_of(const ab::RunRecord& record) {
  return testing::written_by(ThroughputSvg(), record);
}

TEST(ThroughputSvg, IsWellFormedWithOneLinePerMeasuredArm) {
  const ab::RunRecord record = testing::synthetic_record();
  const std::string svg = svg_of(record);
  EXPECT_EQ(tag_balance_problem(svg), "");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("width=\"800\" height=\"500\""), std::string::npos);
  // A, A′ and the five valid variants have samples; the INVALID arm has none.
  EXPECT_EQ(count(svg, "<polyline"), 7);
  for (const char* arm : {"baseline", "baseline (A′)", "8 warps", "3 stages", "same code",
                          "4 stages", "32 heads"}) {
    EXPECT_NE(svg.find(std::string("data-arm=\"") + arm + "\""), std::string::npos) << arm;
  }
  EXPECT_EQ(count(svg, "stroke-dasharray"), 2);  // A′'s line and its legend sample
  // Bands: the baseline's and each valid variant's, as one polygon per arm here.
  EXPECT_EQ(count(svg, "<polygon class=\"band\""), 6);
  // Legend, title, axes.
  EXPECT_NE(svg.find("broken (INVALID)"), std::string::npos);
  EXPECT_NE(svg.find("warps_and_stages: throughput against concurrency"), std::string::npos);
  EXPECT_NE(svg.find("concurrency (requests per batch), log scale"), std::string::npos);
  EXPECT_NE(svg.find("throughput (sequences/s, log scale)"), std::string::npos);
  EXPECT_NE(svg.find(">64</text>"), std::string::npos);
}

// Where the A/A check failed, A′'s dashed line strays from A's; the legend says what it cost.
TEST(ThroughputSvg, LegendNamesThePointsWhereTheAaCheckFailed) {
  const std::string note = "A/A check FLAGGED at C4: verdicts withheld there.";
  std::string legend;
  const std::string svg = svg_of(testing::synthetic_record());
  for (const testing::Element& line : testing::elements(svg, "text")) legend += line.text + " ";
  EXPECT_NE(legend.find(note), std::string::npos) << legend;
  ab::RunRecord record = testing::synthetic_record();
  for (ab::PointNoise& noise : record.analysis->noise) noise.flagged = false;
  EXPECT_EQ(svg_of(record).find("FLAGGED"), std::string::npos);
}

TEST(ThroughputSvg, EscapesNamesAndSurvivesAnEmptyRecord) {
  ab::RunRecord record = testing::synthetic_record();
  record.arms[2].name = "a<b & \"c\"";
  record.experiment.name = "x<y";
  const std::string svg = svg_of(record);
  EXPECT_EQ(tag_balance_problem(svg), "");
  EXPECT_NE(svg.find("a&lt;b &amp; &quot;c&quot;"), std::string::npos);

  ab::RunRecord empty;
  empty.experiment.name = "empty";
  const std::string blank = svg_of(empty);
  EXPECT_EQ(tag_balance_problem(blank), "");
  EXPECT_NE(blank.find("no samples yet"), std::string::npos);
  EXPECT_EQ(count(blank, "<polyline"), 0);
}

TEST(ThroughputSvg, OnePointAndLinearScales) {
  ab::RunRecord record = testing::synthetic_record({1000, 1100, 1200, 1300});
  const std::string svg = svg_of(record);
  EXPECT_EQ(tag_balance_problem(svg), "");
  EXPECT_EQ(svg.find("sequences/s, log scale"), std::string::npos);  // spans less than 4×

  record.points.resize(1);
  std::erase_if(record.samples, [](const ab::Sample& sample) { return sample.point > 0; });
  record.analysis->noise.resize(1);
  for (auto& variant : record.analysis->variants) variant.points.resize(1);
  const std::string single = svg_of(record);
  EXPECT_EQ(tag_balance_problem(single), "");
  EXPECT_EQ(single.find("nan"), std::string::npos);
  EXPECT_EQ(single.find("inf"), std::string::npos);
  EXPECT_EQ(count(single, "<rect class=\"band\""), 6);  // a lone point's band is a bar
}

// The medians the plot draws: every arm's at every point, over its non-throttled samples.
std::vector<double> plotted_medians(const ab::RunRecord& record) {
  std::vector<double> medians;
  for (std::size_t p = 0; p < record.points.size(); ++p) {
    for (std::size_t a = 0; a < record.arms.size(); ++a) {
      const double median = arm_median(record, static_cast<int>(p), static_cast<int>(a));
      if (std::isfinite(median)) medians.push_back(median);
    }
  }
  return medians;
}

// A baseline from 3,000 to 13,500 (variants reach about 2,600 and 14,600): a log axis spanning
// less than a decade, where 1-2-5 ticks inside the data's range are only 5k and 10k. The labels
// must reach out to 2k and 20k, the nearest 1-2-5 values beyond the data.
TEST(ThroughputSvg, LogAxisHasMoreThanTwoNiceLabelsCoveringTheData) {
  const ab::RunRecord record = testing::synthetic_record({3000, 6000, 10000, 13500});
  const std::string svg = svg_of(record);
  ASSERT_NE(svg.find("sequences/s, log scale"), std::string::npos);
  const std::vector<testing::AxisTick> ticks = testing::value_ticks(svg, testing::parse_si);
  ASSERT_GT(ticks.size(), 2u);
  std::vector<double> values;
  for (const testing::AxisTick& tick : ticks) values.push_back(tick.value);
  EXPECT_EQ(values, (std::vector<double>{2000, 5000, 10000, 20000}));
  const std::vector<double> medians = plotted_medians(record);
  EXPECT_LE(values.front(), *std::min_element(medians.begin(), medians.end()));
  EXPECT_GE(values.back(), *std::max_element(medians.begin(), medians.end()));
  // Up the page: a larger value is higher, at a smaller y.
  for (std::size_t i = 1; i < ticks.size(); ++i) EXPECT_LT(ticks[i].pixel, ticks[i - 1].pixel);
}

// A linear axis (1,000 to 1,300, less than 4×): equal steps of 1, 2 or 5 × 10^k, 4 to 7 labels,
// from at most the lowest median to at least the highest.
TEST(ThroughputSvg, LinearAxisHasNiceEvenlySpacedLabelsCoveringTheData) {
  const ab::RunRecord record = testing::synthetic_record({1000, 1100, 1200, 1300});
  const std::string svg = svg_of(record);
  const std::vector<testing::AxisTick> ticks = testing::value_ticks(svg, testing::parse_si);
  ASSERT_GE(ticks.size(), 4u);
  EXPECT_LE(ticks.size(), 7u);
  const double step = ticks[1].value - ticks[0].value;
  EXPECT_TRUE(testing::is_nice_step(step)) << step;
  for (std::size_t i = 1; i < ticks.size(); ++i) {
    EXPECT_NEAR(ticks[i].value - ticks[i - 1].value, step, step * 1e-9);
    EXPECT_NEAR(std::fmod(ticks[i].value, step), 0, step * 1e-9);
  }
  const std::vector<double> medians = plotted_medians(record);
  EXPECT_LE(ticks.front().value, *std::min_element(medians.begin(), medians.end()));
  EXPECT_GE(ticks.back().value, *std::max_element(medians.begin(), medians.end()));
}

// Writes the sample report to $MLALAB_REPORT_SAMPLE_DIR when it is set, to look at by eye.
TEST(ThroughputSvg, WritesASampleWhenAsked) {
  const char* dir = std::getenv("MLALAB_REPORT_SAMPLE_DIR");
  if (dir == nullptr) GTEST_SKIP() << "MLALAB_REPORT_SAMPLE_DIR is not set";
  write_report(testing::synthetic_record(), dir);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / "throughput.svg"));
}

}  // namespace
}  // namespace mlalab::report
