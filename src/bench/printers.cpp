#include "bench/printers.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace mlalab::bench {
namespace {

constexpr const char* kBlank = "-";

// Terminal columns a UTF-8 string takes (µ is two bytes, one column).
std::size_t display_width(const std::string& text) {
  constexpr unsigned char kContinuationMask = 0xc0;
  constexpr unsigned char kContinuationBits = 0x80;
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & kContinuationMask) != kContinuationBits;
  }));
}

std::string pad(const std::string& text, std::size_t width, bool right_align) {
  const std::string fill(width - std::min(width, display_width(text)), ' ');
  return right_align ? fill + text : text + fill;
}

// At least three significant digits, so small CPU figures (0.0176 TFLOP/s) do not print as 0.
std::string adaptive(double value) {
  constexpr int kSignificant = 3;
  constexpr int kMaxDecimals = 4;
  const int magnitude =
      value > 0.0 ? static_cast<int>(std::floor(std::log10(value))) : 0;
  const int decimals = std::clamp(kSignificant - 1 - magnitude, 0, kMaxDecimals);
  return fmt::format("{:.{}f}", value, decimals);
}

struct Column {
  const char* header;
  bool right_align;
};

constexpr std::array kColumns = {
    Column{"variant", false}, Column{"B", true},      Column{"H", true},
    Column{"L", true},        Column{"page", true},   Column{"splits", true},
    Column{"µs", true},       Column{"GB/s", true},   Column{"%read", true},
    Column{"TFLOP/s", true},  Column{"status", false},
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
      row.workers > 0  ? fmt::format("{} workers", row.workers)
      : row.splits > 0 ? std::to_string(row.splits)
                       : std::string(kBlank),
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
  out_ << '\n';

  std::vector<std::vector<std::string>> cells;
  cells.reserve(report.rows.size());
  for (const auto& row : report.rows) cells.push_back(row_cells(row));
  // Markdown needs a dash and a colon in each alignment cell; three read as a rule.
  constexpr std::size_t kMinWidth = 3;
  std::array<std::size_t, kColumns.size()> widths{};
  for (std::size_t c = 0; c < kColumns.size(); ++c) {
    widths[c] = std::max(kMinWidth, display_width(kColumns[c].header));
    for (const auto& line : cells) widths[c] = std::max(widths[c], display_width(line[c]));
  }

  const auto print_line = [&](auto cell_text) {
    std::string line = "|";
    for (std::size_t c = 0; c < kColumns.size(); ++c) {
      line += ' ';
      line += cell_text(c);
      line += " |";
    }
    out_ << line << '\n';
  };
  print_line([&](std::size_t c) { return pad(kColumns[c].header, widths[c], false); });
  // Markdown alignment markers: ---: right-aligns numbers when rendered.
  print_line([&](std::size_t c) {
    const std::size_t dashes = widths[c] - (kColumns[c].right_align ? 1 : 0);
    return std::string(dashes, '-') + (kColumns[c].right_align ? ":" : "");
  });
  for (const auto& line : cells) {
    print_line([&](std::size_t c) { return pad(line[c], widths[c], kColumns[c].right_align); });
  }
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
