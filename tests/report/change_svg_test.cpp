#include "report/change_svg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "report/format.h"
#include "report/record_view.h"
#include "report/report_writer.h"
#include "report/svg_parsing.h"
#include "report/synthetic_record.h"

namespace mlalab::report {
namespace {

using testing::count;
using testing::Element;
using testing::elements;
using testing::tag_balance_problem;

std::string svg_of(const ab::RunRecord& record) { return testing::written_by(ChangeSvg(), record); }

// The part of the picture that draws the variant `name`: from its panel's opening tag to the
// next panel or the legend.
std::string panel_of(const std::string& svg, const std::string& name) {
  const std::size_t start = svg.find("<g class=\"panel\" data-variant=\"" + name + "\">");
  if (start == std::string::npos) return "";
  const std::size_t next_panel = svg.find("<g class=\"panel\"", start + 1);
  const std::size_t end = std::min(next_panel, svg.find("<g class=\"legend\"", start));
  return svg.substr(start, end - start);
}

// The legend's words, its wrapped lines joined by spaces.
std::string legend_text(const std::string& svg) {
  std::string text;
  for (const Element& line : elements(svg.substr(svg.find("<g class=\"legend\"")), "text")) {
    text += (text.empty() ? "" : " ") + line.text;
  }
  return text;
}

// The point groups of a panel by concurrency: <g class="point VERDICT" data-concurrency="C">.
std::map<int, Element> points_of(const std::string& panel) {
  std::map<int, Element> points;
  for (Element& group : elements(panel, "g")) {
    const std::string css = group.attributes["class"];
    if (css.rfind("point ", 0) != 0) continue;
    const int concurrency = std::stoi(group.attributes.at("data-concurrency"));
    EXPECT_EQ(points.count(concurrency), 0u) << "two markers at C" << concurrency;
    points[concurrency] = group;
  }
  return points;
}

std::string css_class_of(ab::PointVerdict verdict) {
  switch (verdict) {
    case ab::PointVerdict::kFaster:
      return "faster";
    case ab::PointVerdict::kSlower:
      return "slower";
    case ab::PointVerdict::kWithinNoise:
      return "within_noise";
    case ab::PointVerdict::kSmallChange:
      return "small_change";
    case ab::PointVerdict::kAmbiguous:
      return "ambiguous";
    case ab::PointVerdict::kWithheld:
      return "withheld";
  }
  return "";
}

// The panel's value → pixel map, read back from its first and last tick: the value at `pixel`.
double value_at(const std::string& panel, double pixel) {
  const std::vector<testing::AxisTick> ticks = testing::value_ticks(panel, testing::parse_percent);
  EXPECT_GE(ticks.size(), 2u);
  if (ticks.size() < 2) return std::nan("");
  const testing::AxisTick& low = ticks.front();
  const testing::AxisTick& high = ticks.back();
  return low.value + (pixel - low.pixel) * (high.value - low.value) / (high.pixel - low.pixel);
}

// What one pixel is worth in %, with the one-decimal rounding of the coordinates: the
// tolerance of a value read back.
double tolerance(const std::string& panel) {
  const std::vector<testing::AxisTick> ticks = testing::value_ticks(panel, testing::parse_percent);
  return 0.15 * std::abs((ticks.back().value - ticks.front().value) /
                         (ticks.back().pixel - ticks.front().pixel));
}

TEST(ChangeSvg, IsWellFormedWithOnePanelPerAnalysedVariant) {
  const ab::RunRecord record = testing::synthetic_record();
  const std::string svg = svg_of(record);
  EXPECT_EQ(tag_balance_problem(svg), "");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("warps_and_stages: change against the baseline"), std::string::npos);
  EXPECT_EQ(count(svg, "<g class=\"panel\""), 5);
  for (const ab::VariantResult& variant : record.analysis->variants) {
    EXPECT_NE(panel_of(svg, variant.name), "") << variant.name;
    EXPECT_NE(svg.find(variant.name + "</tspan>: " + std::string(ab::to_string(variant.verdict))),
              std::string::npos)
        << variant.name;
  }
  // The INVALID arm has no analysis: named, not drawn.
  EXPECT_EQ(panel_of(svg, "broken"), "");
  EXPECT_NE(legend_text(svg).find("Not plotted: broken (INVALID)."), std::string::npos);
  EXPECT_NE(svg.find("change vs baseline, % (+ = faster)"), std::string::npos);
  EXPECT_NE(svg.find("concurrency (requests per batch), log scale"), std::string::npos);
  // Concurrency labels under the bottom panel only.
  EXPECT_EQ(count(svg, "class=\"tick-x\""), 4);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(ChangeSvg, OneMarkerPerMeasuredPointWithItsVerdict) {
  const ab::RunRecord record = testing::synthetic_record();
  const std::string svg = svg_of(record);
  std::set<std::string> verdicts_seen;
  int measured = 0;
  for (const ab::VariantResult& variant : record.analysis->variants) {
    const std::map<int, Element> points = points_of(panel_of(svg, variant.name));
    EXPECT_EQ(points.size(), variant.points.size()) << variant.name;
    for (const ab::PointResult& point : variant.points) {
      ++measured;
      ASSERT_EQ(points.count(point.concurrency), 1u) << variant.name << " C" << point.concurrency;
      const Element& group = points.at(point.concurrency);
      const std::string verdict = css_class_of(point.judgement.verdict);
      EXPECT_EQ(group.attributes.at("class"), "point " + verdict);
      verdicts_seen.insert(verdict);
      EXPECT_EQ(count(group.text, "class=\"marker\""), 1);
      EXPECT_NE(group.text.find(std::string(ab::to_string(point.judgement.verdict))),
                std::string::npos);  // in the tooltip
    }
  }
  EXPECT_EQ(count(svg, "<g class=\"point "), measured);
  // The synthetic record has every verdict, so each marker kind was checked.
  EXPECT_EQ(verdicts_seen, (std::set<std::string>{"faster", "slower", "within_noise",
                                                  "small_change", "ambiguous", "withheld"}));
}

// Each error bar's ends, read back through the panel's tick labels, are its interval's ends,
// with a cap at each.
TEST(ChangeSvg, ErrorBarsSpanTheIntervals) {
  const ab::RunRecord record = testing::synthetic_record();
  const std::string svg = svg_of(record);
  for (const ab::VariantResult& variant : record.analysis->variants) {
    const std::string panel = panel_of(svg, variant.name);
    const std::map<int, Element> points = points_of(panel);
    for (const ab::PointResult& point : variant.points) {
      const std::string& group = points.at(point.concurrency).text;
      const std::vector<Element> bars = elements(group, "line", "interval");
      ASSERT_EQ(bars.size(), 1u);
      const ab::Interval& interval = point.evidence.change.interval_pct;
      EXPECT_NEAR(value_at(panel, bars[0].number("y1")), interval.upper, tolerance(panel))
          << variant.name << " C" << point.concurrency;
      EXPECT_NEAR(value_at(panel, bars[0].number("y2")), interval.lower, tolerance(panel))
          << variant.name << " C" << point.concurrency;
      EXPECT_EQ(elements(group, "line", "cap").size(), 2u);
    }
  }
}

// The band is ±T, the same at every point: one rectangle across each panel, from −T to +T.
TEST(ChangeSvg, ThresholdBandIsPlusMinusTAcrossThePanel) {
  const ab::RunRecord record = testing::synthetic_record();
  const std::string svg = svg_of(record);
  const double threshold = record.experiment.stats.min_effect_pct;
  for (const ab::VariantResult& variant : record.analysis->variants) {
    const std::string panel = panel_of(svg, variant.name);
    const std::vector<Element> bands = elements(panel, "rect", "threshold-band");
    ASSERT_EQ(bands.size(), 1u) << variant.name;
    const Element& band = bands.front();
    const double top = band.number("y");
    const double bottom = top + band.number("height");
    EXPECT_NEAR(value_at(panel, top), threshold, tolerance(panel));
    EXPECT_NEAR(value_at(panel, bottom), -threshold, tolerance(panel));
    // From the frame's left edge to its right, where the zero line runs.
    const Element zero = elements(panel, "line", "zero").front();
    EXPECT_EQ(band.number("x"), zero.number("x1"));
    EXPECT_NEAR(band.number("x") + band.number("width"), zero.number("x2"), 0.1);
  }
}

// The synthetic predictions: 8 warps +20 %, 3 stages +5 %, 4 stages +3 %, 32 heads +4 %, same
// code none.
TEST(ChangeSvg, DashedPredictionOnlyWhereThereIsOne) {
  const ab::RunRecord record = testing::synthetic_record();
  const std::string svg = svg_of(record);
  EXPECT_EQ(count(svg, "class=\"prediction\""), 4);
  for (const ab::ArmRecord& arm : record.arms) {
    if (arm.role != ab::ArmRole::kVariant || !arm.valid) continue;
    const std::string panel = panel_of(svg, arm.name);
    const std::vector<Element> lines = elements(panel, "line", "prediction");
    if (!arm.arm.prediction_pct) {
      EXPECT_TRUE(lines.empty()) << arm.name;
      EXPECT_EQ(panel.find("predicted"), std::string::npos);
      EXPECT_NE(panel.find("no prediction"), std::string::npos);
      continue;
    }
    ASSERT_EQ(lines.size(), 1u) << arm.name;
    EXPECT_EQ(lines[0].attributes.at("stroke-dasharray"), "6 4");
    EXPECT_EQ(lines[0].attributes.at("y1"), lines[0].attributes.at("y2"));
    EXPECT_NEAR(value_at(panel, lines[0].number("y1")), *arm.arm.prediction_pct,
                tolerance(panel));
    const std::vector<Element> labels = elements(panel, "text", "prediction-label");
    ASSERT_EQ(labels.size(), 1u);
    EXPECT_EQ(labels[0].text, "predicted " + short_percent(*arm.arm.prediction_pct));
  }
  // Zero is drawn in every panel.
  EXPECT_EQ(count(svg, "class=\"zero\""), 5);
}

TEST(ChangeSvg, LegendShowsEveryVerdictAndTheMarks) {
  const std::string svg = svg_of(testing::synthetic_record());
  const std::string legend = svg.substr(svg.find("<g class=\"legend\""));
  for (const char* verdict :
       {"faster", "slower", "within_noise", "small_change", "ambiguous", "withheld"}) {
    const std::string entry = std::string("<g class=\"legend-entry ") + verdict + "\">";
    ASSERT_NE(legend.find(entry), std::string::npos) << verdict;
    EXPECT_NE(legend.find("class=\"marker\"", legend.find(entry)), std::string::npos);
  }
  for (const char* label : {">FASTER<", ">SLOWER<", ">WITHIN_NOISE<", ">SMALL_CHANGE<",
                            ">AMBIGUOUS<", ">WITHHELD<", ">95% interval<", ">±threshold<",
                            ">prediction<"}) {
    EXPECT_NE(legend.find(label), std::string::npos) << label;
  }
}

// Each verdict has its own marker: shape and colour, so that it reads without colour too.
TEST(ChangeSvg, EveryVerdictHasItsOwnMarker) {
  const std::string svg = svg_of(testing::synthetic_record());
  const std::string legend = svg.substr(svg.find("<g class=\"legend\""));
  std::set<std::string> shapes_and_colours;
  for (const char* verdict :
       {"faster", "slower", "within_noise", "small_change", "ambiguous", "withheld"}) {
    const std::string entry = legend.substr(
        legend.find(std::string("<g class=\"legend-entry ") + verdict + "\">"));
    const std::string drawn = entry.substr(0, entry.find("</g>"));
    std::string marker;
    for (const char* shape : {"path", "circle", "rect"}) {
      for (const Element& element : elements(drawn, shape, "marker")) {
        marker = std::string(shape) + " " + element.attributes.at("fill") + " " +
                 element.attributes.at("stroke");
      }
    }
    EXPECT_FALSE(marker.empty()) << verdict;
    shapes_and_colours.insert(marker);
  }
  EXPECT_EQ(shapes_and_colours.size(), 6u);
}

// The legend's note says what the threshold is now: min_effect_pct itself, at every point.
TEST(ChangeSvg, LegendSaysTheThresholdIsTheMinimumEffectAtEveryPoint) {
  const std::string legend = legend_text(svg_of(testing::synthetic_record()));
  EXPECT_NE(legend.find("Threshold: ±2% (min_effect_pct) at every point. FASTER or SLOWER: "
                        "beyond it by the test corrected for looks and points; WITHIN_NOISE: "
                        "the interval inside it and around 0; SMALL_CHANGE: inside it, away "
                        "from 0; WITHHELD: the A/A check failed."),
            std::string::npos)
      << legend;
  EXPECT_EQ(legend.find("A/A band"), std::string::npos);
}

// Every panel has the shared scale: more than two labels, 1-2-5 steps, covering every
// estimate, interval end, threshold and prediction.
TEST(ChangeSvg, TicksAreNiceAndCoverTheData) {
  const ab::RunRecord record = testing::synthetic_record();
  const std::string svg = svg_of(record);
  double lowest = 0;
  double highest = 0;
  for (const ab::VariantResult& variant : record.analysis->variants) {
    for (const ab::PointResult& point : variant.points) {
      const ab::Interval& interval = point.evidence.change.interval_pct;
      lowest = std::min({lowest, interval.lower, -point.evidence.threshold_pct});
      highest = std::max({highest, interval.upper, point.evidence.threshold_pct});
    }
  }
  for (const ab::ArmRecord& arm : record.arms) {
    if (arm.arm.prediction_pct) highest = std::max(highest, *arm.arm.prediction_pct);
  }
  for (const ab::VariantResult& variant : record.analysis->variants) {
    const std::vector<testing::AxisTick> ticks =
        testing::value_ticks(panel_of(svg, variant.name), testing::parse_percent);
    ASSERT_GT(ticks.size(), 2u);
    EXPECT_LE(ticks.size(), 7u);
    const double step = ticks[1].value - ticks[0].value;
    EXPECT_TRUE(testing::is_nice_step(step)) << step;
    for (std::size_t i = 1; i < ticks.size(); ++i) {
      EXPECT_NEAR(ticks[i].value - ticks[i - 1].value, step, 1e-9);
      EXPECT_LT(ticks[i].pixel, ticks[i - 1].pixel);
    }
    EXPECT_LE(ticks.front().value, lowest);
    EXPECT_GE(ticks.back().value, highest);
  }
}

// A point the analysis has not (no result, or no paired rounds) draws nothing there: no
// marker, no error bar; the other panels keep theirs.
TEST(ChangeSvg, APointNotMeasuredIsAbsent) {
  ab::RunRecord record = testing::synthetic_record();
  std::vector<ab::PointResult>& eight_warps = record.analysis->variants[0].points;
  std::erase_if(eight_warps, [](const ab::PointResult& point) { return point.concurrency == 16; });
  ab::PointResult& three_stages_c4 = record.analysis->variants[1].points[1];
  ASSERT_EQ(three_stages_c4.concurrency, 4);
  three_stages_c4.evidence.change = ab::Change{};  // no paired rounds: NaN, infinite interval
  const std::string svg = svg_of(record);
  EXPECT_EQ(tag_balance_problem(svg), "");

  const std::string eight = panel_of(svg, "8 warps");
  EXPECT_EQ(points_of(eight).size(), 3u);
  EXPECT_EQ(eight.find("data-concurrency=\"16\""), std::string::npos);
  const std::string three = panel_of(svg, "3 stages");
  EXPECT_EQ(points_of(three).size(), 3u);
  EXPECT_EQ(three.find("data-concurrency=\"4\""), std::string::npos);
  EXPECT_EQ(points_of(panel_of(svg, "same code")).count(16), 1u);
  EXPECT_EQ(count(svg, "<g class=\"point "), 18);  // 5 panels of 4 points, less 2
  EXPECT_EQ(svg.find("nan"), std::string::npos);
}

// An interval beyond twice the furthest estimate, threshold or prediction runs off the panel
// at that end, without a cap.
TEST(ChangeSvg, AnIntervalFarBeyondTheRestRunsOffThePanel) {
  ab::RunRecord record = testing::synthetic_record();
  record.analysis->variants[2].points[0].evidence.change.interval_pct.upper = 500;
  const std::string svg = svg_of(record);
  const std::string panel = panel_of(svg, "same code");
  const std::string group = points_of(panel).at(1).text;
  EXPECT_EQ(elements(group, "line", "cap").size(), 1u);
  const std::vector<testing::AxisTick> ticks = testing::value_ticks(panel, testing::parse_percent);
  EXPECT_LT(ticks.back().value, 100);  // the scale did not stretch to 500 %
  EXPECT_LT(elements(group, "line", "interval")[0].number("y1"), ticks.back().pixel);
}

TEST(ChangeSvg, SaysThereIsNothingToPlotWithoutAnalysis) {
  ab::RunRecord record = testing::synthetic_record();
  record.analysis.reset();
  for (const ab::RunRecord& empty : {record, ab::RunRecord{}}) {
    const std::string svg = svg_of(empty);
    EXPECT_EQ(tag_balance_problem(svg), "");
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_NE(svg.find("nothing to plot: no analysis yet"), std::string::npos);
    EXPECT_EQ(count(svg, "<g class=\"point "), 0);
    EXPECT_EQ(svg.find("nan"), std::string::npos);
  }
}

TEST(ChangeSvg, ALatencyIsPlottedAsTheReportSignsIt) {
  ab::RunRecord record = testing::synthetic_record();
  record.analysis->direction = ab::Direction::kLowerIsBetter;
  const std::string svg = svg_of(record);
  EXPECT_NE(svg.find("change vs baseline, % (+ = faster)"), std::string::npos);
  EXPECT_NE(legend_text(svg).find(
                "The metric is a latency: changes are of its inverse, so + is faster"),
            std::string::npos);
}

TEST(ChangeSvg, EscapesNames) {
  ab::RunRecord record = testing::synthetic_record();
  record.arms[2].name = "a<b & \"c\"";
  record.analysis->variants[0].name = record.arms[2].name;
  const std::string svg = svg_of(record);
  EXPECT_EQ(tag_balance_problem(svg), "");
  EXPECT_NE(svg.find("data-variant=\"a&lt;b &amp; &quot;c&quot;\""), std::string::npos);
}

// Writes change.svg of the sample record to $MLALAB_REPORT_SAMPLE_DIR when it is set, to look at
// by eye.
TEST(ChangeSvg, WritesASampleWhenAsked) {
  const char* dir = std::getenv("MLALAB_REPORT_SAMPLE_DIR");
  if (dir == nullptr) GTEST_SKIP() << "MLALAB_REPORT_SAMPLE_DIR is not set";
  std::filesystem::create_directories(dir);
  write_file(ChangeSvg(), testing::synthetic_record(), dir);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / "change.svg"));
}

}  // namespace
}  // namespace mlalab::report
