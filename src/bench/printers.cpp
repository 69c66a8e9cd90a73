#include "bench/printers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "core/kernel_config.h"
#include "core/text_table.h"

namespace mlalab::bench {
namespace {

constexpr const char* kBlank = "-";

// At least three significant digits, so small CPU figures (0.0176 TFLOP/s) do not print as 0.
std::string adaptive(double value) {
  constexpr int kSignificant = 3;
  constexpr int kMaxDecimals = 4;
  const int magnitude =
      value > 0.0 ? static_cast<int>(std::floor(std::log10(value))) : 0;
  const int decimals = std::clamp(kSignificant - 1 - magnitude, 0, kMaxDecimals);
  return fmt::format("{:.{}f}", value, decimals);
}

const std::vector<TextColumn> kColumns = {
    {"variant", false}, {"B", true},       {"H", true},      {"L", true},
    {"page", true},     {"splits", true},  {"µs", true},     {"GB/s", true},
    {"%read", true},    {"TFLOP/s", true}, {"status", false},
};

std::vector<std::string> row_cells(const BenchRow& row) {
  const bool timed = row.status == RowStatus::kOk;
  const auto number = [timed](std::string text) { return timed ? text : std::string(kBlank); };
  return {
      row.variant,
      std::to_string(row.batch),
      std::to_string(row.heads),
      std::to_string(row.context),
      std::to_string(row.page_size),
      resolved_split_text(row.splits, row.workers).value_or(std::string(kBlank)),
      number(fmt::format("{:.1f}", row.us)),
      number(adaptive(row.gbps)),
      timed && row.pct_read_bw ? fmt::format("{:.1f}", *row.pct_read_bw) : std::string(kBlank),
      number(adaptive(row.tflops)),
      row.status_text(),
  };
}

std::string environment_line(const BenchEnvironment& env) {
  std::string line = env.gpu;
  if (env.sm_count) line += fmt::format(", {} SMs", *env.sm_count);
  if (env.sm_clock_mhz) line += fmt::format(", SM clock {} MHz", *env.sm_clock_mhz);
  if (env.driver) line += fmt::format(" | driver {}", *env.driver);
  if (env.cuda_runtime) line += fmt::format(" | runtime CUDA {}", *env.cuda_runtime);
  line += fmt::format(" | commit {}", env.commit);
  return line;
}

template <typename T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

void TablePrinter::print(const BenchReport& report) {
  const auto& env = report.environment;
  out_ << environment_line(env) << '\n';
  if (env.read_gbps && env.copy_gbps) {
    out_ << fmt::format("memory: streaming read {:.0f} GB/s, device copy {:.0f} GB/s\n",
                        *env.read_gbps, *env.copy_gbps);
  }
  if (report.lengths != "equal") {
    out_ << fmt::format("lengths: {} (L is the longest a sequence may be; GB/s and TFLOP/s "
                        "count the tokens drawn)\n",
                        report.lengths);
  }
  out_ << '\n';

  std::vector<TextRow> cells;
  cells.reserve(report.rows.size());
  for (const auto& row : report.rows) cells.push_back(row_cells(row));
  print_markdown_table(out_, kColumns, cells);
  out_.flush();
}

nlohmann::json bench_report_json(const BenchReport& report) {
  const auto& env = report.environment;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : report.rows) {
    if (row.status != RowStatus::kOk) continue;
    rows.push_back({
        {"variant", row.variant},
        {"layout", row.layout},
        {"heads", row.heads},
        {"batch", row.batch},
        {"context", row.context},
        {"tokens", row.tokens},
        {"page_size", row.page_size},
        {"splits", row.splits},
        {"workers", row.workers > 0 ? nlohmann::json(row.workers) : nlohmann::json(nullptr)},
        {"us", row.us},
        {"gbps", row.gbps},
        {"pct_read_bw", or_null(row.pct_read_bw)},
        {"tflops", row.tflops},
    });
  }
  return {
      {"environment",
       {
           {"gpu", env.gpu},
           {"sm_count", or_null(env.sm_count)},
           {"sm_clock_mhz", or_null(env.sm_clock_mhz)},
           {"driver", or_null(env.driver)},
           {"cuda_runtime", or_null(env.cuda_runtime)},
           {"commit", env.commit},
           {"read_gbps", or_null(env.read_gbps)},
           {"copy_gbps", or_null(env.copy_gbps)},
       }},
      {"lengths", report.lengths},
      {"rows", std::move(rows)},
  };
}

void JsonPrinter::print(const BenchReport& report) {
  constexpr int kIndent = 2;
  out_ << bench_report_json(report).dump(kIndent) << '\n';
  out_.flush();
}

void FanOutPrinter::print(const BenchReport& report) {
  for (const auto& printer : printers_) printer->print(report);
}

}  // namespace mlalab::bench
