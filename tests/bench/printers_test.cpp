#include "bench/printers.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace mlalab::bench {
namespace {

const std::set<std::string> kEnvironmentKeys = {"gpu",          "sm_count", "sm_clock_mhz",
                                                "driver",       "cuda_runtime", "commit",
                                                "read_gbps",    "copy_gbps"};
const std::set<std::string> kRowKeys = {"variant", "layout",    "heads",  "batch",
                                        "context", "tokens",    "page_size", "splits",
                                        "workers", "us",        "gbps",   "pct_read_bw",
                                        "tflops"};

std::set<std::string> keys_of(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

BenchRow ok_row(std::string variant, int batch) {
  return BenchRow{.variant = std::move(variant), .layout = "v3", .heads = 16, .batch = batch,
                  .context = 4096, .tokens = 4096LL * batch, .page_size = 64, .splits = 4,
                  .us = 12.5, .gbps = 3000.0, .pct_read_bw = 75.0, .tflops = 1.25,
                  .samples = 20};
}

BenchReport gpu_report() {
  BenchReport report;
  report.environment = BenchEnvironment{.gpu = "NVIDIA H200", .sm_count = 132,
                                        .sm_clock_mhz = 1980, .driver = "570.86.15 (CUDA 12.8)",
                                        .cuda_runtime = "13.0", .commit = "abc123",
                                        .read_gbps = 4000.0, .copy_gbps = 3600.0};
  report.rows.push_back(ok_row("h16_t16_w4_s2", 1));
  BenchRow invalid = ok_row("h64_t32_w8_s2", 1);
  invalid.status = RowStatus::kInvalid;
  invalid.detail = "out[0][3][17] = nan, reference 0.25";
  report.rows.push_back(invalid);
  BenchRow infeasible = ok_row("h64_t64_w8_s4", 1);
  infeasible.status = RowStatus::kInfeasible;
  infeasible.detail = "needs 300000 B of shared memory per CTA, this GPU allows 232448 B";
  report.rows.push_back(infeasible);
  report.rows.push_back(ok_row("h16_t16_w4_s2", 64));
  return report;
}

BenchReport cpu_report() {
  BenchReport report;
  report.environment = BenchEnvironment{.gpu = "cpu (2 threads)", .commit = "abc123"};
  BenchRow row = ok_row("cpu", 4);
  row.splits = 1;
  row.pct_read_bw.reset();
  report.rows.push_back(row);
  return report;
}

TEST(JsonPrinter, HasExactlyTheAgreedKeys) {
  const auto json = bench_report_json(gpu_report());
  EXPECT_EQ(keys_of(json), (std::set<std::string>{"environment", "lengths", "rows"}));
  EXPECT_EQ(json["lengths"], "equal");
  EXPECT_EQ(keys_of(json["environment"]), kEnvironmentKeys);
  ASSERT_TRUE(json["rows"].is_array());
  for (const auto& row : json["rows"]) EXPECT_EQ(keys_of(row), kRowKeys);
  EXPECT_EQ(json["environment"]["sm_count"], 132);
  EXPECT_EQ(json["rows"][0]["us"], 12.5);
  EXPECT_EQ(json["rows"][0]["variant"], "h16_t16_w4_s2");
}

TEST(JsonPrinter, LeavesOutRowsThatWereNotTimed) {
  const auto json = bench_report_json(gpu_report());
  ASSERT_EQ(json["rows"].size(), 2u);
  EXPECT_EQ(json["rows"][0]["batch"], 1);
  EXPECT_EQ(json["rows"][1]["batch"], 64);
}

TEST(JsonPrinter, CpuRunHasNullGpuFields) {
  const auto json = bench_report_json(cpu_report());
  EXPECT_EQ(keys_of(json["environment"]), kEnvironmentKeys);
  EXPECT_EQ(json["environment"]["gpu"], "cpu (2 threads)");
  for (const char* key : {"sm_count", "sm_clock_mhz", "driver", "cuda_runtime", "read_gbps",
                          "copy_gbps"}) {
    EXPECT_TRUE(json["environment"][key].is_null()) << key;
  }
  ASSERT_EQ(json["rows"].size(), 1u);
  EXPECT_EQ(keys_of(json["rows"][0]), kRowKeys);
  EXPECT_TRUE(json["rows"][0]["pct_read_bw"].is_null());
  EXPECT_EQ(json["rows"][0]["splits"], 1);
  EXPECT_TRUE(json["rows"][0]["workers"].is_null());
}

TEST(TablePrinter, ABalancedRowShowsItsWorkersWhereSplitsGo) {
  BenchReport report = gpu_report();
  report.rows.front().splits = 1;
  report.rows.front().workers = 396;
  std::ostringstream out;
  TablePrinter(out).print(report);
  EXPECT_NE(out.str().find("396 workers"), std::string::npos) << out.str();
  EXPECT_EQ(bench_report_json(report)["rows"][0]["workers"], 396);
}

TEST(JsonPrinter, WritesParseableText) {
  std::ostringstream out;
  JsonPrinter(out).print(gpu_report());
  EXPECT_EQ(nlohmann::json::parse(out.str()), bench_report_json(gpu_report()));
}

// Terminal columns of a line: UTF-8 continuation bytes take none.
std::size_t columns(const std::string& line) {
  std::size_t count = 0;
  for (const char c : line) count += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return count;
}

TEST(TablePrinter, RendersEveryRowAligned) {
  std::ostringstream out;
  TablePrinter(out).print(gpu_report());
  const std::string text = out.str();
  EXPECT_NE(text.find("NVIDIA H200, 132 SMs, SM clock 1980 MHz"), std::string::npos) << text;
  EXPECT_NE(text.find("commit abc123"), std::string::npos);
  EXPECT_NE(text.find("streaming read 4000 GB/s"), std::string::npos);
  for (const char* header : {"variant", " B |", "splits", "µs", "GB/s", "%read", "TFLOP/s"}) {
    EXPECT_NE(text.find(header), std::string::npos) << header;
  }
  EXPECT_NE(text.find("INVALID: out[0][3][17] = nan"), std::string::npos);
  EXPECT_NE(text.find("infeasible: needs 300000 B"), std::string::npos);
  EXPECT_NE(text.find("12.5"), std::string::npos);

  std::istringstream lines(text);
  std::string line;
  std::size_t width = 0;
  int table_lines = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '|') continue;
    ++table_lines;
    if (width == 0) width = columns(line);
    EXPECT_EQ(columns(line), width) << line;
  }
  EXPECT_EQ(table_lines, 2 + 4);  // header, alignment row, four rows
}

