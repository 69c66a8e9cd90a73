#include "report/throughput_svg.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "report/report_writer.h"
#include "report/synthetic_record.h"

namespace mlalab::report {
namespace {

std::string svg_of(const ab::RunRecord& record) {
  std::ostringstream out;
  ThroughputSvg().write(record, out);
  return out.str();
}

// Checks that every tag closes in order; returns the first problem, or "" when well-formed.
std::string tag_balance_problem(const std::string& svg) {
  static const std::regex kTag(R"(<(/?)([A-Za-z][A-Za-z0-9:-]*)([^<>]*?)(/?)>)");
  std::vector<std::string> open;
  std::size_t tags = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), kTag); it != std::sregex_iterator();
       ++it) {
    const std::smatch& tag = *it;
    ++tags;
    if (tag[4].length() > 0) continue;  // <empty/>
    if (tag[1].length() == 0) {
      open.push_back(tag[2]);
    } else if (open.empty() || open.back() != tag[2]) {
      return "unexpected </" + tag[2].str() + ">";
    } else {
      open.pop_back();
    }
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  if (tags == 0) return "no tags";
  return "";
}

int count(const std::string& text, const std::string& what) {
  int found = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++found;
  }
  return found;
}

TEST(ThroughputSvg, IsWellFormedWithOneLinePerMeasuredArm) {
  const ab::RunRecord record = testing::synthetic_record();
  const std::string svg = svg_of(record);
  EXPECT_EQ(tag_balance_problem(svg), "");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("width=\"800\" height=\"500\""), std::string::npos);
  // A, A′ and the four valid variants have samples; the INVALID arm has none.
  EXPECT_EQ(count(svg, "<polyline"), 6);
  for (const char* arm : {"baseline", "baseline (A′)", "8 warps", "3 stages", "same code",
                          "4 stages"}) {
    EXPECT_NE(svg.find(std::string("data-arm=\"") + arm + "\""), std::string::npos) << arm;
  }
  EXPECT_EQ(count(svg, "stroke-dasharray"), 2);  // A′'s line and its legend sample
  // Bands: the baseline's and each valid variant's, as one polygon per arm here.
  EXPECT_EQ(count(svg, "<polygon class=\"band\""), 5);
  // Legend, title, axes.
  EXPECT_NE(svg.find("broken (INVALID)"), std::string::npos);
  EXPECT_NE(svg.find("warps_and_stages: throughput against concurrency"), std::string::npos);
  EXPECT_NE(svg.find("concurrency (requests per batch), log scale"), std::string::npos);
  EXPECT_NE(svg.find("throughput (sequences/s, log scale)"), std::string::npos);
  EXPECT_NE(svg.find(">64</text>"), std::string::npos);
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
  EXPECT_EQ(count(single, "<rect class=\"band\""), 5);  // a lone point's band is a bar
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
