#include "report/results_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

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
  EXPECT_EQ(json["experiment"]["stats"]["resamples"], 500);
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

TEST(ResultsJson, ChangesFromTheSamplesMatchTheAnalysis) {
  // change % = median(variant) / median(baseline) − 1 over the paired rounds; no sample of
  // C16 is throttled, so every round pairs and it is the ratio of the plain medians.
  const auto json = nlohmann::json::parse(written(analysed()));
  const int baseline = arm_named(json, "baseline");
  const int variant = arm_named(json, "8 warps");
  const double expected = (median_from_json(json, 2, variant) /
                               median_from_json(json, 2, baseline) - 1) * 100;
  const auto& point = json["analysis"]["variants"][0]["points"][2];
  EXPECT_EQ(point["concurrency"], 16);
  EXPECT_NEAR(point["change"]["change_pct"].get<double>(), expected, 1e-9);
  EXPECT_EQ(point["verdict"], "SLOWER");
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

TEST(ResultsJson, RoundTripsUnboundedIntervalsAndCommandArms) {
  ab::RunRecord record = analysed();
  record.analysis->noise[0].a_a.interval_pct = {};  // −∞ … +∞
  record.analysis->variants[0].points[0].evidence.change.change_pct = std::nan("");
  record.experiment.variants[0].config =
      ab::CommandArm{.command = "bench --model x", .env = {{"A", "1"}}, .metric_regex = "(\\d+)",
                     .direction = ab::Direction::kLowerIsBetter, .timeout_s = 30};
  const ab::RunRecord back = record_from_json(nlohmann::json::parse(written(record)));
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
  record.experiment.backend = "cpu";
  const auto on_cpu = [](ab::Arm& arm, int threads) {
    arm.config = ab::KernelArm{.variant = ab::kCpuVariant, .split = {}, .cpu_threads = threads};
  };
  on_cpu(record.experiment.baseline, 2);
  for (ab::Arm& variant : record.experiment.variants) on_cpu(variant, 1);
  for (ab::ArmRecord& arm : record.arms) on_cpu(arm.arm, arm.role == ab::ArmRole::kVariant ? 1 : 2);
  record.environment = {};
  record.environment.backend = "cpu";
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
  EXPECT_EQ(json["schema"], "mlalab.ab.results/2");
  const auto& environment = json["environment"];
  for (const char* key : {"gpu", "sm_count", "sm_clock_mhz", "max_sm_clock_mhz", "mem_clock_mhz",
                          "driver", "cuda_runtime"}) {
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
  record.experiment.backend = ab::kNoBackend;
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

TEST(ResultsJson, ReadsTheCommittedSchema1Results) {
  const ab::RunRecord record = read_results_json(
      std::filesystem::path(MLALAB_SOURCE_DIR) /
      "docs/results/2026-11-29-h200-final/ab/occupancy/results.json");
  EXPECT_EQ(record.environment.backend, "cuda");
  EXPECT_EQ(record.environment.gpu, "NVIDIA H200");
  EXPECT_EQ(record.environment.sm_count, 132);
  EXPECT_TRUE(record.environment.cpu_model.empty()) << "schema 1 did not record the CPU";
  EXPECT_FALSE(record.environment.load_at_start.load_1min);
  EXPECT_EQ(record.arms.size(), 4u);
  EXPECT_FALSE(record.samples.empty());
  EXPECT_TRUE(record.analysis);
}

}  // namespace
}  // namespace mlalab::report
