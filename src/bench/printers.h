#pragma once
// Output printers for benchmark reports. They share one interface, so the CLI only composes
// them (a table on the terminal, JSON to a file, both through FanOutPrinter) and later
// printers (CSV, SVG, the A/B lab's) plug in beside these.
#include <iosfwd>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "bench/bench_report.h"

namespace mlalab::bench {

class BenchPrinter {
 public:
  virtual ~BenchPrinter() = default;
  virtual void print(const BenchReport& report) = 0;
};

// The environment in two lines, then a Markdown table with aligned columns (readable in a
// terminal, pasteable into docs): variant, B, H, L, page, splits, µs, GB/s, %read, TFLOP/s,
// status. Every row is printed, INVALID and infeasible ones too; their numbers are blank.
class TablePrinter final : public BenchPrinter {
 public:
  explicit TablePrinter(std::ostream& out) : out_(out) {}
  void print(const BenchReport& report) override;

 private:
  std::ostream& out_;
};

// The result file other tools read; its keys are fixed (see bench_report_json).
class JsonPrinter final : public BenchPrinter {
 public:
  explicit JsonPrinter(std::ostream& out) : out_(out) {}
  void print(const BenchReport& report) override;

 private:
  std::ostream& out_;
};

// Prints one report through several printers, in the order they were added.
class FanOutPrinter final : public BenchPrinter {
 public:
  void add(std::unique_ptr<BenchPrinter> printer) { printers_.push_back(std::move(printer)); }
  void print(const BenchReport& report) override;

 private:
  std::vector<std::unique_ptr<BenchPrinter>> printers_;
};

// Exactly:
//   {"environment": {"gpu", "sm_count", "sm_clock_mhz", "driver", "cuda_runtime", "commit",
//                    "read_gbps", "copy_gbps"},
//    "rows": [{"variant", "layout", "heads", "batch", "context", "page_size", "splits",
//              "us", "gbps", "pct_read_bw", "tflops"}, ...]}
// Only ok rows are written (INVALID / infeasible / error rows have no numbers to read);
// fields without a value (GPU-only ones on the CPU) are null. pct_read_bw is a percentage.
nlohmann::json bench_report_json(const BenchReport& report);

}  // namespace mlalab::bench
