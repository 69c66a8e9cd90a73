#include "report/results_json.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ab/stats.h"
#include "report/format.h"
#include "report/markdown_report.h"
#include "report/synthetic_record.h"

namespace mlalab::report {
namespace {

const ab::RunRecord& analysed() {
  static const ab::RunRecord record = testing::synthetic_record();
  return record;
}

std::string written(const ab::RunRecord& record) {
  std::ostringstream out;
  ResultsJson().write(record, out);
  return out.str();
}

// The median as another tool would compute it from the file: non-throttled values of one arm
// at one point; the mean of the middle two for an even count.
double median_from_json(const nlohmann::json& json, int point, int arm) {
  std::vector<double> values;
  for (const auto& sample : json["samples"]) {
    if (sample["point"] == point && sample["arm"] == arm && !sample["throttled"].get<bool>()) {
      values.push_back(sample["value"].get<double>());
    }
  }
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int arm_named(const nlohmann::json& json, const std::string& name) {
  for (std::size_t a = 0; a < json["arms"].size(); ++a) {
    if (json["arms"][a]["name"] == name) return static_cast<int>(a);
  }
  return -1;
}

TEST(ResultsJson, HasTheSchemaAndEveryRawSample) {
  const ab::RunRecord& record = analysed();
  const auto json = nlohmann::json::parse(written(record));
  EXPECT_EQ(json["schema"], std::string(kResultsSchema));
  EXPECT_TRUE(json["schema_notes"].is_string());
  ASSERT_EQ(json["samples"].size(), record.samples.size());
  for (std::size_t i = 0; i < record.samples.size(); ++i) {
    const ab::Sample& sample = record.samples[i];
    const auto& row = json["samples"][i];
    EXPECT_EQ(row["point"], sample.point);
    EXPECT_EQ(row["round"], sample.round);
    EXPECT_EQ(row["order"], sample.order);
    EXPECT_EQ(row["arm"], sample.arm);
    EXPECT_EQ(row["value"].get<double>(), sample.value);  // exactly: shortest round-trip digits
    EXPECT_EQ(row["time_us"].get<double>(), sample.time_us);
    EXPECT_EQ(row["sm_clock_mhz"], sample.sm_clock_mhz);
    EXPECT_EQ(row["throttled"], sample.throttled);
  }
  EXPECT_EQ(json["experiment"]["source_text"], testing::kSourceText);
  EXPECT_FALSE(json["experiment"]["stats"].contains("resamples")) << "nothing is resampled";
  EXPECT_EQ(json["experiment"]["stats"]["min_rounds"], 10);
  EXPECT_EQ(json["experiment"]["stats"]["max_rounds"], 20);
  EXPECT_EQ(json["experiment"]["stats"]["correction"], "holm");
  EXPECT_EQ(json["environment"]["gpu"], "NVIDIA H200");
  EXPECT_EQ(json["arms"][6]["valid"], false);
  EXPECT_EQ(json["points"][3]["stop_reason"], "round_budget_spent");
  EXPECT_EQ(json["points"][3]["context_lengths"].size(), 64u);
  EXPECT_EQ(json["partial"], false);
}

TEST(ResultsJson, SamplesComeOnePerLine) {
  const std::string text = written(analysed());
  EXPECT_NE(text.find("\n    {\"point\":0,\"round\":0,\"order\":0,\"arm\":0,\"value\":"),
            std::string::npos);
}

TEST(ResultsJson, MediansRecomputedFromTheSamplesMatchTheReportedFigures) {
  const ab::RunRecord& record = analysed();
  const auto json = nlohmann::json::parse(written(record));
  const std::string markdown = [&] {
    std::ostringstream out;
    MarkdownReport().write(record, out);
    return out.str();
  }();
  const int baseline = arm_named(json, "baseline");
  for (std::size_t p = 0; p < json["points"].size(); ++p) {
    const auto& noise = json["analysis"]["noise"][p];
    ASSERT_EQ(noise["concurrency"], json["points"][p]["concurrency"]);
    const double median = median_from_json(json, static_cast<int>(p), baseline);
    EXPECT_DOUBLE_EQ(median, noise["baseline_median"].get<double>());
    // ... and it is the figure report.md prints.
    EXPECT_NE(markdown.find(quantity_text(median)), std::string::npos);
  }
  for (const auto& variant : json["analysis"]["variants"]) {
    const int arm = arm_named(json, variant["name"]);
    for (std::size_t p = 0; p < variant["points"].size(); ++p) {
      EXPECT_DOUBLE_EQ(median_from_json(json, static_cast<int>(p), arm),
                       variant["points"][p]["variant_median"].get<double>());
    }
  }
}

// The round-by-round ln(variant / baseline) at one point, as another tool would pair them from
// the file: the rounds in which both arms have a non-throttled sample.
std::vector<double> log_ratios_from_json(const nlohmann::json& json, int point, int variant,
                                         int baseline) {
  std::map<int, double> baseline_by_round;
  std::map<int, double> variant_by_round;
  for (const auto& sample : json["samples"]) {
    if (sample["point"] != point || sample["throttled"].get<bool>()) continue;
    const int round = sample["round"].get<int>();
    if (sample["arm"] == baseline) baseline_by_round[round] = sample["value"].get<double>();
    if (sample["arm"] == variant) variant_by_round[round] = sample["value"].get<double>();
  }
  std::vector<double> ratios;
  for (const auto& [round, value] : variant_by_round) {
    if (baseline_by_round.count(round) > 0) {
      ratios.push_back(std::log(value / baseline_by_round.at(round)));
    }
  }
  return ratios;
}

TEST(ResultsJson, ChangesFromTheSamplesMatchTheAnalysis) {
  // As schema_notes says: of the n = 20 paired log ratios d at C16 (none throttled), sorted,
  // g = floor(trim · n) are cut from each end; the estimate is the mean of the rest, its
  // standard error the winsorized standard deviation (each cut value replaced by the nearest
  // kept one) / ((1 − 2 · trim) · √n), with n − 2g − 1 degrees of freedom.
  const auto json = nlohmann::json::parse(written(analysed()));
  std::vector<double> d = log_ratios_from_json(json, 2, arm_named(json, "8 warps"),
                                               arm_named(json, "baseline"));
  ASSERT_EQ(d.size(), 20u);
  std::sort(d.begin(), d.end());
  const std::size_t n = d.size();
  const auto g = static_cast<std::size_t>(std::floor(ab::kTrimFraction * n));
  double kept_sum = 0;
  for (std::size_t i = g; i < n - g; ++i) kept_sum += d[i];
  const double estimate = kept_sum / static_cast<double>(n - 2 * g);
  std::vector<double> winsorized(d);
  for (std::size_t i = 0; i < g; ++i) {
    winsorized[i] = d[g];
    winsorized[n - 1 - i] = d[n - 1 - g];
  }
  double mean = 0;
  for (const double w : winsorized) mean += w / static_cast<double>(n);
  double squares = 0;
  for (const double w : winsorized) squares += (w - mean) * (w - mean);
  const double standard_error = std::sqrt(squares / static_cast<double>(n - 1)) /
                                ((1 - 2 * ab::kTrimFraction) * std::sqrt(static_cast<double>(n)));
  const int degrees_of_freedom = static_cast<int>(n - 2 * g - 1);
  const double t = ab::student_t_upper_quantile(0.025, degrees_of_freedom);

  const auto& point = json["analysis"]["variants"][0]["points"][2];
  EXPECT_EQ(point["concurrency"], 16);
  const auto& change = point["change"];
  EXPECT_EQ(change["paired_rounds"], 20);
  EXPECT_NEAR(change["change_pct"].get<double>(), (std::exp(estimate) - 1) * 100, 1e-9);
  EXPECT_NEAR(change["standard_error_log"].get<double>(), standard_error, 1e-12);
  EXPECT_EQ(change["degrees_of_freedom"], degrees_of_freedom);
  EXPECT_NEAR(change["lower_pct"].get<double>(),
              (std::exp(estimate - t * standard_error) - 1) * 100, 1e-9);
  EXPECT_NEAR(change["upper_pct"].get<double>(),
              (std::exp(estimate + t * standard_error) - 1) * 100, 1e-9);
  EXPECT_EQ(point["verdict"], "SLOWER");
}

// Every field the new statistics added is written, and reads back as it was.
TEST(ResultsJson, WritesAndReadsTheLooksTheAaCheckAndThePlanningFigures) {
  const ab::RunRecord& record = analysed();
  const auto json = nlohmann::json::parse(written(record));
  const auto& analysis = json["analysis"];
  // The synthetic settings look after 10 and 20 rounds.
  ASSERT_EQ(analysis["looks"].size(), 2u);
  EXPECT_EQ(analysis["looks"][0]["rounds"], 10);
  EXPECT_EQ(analysis["looks"][1]["rounds"], 20);
  EXPECT_DOUBLE_EQ(analysis["looks"][0]["alpha_share"].get<double>() +
                       analysis["looks"][1]["alpha_share"].get<double>(),
                   1.0);
  // C4's A′ drifts: its check is flagged there, and only there.
  for (std::size_t p = 0; p < 4; ++p) {
    const auto& noise = analysis["noise"][p];
    EXPECT_EQ(noise["flagged"], p == testing::kDriftingPoint) << p;
    EXPECT_EQ(noise["p_check"].get<double>(), record.analysis->noise[p].p_check);
  }
  const int accepted = 4;  // "32 heads", the last of the 5 analysed variants
  ASSERT_EQ(analysis["variants"][accepted]["name"], "32 heads");
  const auto& points = analysis["variants"][accepted]["points"];
  EXPECT_EQ(points[1]["verdict"], "WITHHELD");
  EXPECT_EQ(points[2]["verdict"], "SMALL_CHANGE");
  EXPECT_EQ(points[3]["verdict"], "AMBIGUOUS");
  const ab::PointResult& ambiguous = record.analysis->variants[accepted].points[3];
  ASSERT_TRUE(ambiguous.judgement.rounds_to_settle);
  EXPECT_EQ(points[3]["rounds_to_settle"], *ambiguous.judgement.rounds_to_settle);
  EXPECT_TRUE(points[2]["rounds_to_settle"].is_null()) << "settled: nothing to advise";
  EXPECT_EQ(points[2]["p_within"].get<double>(),
            record.analysis->variants[accepted].points[2].evidence.p_within);
  EXPECT_EQ(points[2]["looks"], 2);
  EXPECT_EQ(points[2]["mde_pct"].get<double>(),
            record.analysis->variants[accepted].points[2].evidence.mde_pct);

  const ab::RunRecord back = record_from_json(json);
  ASSERT_TRUE(back.analysis);
  ASSERT_EQ(back.analysis->looks.size(), 2u);
  EXPECT_EQ(back.analysis->looks[1].rounds, 20);
  EXPECT_EQ(back.analysis->looks[1].alpha_share, record.analysis->looks[1].alpha_share);
  EXPECT_TRUE(back.analysis->noise[testing::kDriftingPoint].flagged);
  EXPECT_EQ(back.analysis->noise[0].p_check, record.analysis->noise[0].p_check);
  const ab::PointResult& small = back.analysis->variants[accepted].points[2];
  EXPECT_EQ(small.judgement.verdict, ab::PointVerdict::kSmallChange);
  EXPECT_EQ(small.evidence.p_within,
            record.analysis->variants[accepted].points[2].evidence.p_within);
  EXPECT_EQ(small.evidence.looks, 2);
  EXPECT_EQ(small.evidence.mde_pct, record.analysis->variants[accepted].points[2].evidence.mde_pct);
  EXPECT_EQ(small.evidence.change.standard_error_log,
            record.analysis->variants[accepted].points[2].evidence.change.standard_error_log);
  EXPECT_EQ(small.evidence.change.degrees_of_freedom,
            record.analysis->variants[accepted].points[2].evidence.change.degrees_of_freedom);
  EXPECT_EQ(back.analysis->variants[accepted].points[3].judgement.rounds_to_settle,
            ambiguous.judgement.rounds_to_settle);
}

// schema_notes describes the statistics that computed the file, and what older files lose.
TEST(ResultsJson, SchemaNotesDescribeTheNewStatistics) {
  const std::string notes = nlohmann::json::parse(written(analysed()))["schema_notes"];
  for (const std::string& expected :
       {fmt::format("{:g}% trimmed mean of the n values d", 100 * ab::kTrimFraction),
        std::string("t(1 - alpha/2, degrees_of_freedom = n - 2g - 1)"),
        std::string("O'Brien-Fleming-type spending function"),
        std::string("the smallest over the point's looks of p / alpha_share"),
        std::string("noise[].p_check is the A/A comparison's look-adjusted p_value"),
        std::string("SMALL_CHANGE when p_within <= alpha and it does not"),
        std::string("mde_pct is the minimum detectable effect"),
        std::string("the analysis of files before schema 3 is not read: their samples can be "
                    "analysed again")}) {
    EXPECT_NE(notes.find(expected), std::string::npos) << expected;
  }
  EXPECT_EQ(notes.find("bootstrap over"), std::string::npos);
  EXPECT_EQ(notes.find("resamples"), std::string::npos);
}

TEST(ResultsJson, RoundTripsTheWholeRecord) {
  const ab::RunRecord& record = analysed();
  const ab::RunRecord back = record_from_json(nlohmann::json::parse(written(record)));
  ASSERT_EQ(back.samples.size(), record.samples.size());
  for (std::size_t i = 0; i < record.samples.size(); ++i) {
    EXPECT_EQ(back.samples[i].value, record.samples[i].value);
    EXPECT_EQ(back.samples[i].throttled, record.samples[i].throttled);
    EXPECT_EQ(back.samples[i].arm, record.samples[i].arm);
  }
  EXPECT_EQ(back.experiment.variants.size(), record.experiment.variants.size());
  EXPECT_EQ(back.experiment.variants[0].prediction_pct, 20.0);
  EXPECT_FALSE(back.experiment.variants[2].prediction_pct);
  EXPECT_EQ(back.arms[6].invalid_reason, record.arms[6].invalid_reason);
  ASSERT_TRUE(back.analysis);
  EXPECT_EQ(back.analysis->variants[1].verdict, ab::VariantVerdict::kMixed);
  // Everything a printer reads came back: the file written again is the same file.
  EXPECT_EQ(written(back), written(record));
  std::ostringstream before, after;
  MarkdownReport().write(record, before);
  MarkdownReport().write(back, after);
  EXPECT_EQ(after.str(), before.str());
}

TEST(ResultsJson, RoundTripsABalancedBaselinesWorkers) {
  ab::RunRecord record = analysed();
  record.points[0].splits = 1;
  record.points[0].workers = 66;
  const auto json = nlohmann::json::parse(written(record));
  EXPECT_EQ(json["points"][0]["workers"], 66);
  EXPECT_TRUE(json["points"][1]["workers"].is_null());  // a split launch
  const ab::RunRecord back = record_from_json(json);
  EXPECT_EQ(back.points[0].workers, 66);
  EXPECT_EQ(back.points[1].workers, 0);
  // A file written before the field existed reads as split launches.
  auto older = json;
  for (auto& point : older["points"]) point.erase("workers");
  EXPECT_EQ(record_from_json(older).points[0].workers, 0);
}

TEST(ResultsJson, RoundTripsThePowerReadingsAndTheReportShowsThem) {
  ab::RunRecord record = analysed();
  record.environment.power_limit_w = 700;
  for (ab::Sample& sample : record.samples) sample.power_w = sample.point == 0 ? 612.5 : 694.0;
  record.samples.front().power_w = -1;  // a round whose reading failed
  const auto json = nlohmann::json::parse(written(record));
  EXPECT_EQ(json["environment"]["power_limit_w"], 700.0);
  EXPECT_TRUE(json["samples"][0]["power_w"].is_null());
  EXPECT_EQ(json["samples"][1]["power_w"], 612.5);
  const ab::RunRecord back = record_from_json(json);
  EXPECT_EQ(back.environment.power_limit_w, 700.0);
  EXPECT_EQ(back.samples[0].power_w, -1.0);
  EXPECT_EQ(back.samples[1].power_w, 612.5);
  EXPECT_EQ(written(back), written(record));

  std::ostringstream report;
  MarkdownReport().write(record, report);
  EXPECT_NE(report.str().find("power limit 700 W"), std::string::npos);
  // Point 0's median is 612.5 (printed to the watt), point 1's 694, within 3 % of 700.
  EXPECT_NE(report.str().find(" 612 W |"), std::string::npos) << report.str();
  EXPECT_NE(report.str().find(" 694 W (at the limit) |"), std::string::npos);

  // A file written before the readings existed: unknown, and the report says so.
  auto older = json;
  older["environment"].erase("power_limit_w");
  for (auto& sample : older["samples"]) sample.erase("power_w");
  const ab::RunRecord old_back = record_from_json(older);
  EXPECT_EQ(old_back.environment.power_limit_w, -1.0);
  EXPECT_EQ(old_back.samples[1].power_w, -1.0);
  std::ostringstream old_report;
  MarkdownReport().write(old_back, old_report);
  EXPECT_NE(old_report.str().find("power limit unknown"), std::string::npos);
  EXPECT_EQ(old_report.str().find(" W |"), std::string::npos);
}

TEST(ResultsJson, RoundTripsInstancesPerArmAndTheReportSaysThem) {
  ab::RunRecord record = analysed();
  record.experiment.measure.instances_per_arm = 5;
  const auto json = nlohmann::json::parse(written(record));
  EXPECT_EQ(json["experiment"]["measure"]["instances_per_arm"], 5);
  const ab::RunRecord back = record_from_json(json);
  EXPECT_EQ(back.experiment.measure.instances_per_arm, 5);
  EXPECT_EQ(written(back), written(record));
  std::ostringstream report;
  MarkdownReport().write(record, report);
  EXPECT_NE(report.str().find("Each arm is 5 instances"), std::string::npos)
      << report.str();

  // Files from before instances ran one per arm, and their report says so.
  auto older = json;
  older["experiment"]["measure"].erase("instances_per_arm");
  const ab::RunRecord old_back = record_from_json(older);
  EXPECT_EQ(old_back.experiment.measure.instances_per_arm, 1);
  std::ostringstream old_report;
  MarkdownReport().write(old_back, old_report);
  EXPECT_NE(old_report.str().find("Each arm is one CUDA graph and workspace."), std::string::npos);
}

TEST(ResultsJson, RoundTripsHeatAndTheReportSaysWhatItDid) {
  ab::RunRecord record = analysed();
  record.experiment.measure.heat_ms = 250;
  record.experiment.measure.throttle_fraction = 0;
  const auto json = nlohmann::json::parse(written(record));
  EXPECT_EQ(json["experiment"]["measure"]["heat_ms"], 250.0);
  const ab::RunRecord back = record_from_json(json);
  EXPECT_EQ(back.experiment.measure.heat_ms, 250.0);
  EXPECT_EQ(written(back), written(record));
  std::ostringstream report;
  MarkdownReport().write(record, report);
  EXPECT_NE(report.str().find("ran for 250 ms and were discarded"), std::string::npos)
      << report.str();

  // A run without the throttle check (CPU, commands) writes null: it reads back as the file's
  // default, which heat turns off.
  auto unchecked = json;
  unchecked["experiment"]["measure"]["throttle_fraction"] = nullptr;
  EXPECT_EQ(record_from_json(unchecked).experiment.measure.throttle_fraction, 0.0);
  unchecked["experiment"]["measure"]["heat_ms"] = 0.0;
  EXPECT_EQ(record_from_json(unchecked).experiment.measure.throttle_fraction, 0.9);

  // Files from before heat read as without it, and their report does not mention it.
  auto older = json;
  older["experiment"]["measure"].erase("heat_ms");
  const ab::RunRecord old_back = record_from_json(older);
  EXPECT_EQ(old_back.experiment.measure.heat_ms, 0.0);
  std::ostringstream old_report;
  MarkdownReport().write(old_back, old_report);
  EXPECT_EQ(old_report.str().find("Heat:"), std::string::npos);
}

TEST(ResultsJson, RoundTripsAPythonArmsBinaryHash) {
  ab::RunRecord record = analysed();
  record.arms[2].binary_hash = std::string(64, 'b');
  const auto json = nlohmann::json::parse(written(record));
  EXPECT_EQ(json["arms"][2]["binary_hash"], std::string(64, 'b'));
  EXPECT_TRUE(json["arms"][3]["binary_hash"].is_null());  // none known
  EXPECT_EQ(record_from_json(json).arms[2].binary_hash, std::string(64, 'b'));
  // The report shows it beside the code hash.
  std::ostringstream report;
  MarkdownReport().write(record, report);
  EXPECT_NE(report.str().find("binaries `bbbbbbbbbbbb`"), std::string::npos);
  // A file written before the field existed has none.
  auto older = json;
  for (auto& arm : older["arms"]) arm.erase("binary_hash");
  EXPECT_EQ(record_from_json(older).arms[2].binary_hash, "");
}

TEST(ResultsJson, RoundTripsUnboundedIntervalsAndCommandArms) {
  ab::RunRecord record = analysed();
  record.analysis->noise[0].a_a.interval_pct = {};  // −∞ … +∞
  record.analysis->variants[0].points[0].evidence.change.change_pct = std::nan("");
  record.experiment.variants[0].config =
      ab::CommandArm{.command = "bench --model x", .env = {{"A", "1"}}, .metric_regex = "(\\d+)",
                     .direction = ab::Direction::kLowerIsBetter, .timeout_s = 30};
  record.analysis->variants[0].points[0].evidence.change.standard_error_log = ab::Change{}
      .standard_error_log;  // +∞: no testable estimate
  record.analysis->variants[0].points[0].evidence.mde_pct = ab::PointEvidence{}.mde_pct;
  const auto json = nlohmann::json::parse(written(record));
  EXPECT_TRUE(json["analysis"]["variants"][0]["points"][0]["mde_pct"].is_null());
  EXPECT_TRUE(
      json["analysis"]["variants"][0]["points"][0]["change"]["standard_error_log"].is_null());
  const ab::RunRecord back = record_from_json(json);
  const ab::PointEvidence& evidence = back.analysis->variants[0].points[0].evidence;
  EXPECT_GT(evidence.mde_pct, 0);
  EXPECT_TRUE(std::isinf(evidence.mde_pct));
  EXPECT_GT(evidence.change.standard_error_log, 0);
  EXPECT_TRUE(std::isinf(evidence.change.standard_error_log));
  EXPECT_TRUE(std::isinf(back.analysis->noise[0].a_a.interval_pct.lower));
  EXPECT_LT(back.analysis->noise[0].a_a.interval_pct.lower, 0);
  EXPECT_GT(back.analysis->noise[0].a_a.interval_pct.upper, 0);
  EXPECT_TRUE(std::isnan(back.analysis->variants[0].points[0].evidence.change.change_pct));
  const auto& command = std::get<ab::CommandArm>(back.experiment.variants[0].config);
  EXPECT_EQ(command.env.at("A"), "1");
  EXPECT_EQ(command.direction, ab::Direction::kLowerIsBetter);
}

TEST(ResultsJson, RoundTripsARecordWithoutAnalysis) {
  ab::RunRecord record = analysed();
  record.analysis.reset();
  const ab::RunRecord back = record_from_json(nlohmann::json::parse(written(record)));
  EXPECT_FALSE(back.analysis);
}

TEST(ResultsJson, ReadRefusesAnotherSchemaAndNamesAMissingField) {
  auto json = nlohmann::json::parse(written(analysed()));
  json["schema"] = "something/2";
  EXPECT_THROW(record_from_json(json), std::runtime_error);
  json["schema"] = std::string(kResultsSchema);
  json["experiment"]["sweep"].erase("heads");
  try {
    record_from_json(json);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("experiment.sweep.heads"), std::string::npos)
        << error.what();
  }
}

TEST(ResultsJson, ReadsAFile) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "mlalab_results_test.json";
  {
    std::ofstream out(path);
    ResultsJson().write(analysed(), out);
  }
  EXPECT_EQ(read_results_json(path).samples.size(), analysed().samples.size());
  std::filesystem::remove(path);
  EXPECT_THROW(read_results_json(path), std::runtime_error);
}

// ---- Nulls for what is unknown or does not apply ----------------------------------------------

// The synthetic record as the CPU backend would have run it: CPU arms, no GPU, no clock.
ab::RunRecord cpu_run() {
  ab::RunRecord record = analysed();
  record.experiment.backend = Backend::kCpu;
  const auto on_cpu = [](ab::Arm& arm, int threads) {
    arm.config = ab::KernelArm{.variant = ab::kCpuVariant, .split = {}, .cpu_threads = threads};
  };
  on_cpu(record.experiment.baseline, 2);
  for (ab::Arm& variant : record.experiment.variants) on_cpu(variant, 1);
  for (ab::ArmRecord& arm : record.arms) on_cpu(arm.arm, arm.role == ab::ArmRole::kVariant ? 1 : 2);
  record.environment = {};
  record.environment.backend = Backend::kCpu;
  record.environment.commit = "0123456789ab";
  record.environment.host = "vm";
  record.environment.cpu_model = "AMD EPYC 7B13";
  record.environment.hardware_threads = 2;
  record.environment.usable_cpus = 1;
  record.environment.load_at_start = {.load_1min = 0.34, .load_5min = 0.7, .load_15min = 0.4,
                                      .other_cpu_share = 0.25, .share_window_s = 0.5};
  record.environment.load_at_end = {.load_1min = 1.5, .load_5min = std::nullopt,
                                    .load_15min = std::nullopt, .other_cpu_share = std::nullopt,
                                    .share_window_s = 0.0};
  for (ab::Sample& sample : record.samples) {
    sample.sm_clock_mhz = -1;
    sample.throttled = false;
  }
  return record;
}

TEST(ResultsJson, CpuRunWritesNullWhereNothingApplies) {
  const auto json = nlohmann::json::parse(written(cpu_run()));
  EXPECT_EQ(json["schema"], "mlalab.ab.results/3");
  const auto& environment = json["environment"];
  for (const char* key : {"gpu", "sm_count", "sm_clock_mhz", "max_sm_clock_mhz", "mem_clock_mhz",
                          "power_limit_w", "driver", "cuda_runtime"}) {
    EXPECT_TRUE(environment[key].is_null()) << key << ": " << environment[key];
  }
  EXPECT_EQ(environment["cpu_model"], "AMD EPYC 7B13");
  EXPECT_EQ(environment["usable_cpus"], 1);
  EXPECT_EQ(environment["load_at_start"]["other_cpu_share"], 0.25);
  EXPECT_TRUE(environment["load_at_end"]["load_5min"].is_null());
  EXPECT_TRUE(environment["load_at_end"]["share_window_s"].is_null());
  EXPECT_TRUE(json["experiment"]["baseline"]["split"].is_null()) << "the CPU backend has none";
  EXPECT_EQ(json["experiment"]["baseline"]["cpu_threads"], 2);
  EXPECT_TRUE(json["arms"][2]["config"]["split"].is_null());
  EXPECT_TRUE(json["experiment"]["measure"]["throttle_fraction"].is_null());
  EXPECT_TRUE(json["samples"][0]["sm_clock_mhz"].is_null());
  EXPECT_TRUE(json["samples"][0]["power_w"].is_null());
  EXPECT_TRUE(json["partial_reason"].is_null());
  EXPECT_TRUE(json["arms"][0]["invalid_reason"].is_null());
  EXPECT_EQ(json["arms"][6]["invalid_reason"], "out[0][3][17] = nan, reference 0.25");
}

TEST(ResultsJson, CudaRunHasNoCpuThreadsAndNoUnusedContextFields) {
  const auto json = nlohmann::json::parse(written(analysed()));
  EXPECT_EQ(json["experiment"]["baseline"]["split"], "heuristic");
  EXPECT_TRUE(json["experiment"]["baseline"]["cpu_threads"].is_null());
  const auto& context = json["experiment"]["sweep"]["context"];
  EXPECT_EQ(context["kind"], "fixed");
  EXPECT_EQ(context["length"], 4096);
  EXPECT_TRUE(context["min_length"].is_null());
  EXPECT_TRUE(context["max_length"].is_null());
  EXPECT_TRUE(context["sigma"].is_null());
}

TEST(ResultsJson, CommandRunWritesNullForTheKernelSettings) {
  ab::RunRecord record = analysed();
  record.experiment.backend = Backend::kNone;
  const ab::Arm command{.name = "baseline",
                        .prediction_pct = std::nullopt,
                        .config = ab::CommandArm{.command = "bench",
                                                 .env = {},
                                                 .metric_regex = "([0-9]+)",
                                                 .direction = ab::Direction::kHigherIsBetter,
                                                 .timeout_s = 30}};
  record.experiment.baseline = command;
  for (ab::Arm& variant : record.experiment.variants) variant.config = command.config;
  for (ab::ArmRecord& arm : record.arms) arm.arm.config = command.config;
  for (ab::PointRecord& point : record.points) point.splits = 0;
  for (ab::Sample& sample : record.samples) sample.time_us = 0.0;
  const auto json = nlohmann::json::parse(written(record));
  const auto& sweep = json["experiment"]["sweep"];
  for (const char* key : {"layout", "heads", "page_size", "context"}) {
    EXPECT_TRUE(sweep[key].is_null()) << key;
  }
  EXPECT_TRUE(json["experiment"]["measure"]["launches_per_sample"].is_null());
  EXPECT_TRUE(json["points"][0]["splits"].is_null());
  EXPECT_TRUE(json["points"][0]["context_lengths"].is_null());
  EXPECT_TRUE(json["samples"][0]["time_us"].is_null());
  // The nulls read back as the defaults, and the file written again is the same file.
  const ab::RunRecord back = record_from_json(json);
  EXPECT_EQ(back.experiment.sweep.heads, ab::Sweep{}.heads);
  EXPECT_EQ(back.points[0].splits, 0);
  EXPECT_EQ(written(back), written(record));
}

TEST(ResultsJson, RoundTripsTheHostAndItsLoad) {
  const ab::RunRecord record = cpu_run();
  const ab::RunRecord back = record_from_json(nlohmann::json::parse(written(record)));
  EXPECT_EQ(back.environment.cpu_model, "AMD EPYC 7B13");
  EXPECT_EQ(back.environment.hardware_threads, 2);
  EXPECT_EQ(back.environment.usable_cpus, 1);
  EXPECT_EQ(back.environment.load_at_start.load_15min, 0.4);
  EXPECT_EQ(back.environment.load_at_start.other_cpu_share, 0.25);
  EXPECT_EQ(back.environment.load_at_start.share_window_s, 0.5);
  EXPECT_EQ(back.environment.load_at_end.load_1min, 1.5);
  EXPECT_FALSE(back.environment.load_at_end.other_cpu_share);
  EXPECT_EQ(written(back), written(record));
}

// A file of an older schema holds the analysis of the earlier statistics: it is not read, and
// the rest is, every sample intact.
TEST(ResultsJson, AnOlderSchemasAnalysisIsNotReadButEverythingElseIs) {
  const ab::RunRecord& record = analysed();
  for (const std::string_view schema : {kResultsSchemaV2, kResultsSchemaV1}) {
    auto json = nlohmann::json::parse(written(record));
    json["schema"] = std::string(schema);
    // What the earlier statistics wrote: other fields, which are not read.
    json["experiment"]["stats"]["resamples"] = 2000;
    json["analysis"]["variants"][0]["points"][0].erase("p_within");
    json["points"][0]["stop_reason"] = "precision_reached";
    const ab::RunRecord back = record_from_json(json);
    EXPECT_FALSE(back.analysis) << schema;
    ASSERT_EQ(back.samples.size(), record.samples.size()) << schema;
    for (std::size_t i = 0; i < record.samples.size(); ++i) {
      EXPECT_EQ(back.samples[i].value, record.samples[i].value);
    }
    EXPECT_EQ(back.points[0].stop_reason, ab::StopReason::kSettled);
    EXPECT_EQ(back.arms.size(), record.arms.size());
    EXPECT_EQ(back.experiment.stats.max_rounds, record.experiment.stats.max_rounds);
  }
}

// The committed runs: samples, arms, points and environment read; the analysis does not.
ab::RunRecord committed(const std::string& path) {
  return read_results_json(std::filesystem::path(MLALAB_SOURCE_DIR) / path);
}

TEST(ResultsJson, ReadsTheCommittedSchema1Results) {
  const ab::RunRecord record =
      committed("docs/results/2026-11-29-h200-final/ab/occupancy/results.json");
  EXPECT_EQ(record.environment.backend, Backend::kCuda);
  EXPECT_EQ(record.environment.gpu, "NVIDIA H200");
  EXPECT_EQ(record.environment.sm_count, 132);
  EXPECT_TRUE(record.environment.cpu_model.empty()) << "schema 1 did not record the CPU";
  EXPECT_FALSE(record.environment.load_at_start.load_1min);
  EXPECT_EQ(record.arms.size(), 4u);
  EXPECT_EQ(record.points.size(), 9u);
  EXPECT_EQ(record.points[0].stop_reason, ab::StopReason::kSettled);  // "precision_reached"
  ASSERT_EQ(record.samples.size(), 360u);
  EXPECT_EQ(record.samples[0].value, 31504.20667008404);
  EXPECT_FALSE(record.analysis) << "the analysis of the earlier statistics is not read";
}

TEST(ResultsJson, ReadsTheCommittedSchema2Results) {
  const ab::RunRecord kernels =
      committed("docs/results/2026-12-01-h200-issue7/ab/occupancy-20261201T015319Z/results.json");
  EXPECT_EQ(kernels.environment.gpu, "NVIDIA H200");
  EXPECT_EQ(kernels.environment.cpu_model, "Intel(R) Xeon(R) Processor");
  EXPECT_EQ(kernels.arms.size(), 4u);
  ASSERT_EQ(kernels.samples.size(), 360u);
  EXPECT_EQ(kernels.samples[0].value, 52305.029279046);
  EXPECT_EQ(kernels.experiment.stats.max_rounds, 60);
  EXPECT_FALSE(kernels.analysis);

  const ab::RunRecord commands =
      committed("docs/results/2026-12-01-h200-issue7/cmd/cmd-gpu-20261201T015409Z/results.json");
  EXPECT_EQ(commands.environment.backend, Backend::kNone);
  ASSERT_EQ(commands.samples.size(), 18u);
  EXPECT_EQ(commands.samples[0].value, 100.0);
  EXPECT_FALSE(commands.analysis);
  // Written again, it is a file of this schema without an analysis.
  const auto json = nlohmann::json::parse(written(commands));
  EXPECT_EQ(json["schema"], std::string(kResultsSchema));
  EXPECT_TRUE(json["analysis"].is_null());
  EXPECT_EQ(json["samples"].size(), 18u);
}

}  // namespace
}  // namespace mlalab::report
