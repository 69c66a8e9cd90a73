#pragma once
// The result model of a benchmark run: where it ran (environment) and one row per
// (variant, batch, context). Plain data with no CUDA types, so printers and the tools that
// read results depend on nothing below it. Fields that only a GPU run has are optional and
// print as null on the CPU.
#include <optional>
#include <string>
#include <vector>

#include "kernels/timeline.h"

namespace mlalab::bench {

struct BenchEnvironment {
  std::string gpu{};                        // "NVIDIA H200", or "cpu (N threads)"
  std::optional<int> sm_count{};
  std::optional<int> sm_clock_mhz{};        // see DeviceInfo::sm_clock_mhz
  std::optional<std::string> driver{};
  std::optional<std::string> cuda_runtime{};
  std::string commit{};
  std::optional<double> read_gbps{};        // streaming read, measured in the same run
  std::optional<double> copy_gbps{};        // device-to-device copy, read + write bytes
};

enum class RowStatus {
  kOk,
  kInvalid,     // the output disagreed with the reference, or the launch failed: not timed
  kInfeasible,  // the variant cannot run on this GPU (shared memory, no kernel image)
  kError,       // the harness failed (out of memory, lost CUDA context): not a verdict
};

struct BenchRow {
  std::string variant{};    // a compiled variant's name, or "cpu"
  std::string layout{};     // "v3" / "v4"
  int heads = 0;
  int batch = 0;
  int context = 0;          // tokens per sequence, or the longest one with drawn lengths
  long long tokens = 0;     // the batch's tokens: batch · context for equal lengths
  int page_size = 0;
  int splits = 0;           // KV splits of the plan; 1 on the CPU
  int workers = 0;          // balanced launches: workers per head block (splits is 1); else 0
  double us = 0.0;          // median microseconds per call
  double gbps = 0.0;        // (KV read once + q + out) bytes / time
  std::optional<double> pct_read_bw{};  // 100 · gbps / environment read_gbps; GPU only
  double tflops = 0.0;      // 2 · Σ seq_len · heads · (d_qk + d_v) / time
  int samples = 0;          // timed runs behind the median
  RowStatus status = RowStatus::kOk;
  std::string detail{};     // why not ok; for ok rows a note (e.g. fewer runs), often empty
  // The last timed call's per-CTA records, when the request asked for them (a timeline build).
  std::vector<kernels::CtaTimeline> timeline{};

  // "ok", "ok (5 runs)", "INVALID: ...", "infeasible: ...", "error: ..."
  std::string status_text() const;
};

struct BenchReport {
  BenchEnvironment environment{};
  std::string lengths = "equal";  // how every row drew its lengths (dispatch::lengths_text)
  std::vector<BenchRow> rows{};

  // True when any row is INVALID or an error: the command then exits non-zero.
  bool any_failed() const;
};

}  // namespace mlalab::bench
