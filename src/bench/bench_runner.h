#pragma once
// `mlalab bench`: every requested variant on every (batch, context), validated against the
// fp64 reference and then timed with the KV cache coming from HBM, not L2.
//
// Per problem (one batch × context): build it (equal or drawn lengths, permuted pages), compute the
// reference once (on a sample of at most kMaxCheckedEntries sequences for large batches), and
// for each variant: plan, run once on poisoned outputs, check, and only then time it. The
// timing rotates over R replicas of (q, kv_cache) whose total size is ≥ 4 × L2, replayed as
// one CUDA graph; one sample is graph time / R, the result the median of the samples.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "core/kernel_config.h"
#include "core/layout.h"
#include "core/validate.h"
#include "dispatch/tuning_table.h"

namespace mlalab::bench {

constexpr int kMinTimedRuns = 20;      // fewer samples make the median itself noisy
constexpr int kMaxTimedRuns = 100000;
constexpr int kMaxContext = 1 << 20;   // tokens per sequence; past any DeepSeek deployment
// One problem's KV cache, per copy. The host holds it once; the GPU at least twice (replicas).
constexpr std::size_t kMaxProblemKvBytes = std::size_t{16} << 30;
constexpr const char* kAllVariants = "all";
constexpr const char* kCpuVariantName = "cpu";

struct BenchRequest {
  Layout layout = Layout::kV3;
  int num_heads = 16;
  std::vector<int> batches{};
  std::vector<int> contexts{};
  int page_size = 64;
  // Compiled variant names, or "all": every compiled variant that can run on this GPU
  // (infeasible ones are then left out silently, instead of reported as infeasible rows).
  // Ignored by the CPU backend.
  std::vector<std::string> variants{};
  SplitPolicy split{};                // ignored by the CPU backend
  // Each row's sequence lengths: all its context (equal), or drawn up to it (drawn_lengths,
  // from `seed`): the context is then the longest a sequence may be, and launches are planned
  // for it, as a Dispatcher plans its key.
  dispatch::TunedLengths lengths{};
  int timed_runs = kMinTimedRuns;     // in [kMinTimedRuns, kMaxTimedRuns]
  std::uint64_t seed = 1;
  int cpu_threads = 0;                // CPU backend only; 0 = every hardware thread
  // CUDA backend, timeline builds only (kernels/timeline.h): keep each row's per-CTA records.
  bool timeline = false;
};

// The sequence lengths of a (batch, context) row under `lengths`: all `context`, or each
// uniform in [⌈shortest_fraction · context⌉, context] from `seed` (uniform_random_lengths: the
// first b of them are the same at every batch, so rows differ by batch, not by draw). The
// tuner draws its keys' lengths the same way.
std::vector<int> drawn_lengths(const dispatch::TunedLengths& lengths, int batch, int context,
                               std::uint64_t seed);

// One problem's KV cache of `tokens` cache rows (the sum of its sequence lengths) within
// kMaxProblemKvBytes: nullopt when it fits, else an error on `field` whose value reads
// "<shape> (N GiB of KV cache)". Shared by bench and the A/B lab, so that both refuse the
// same problems up front instead of failing to allocate them.
std::optional<InputError> check_kv_cache_size(Layout layout, std::size_t tokens,
                                              std::string field, const std::string& shape);

// Every field in range and every variant name known, before anything runs. The error names
// the field (e.g. "batches[1]") and the allowed range or names.
std::optional<InputError> validate_request(const BenchRequest& request);

// The CUDA backend on the current device. Throws (CudaError, or std::runtime_error when there
// is no usable device: check query_device first) when the device is unusable from the
// start, e.g. the bandwidth measurement fails; a variant or problem that fails
// later becomes an INVALID or error row instead, so one bad config cannot hide the others.
// Progress (one line per row) goes to *progress when given.
BenchReport run_cuda_bench(const BenchRequest& request, std::ostream* progress = nullptr);

// The CPU backend (variant "cpu", one split), timed with std::chrono, checked against the
// same reference. A run slower than kSlowCpuRunSeconds gets fewer samples (at least
// kMinSlowCpuRuns); the row's detail then says how many.
BenchReport run_cpu_bench(const BenchRequest& request, std::ostream* progress = nullptr);

constexpr double kSlowCpuRunSeconds = 1.0;
constexpr double kCpuRowBudgetSeconds = 20.0;
constexpr int kMinSlowCpuRuns = 3;

// ---- Pure helpers, exposed for tests ------------------------------------------------------

// Replicas of (q, kv_cache) rotated through while timing: enough that together they are
// ≥ 4 × L2 (so each call finds its KV evicted), at least 2, and no more than fit in
// kMaxReplicaBytes or kMaxReplicas, unless 2 alone exceed that.
int replica_count(std::size_t replica_bytes, std::size_t l2_bytes);
constexpr std::size_t kMaxReplicaBytes = std::size_t{8} << 30;
constexpr int kMaxReplicas = 2048;

// The figures of one timed call of a problem whose sequences have the given lengths.
struct RowMetrics {
  double gbps = 0.0;
  double tflops = 0.0;
};
RowMetrics row_metrics(const std::vector<int>& seq_lens, int num_heads, Layout layout,
                       double microseconds);

}  // namespace mlalab::bench