// Drawn lengths are said once, above the table (equal ones, the common case, are not).
TEST(TablePrinter, SaysHowTheLengthsWereDrawn) {
  BenchReport report = gpu_report();
  std::ostringstream equal;
  TablePrinter(equal).print(report);
  EXPECT_EQ(equal.str().find("lengths:"), std::string::npos) << equal.str();
  report.lengths = "uniform:0.125";
  std::ostringstream drawn;
  TablePrinter(drawn).print(report);
  EXPECT_NE(drawn.str().find("lengths: uniform:0.125 (L is the longest a sequence may be"),
            std::string::npos)
      << drawn.str();
}

TEST(TablePrinter, BlanksNumbersOfUntimedRowsAndCpuPercent) {
  std::ostringstream out;
  TablePrinter(out).print(cpu_report());
  const std::string text = out.str();
  EXPECT_NE(text.find("cpu (2 threads) | commit abc123"), std::string::npos) << text;
  EXPECT_EQ(text.find("streaming read"), std::string::npos);
  EXPECT_NE(text.find("|     - |"), std::string::npos) << text;  // %read blank on the CPU
}

TEST(FanOutPrinter, PrintsThroughEveryPrinter) {
  std::ostringstream table;
  std::ostringstream json;
  FanOutPrinter printers;
  printers.add(std::make_unique<TablePrinter>(table));
  printers.add(std::make_unique<JsonPrinter>(json));
  printers.print(cpu_report());
  EXPECT_NE(table.str().find("| cpu"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(json.str())["rows"][0]["variant"], "cpu");
}

TEST(BenchReport, FailsOnInvalidOrErrorButNotInfeasible) {
  BenchReport report = gpu_report();
  EXPECT_TRUE(report.any_failed());
  report.rows.erase(report.rows.begin() + 1);  // the INVALID row
  EXPECT_FALSE(report.any_failed());
  report.rows[0].status = RowStatus::kError;
  EXPECT_TRUE(report.any_failed());
}

TEST(BenchRow, StatusText) {
  BenchRow row = ok_row("cpu", 1);
  EXPECT_EQ(row.status_text(), "ok");
  row.detail = "5 runs";
  EXPECT_EQ(row.status_text(), "ok (5 runs)");
  row.status = RowStatus::kInvalid;
  row.detail = "lse mismatch";
  EXPECT_EQ(row.status_text(), "INVALID: lse mismatch");
}

}  // namespace
}  // namespace mlalab::bench
