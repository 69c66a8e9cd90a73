#include "bench/bench_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <ostream>
#include <span>
#include <stdexcept>
#include <thread>

#include "bench/bandwidth.h"
#include "bench/check.h"
#include "bench/cuda_raii.h"
#include "bench/device_info.h"
#include "bench/device_problem.h"
#include "bench/problem.h"
#include "core/median.h"
#include "core/number_text.h"
#include "core/usable_cpus.h"
#include "dispatch/feasibility.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/reference/reference.h"
#include "kernels/registry.h"
#include "kernels/split_plan.h"
#include "kernels/timeline.h"

namespace mlalab::bench {
namespace {

constexpr std::size_t kBf16Bytes = sizeof(bf16);
constexpr double kBytesPerGB = 1e9;
constexpr double kFlopsPerTflop = 1e12;
constexpr double kMicrosPerSecond = 1e6;
constexpr double kPercent = 100.0;
constexpr int kFlopsPerMac = 2;
// L2 must hold none of a call's KV when it starts: the replicas together span this many L2s.
constexpr std::size_t kL2SpanFactor = 4;

bool is_power_of_two(int value) { return value > 0 && (value & (value - 1)) == 0; }

std::string compiled_names() {
  std::string names;
  for (const auto& variant : kernels::compiled_variants()) {
    names += (names.empty() ? "" : ", ") + variant.name;
  }
  return names;
}

void report_progress(std::ostream* progress, const std::string& line) {
  if (progress) *progress << line << std::endl;
}

std::string row_progress(const BenchRow& row, std::size_t index, std::size_t total) {
  std::string line = fmt::format("[{}/{}] {} B={} L={}", index, total, row.variant, row.batch,
                                 row.context);
  if (row.tokens != static_cast<long long>(row.batch) * row.context) {
    line += fmt::format(" ({} tokens drawn)", group_thousands(row.tokens));
  }
  line += ": ";
  if (row.status != RowStatus::kOk) return line + row.status_text();
  line += fmt::format("{:.1f} us, {:.4g} GB/s", row.us, row.gbps);
  if (row.pct_read_bw) line += fmt::format(" ({:.1f}% of read)", *row.pct_read_bw);
  line += row.workers > 0
              ? fmt::format(", {} samples, balanced: {} workers", row.samples, row.workers)
              : fmt::format(", {} samples, splits {}", row.samples, row.splits);
  return line;
}

// One (batch, context) row's problem, on its lengths (drawn_lengths, drawn once per row).
ProblemSpec problem_spec(const BenchRequest& request, const std::vector<int>& seq_lens) {
  return ProblemSpec{.layout = request.layout,
                     .batch = static_cast<int>(seq_lens.size()),
                     .num_heads = request.num_heads,
                     .seq_lens = seq_lens,
                     .page_size = request.page_size,
                     .with_sinks = false,
                     // Pages scattered as in a real paged cache, so no variant profits from
                     // an order that serving never has.
                     .permute_pages = true,
                     .seed = request.seed};
}

BenchRow row_skeleton(const BenchRequest& request, std::string variant, int context,
                      const std::vector<int>& seq_lens) {
  return BenchRow{.variant = std::move(variant),
                  .layout = std::string(name_of(request.layout)),
                  .heads = request.num_heads,
                  .batch = static_cast<int>(seq_lens.size()),
                  .context = context,
                  .tokens = std::accumulate(seq_lens.begin(), seq_lens.end(), 0LL),
                  .page_size = request.page_size};
}

// ---- CUDA backend -------------------------------------------------------------------------

struct SelectedVariant {
  const kernels::Variant* variant;
  dispatch::Placement placement;
  std::optional<std::string> infeasible;
};

std::vector<SelectedVariant> select_variants(const BenchRequest& request,
                                             std::ostream* progress) {
  const int d_qk = dims_of(request.layout).d_qk;
  const bool all = std::find(request.variants.begin(), request.variants.end(), kAllVariants) !=
                   request.variants.end();
  std::vector<SelectedVariant> selected;
  std::vector<std::string> left_out;
  for (const auto& variant : kernels::compiled_variants()) {
    const bool named = std::find(request.variants.begin(), request.variants.end(),
                                 variant.name) != request.variants.end();
    if (!all && !named) continue;
    const dispatch::Placement placement = dispatch::judge_here(variant.shape, d_qk);
    if (!placement.verdict.feasible && all && !named) {
      left_out.push_back(variant.name);
      continue;
    }
    selected.push_back({.variant = &variant,
                        .placement = placement,
                        .infeasible = placement.verdict.feasible
                                          ? std::nullopt
                                          : std::optional(placement.verdict.reason)});
  }
  if (!left_out.empty()) {
    report_progress(progress, fmt::format("left out {} variant(s) infeasible on this GPU: {}",
                                          left_out.size(), fmt::join(left_out, ", ")));
  }
  return selected;
}

bool context_usable() { return cudaDeviceSynchronize() == cudaSuccess; }

// Runs, checks, then times one variant on one problem; fills the row.
void bench_variant(const SelectedVariant& selected, const BenchRequest& request,
                   HostProblem& host, DeviceProblem& device_problem, LazyReference& reference,
                   const DeviceInfo& device, const Bandwidth& bandwidth, cudaStream_t stream,
                   BenchRow& row) {
  const kernels::Variant& variant = *selected.variant;
  const KernelConfig config{.shape = variant.shape, .split = request.split};
  // Planned for the row's context, whatever the drawn lengths, as a Dispatcher plans its key
  // (batch, max context) and the tuner its keys: the same launch at every draw.
  const DecodeParams params = device_problem.params(0);
  kernels::LaunchPlan plan = kernels::plan_launch(params, config, row.context,
                                                  selected.placement.slots(device.sm_count));
  if (request.timeline) {
    plan = kernels::with_timeline(plan, params.batch, params.num_heads, params.d_v);
  }
  row.splits = plan.num_splits;
  row.workers = plan.workers;
  DeviceBuffer<std::byte> workspace(plan.workspace_bytes);

  // Validate: one call on poisoned outputs, so entries the kernel never writes fail the check.
  if (auto failure = validate_on_device(host, device_problem, config, plan, workspace.data(),
                                        stream, reference)) {
    row.status = RowStatus::kInvalid;
    row.detail = std::move(*failure);
    return;
  }

  // Time: one graph calls the variant once per replica, so every call reads its KV from HBM.
  ReplicaTimer timer(device_problem, config, plan, workspace.data(), stream);
  std::vector<double> samples_us = timer.time_calls_us(request.timed_runs);
  row.samples = request.timed_runs;
  row.us = median(std::move(samples_us));
  if (plan.timeline) {  // every call rewrites the records: these are the last one's
    row.timeline.resize(plan.ctas);
    const std::size_t offset =
        kernels::timeline_offset(plan, params.batch, params.num_heads, params.d_v);
    MLALAB_CUDA_TRY(cudaMemcpy(row.timeline.data(), workspace.data() + offset,
                               row.timeline.size() * sizeof(kernels::CtaTimeline),
                               cudaMemcpyDeviceToHost));
  }
  const RowMetrics metrics = row_metrics(host.seq_lens, row.heads, request.layout, row.us);
  row.gbps = metrics.gbps;
  row.tflops = metrics.tflops;
  row.pct_read_bw = kPercent * row.gbps / bandwidth.read_gbps;
}

// ---- CPU backend --------------------------------------------------------------------------

int resolved_cpu_threads(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// "cpu (2 threads)", or "cpu (2 threads on 1 usable CPU)" where the threads outnumber the CPUs
// they may run on, which the times then show.
std::string cpu_backend_text(int threads, int usable_cpus) {
  if (usable_cpus <= 0 || usable_cpus >= threads) return fmt::format("cpu ({} threads)", threads);
  return fmt::format("cpu ({} threads on {})", threads, counted(usable_cpus, "usable CPU"));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void bench_cpu_problem(const BenchRequest& request, int threads, HostProblem& problem,
                       LazyReference& reference, BenchRow& row) {
  row.splits = 1;
  problem.poison_outputs();
  const auto first_start = std::chrono::steady_clock::now();
  if (const auto error = kernels::run_cpu_backend(problem.params(), threads)) {
    row.status = RowStatus::kInvalid;
    row.detail = error->message();
    return;
  }
  const double first_seconds = seconds_since(first_start);
  if (auto failure = reference_mismatch(problem, problem.out, problem.lse, reference)) {
    row.status = RowStatus::kInvalid;
    row.detail = std::move(*failure);
    return;
  }

  int runs = request.timed_runs;
  if (first_seconds > kSlowCpuRunSeconds) {
    const int affordable = static_cast<int>(kCpuRowBudgetSeconds / first_seconds);
    runs = std::clamp(affordable, kMinSlowCpuRuns, request.timed_runs);
  }
  std::vector<double> samples_us;
  samples_us.reserve(runs);
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    if (const auto error = kernels::run_cpu_backend(problem.params(), threads)) {
      row.status = RowStatus::kError;
      row.detail = error->message();
      return;
    }
    samples_us.push_back(seconds_since(start) * kMicrosPerSecond);
  }
  row.samples = runs;
  if (runs < request.timed_runs) row.detail = fmt::format("{} runs", runs);
  row.us = median(std::move(samples_us));
  const RowMetrics metrics = row_metrics(problem.seq_lens, row.heads, request.layout, row.us);
  row.gbps = metrics.gbps;
  row.tflops = metrics.tflops;
}

}  // namespace

std::optional<InputError> validate_request(const BenchRequest& request) {
  const auto range = [](int low, int high) { return fmt::format("[{}, {}]", low, high); };
  if (request.num_heads < 1 || request.num_heads > kMaxHeads) {
    return InputError{"num_heads", std::to_string(request.num_heads), range(1, kMaxHeads)};
  }
  if (request.batches.empty()) return InputError{"batches", "(none)", "at least one batch size"};
  for (std::size_t i = 0; i < request.batches.size(); ++i) {
    if (request.batches[i] < 1 || request.batches[i] > kMaxBatch) {
      return InputError{fmt::format("batches[{}]", i), std::to_string(request.batches[i]),
                        range(1, kMaxBatch)};
    }
  }
  if (request.contexts.empty()) return InputError{"contexts", "(none)", "at least one length"};
  for (std::size_t i = 0; i < request.contexts.size(); ++i) {
    if (request.contexts[i] < 1 || request.contexts[i] > kMaxContext) {
      return InputError{fmt::format("contexts[{}]", i), std::to_string(request.contexts[i]),
                        range(1, kMaxContext)};
    }
  }
  if (!is_power_of_two(request.page_size) || request.page_size > kMaxPageSize) {
    return InputError{"page_size", std::to_string(request.page_size),
                      fmt::format("a power of two in [1, {}]", kMaxPageSize)};
  }
  if (request.timed_runs < kMinTimedRuns || request.timed_runs > kMaxTimedRuns) {
    return InputError{"timed_runs", std::to_string(request.timed_runs),
                      range(kMinTimedRuns, kMaxTimedRuns)};
  }
  if (request.cpu_threads < 0) {
    return InputError{"cpu_threads", std::to_string(request.cpu_threads),
                      "≥ 0 (0 = every hardware thread)"};
  }
  if (request.timeline && !kernels::kTimelineBuild) {
    return InputError{"timeline", "on",
                      "off: this build records no timelines (configure one with "
                      "-DMLALAB_TIMELINE=ON, e.g. MLALAB_TIMELINE=ON bash scripts/build.sh DIR)"};
  }
  if (request.variants.empty()) {
    return InputError{"variants", "(none)", fmt::format("'all' or one of {}", compiled_names())};
  }
  for (std::size_t i = 0; i < request.variants.size(); ++i) {
    const auto& name = request.variants[i];
    if (name != kAllVariants && kernels::find_variant(name) == nullptr) {
      return InputError{fmt::format("variants[{}]", i), name,
                        fmt::format("'all' or a compiled variant: {}", compiled_names())};
    }
  }
  const int max_batch = *std::max_element(request.batches.begin(), request.batches.end());
  const int max_context = *std::max_element(request.contexts.begin(), request.contexts.end());
  return check_kv_cache_size(request.layout, static_cast<std::size_t>(max_batch) * max_context,
                             "batch × context", fmt::format("{} × {}", max_batch, max_context));
}

std::optional<InputError> check_kv_cache_size(Layout layout, std::size_t tokens,
                                              std::string field, const std::string& shape) {
  const std::size_t row_bytes = static_cast<std::size_t>(dims_of(layout).d_qk) * kBf16Bytes;
  const std::size_t kv_bytes = tokens * row_bytes;
  if (kv_bytes <= kMaxProblemKvBytes) return std::nullopt;
  return InputError{std::move(field), fmt::format("{} ({} GiB of KV cache)", shape, kv_bytes >> 30),
                    fmt::format("at most {} GiB of KV cache per problem",
                                kMaxProblemKvBytes >> 30)};
}

int replica_count(std::size_t replica_bytes, std::size_t l2_bytes) {
  constexpr int kMinReplicas = 2;
  if (replica_bytes == 0) return kMinReplicas;
  const std::size_t wanted = (kL2SpanFactor * l2_bytes + replica_bytes - 1) / replica_bytes;
  const std::size_t affordable = kMaxReplicaBytes / replica_bytes;
  const std::size_t capped =
      std::min({wanted, affordable, static_cast<std::size_t>(kMaxReplicas)});
  return std::max(kMinReplicas, static_cast<int>(capped));
}

std::vector<int> drawn_lengths(const dispatch::TunedLengths& lengths, int batch, int context,
                               std::uint64_t seed) {
  if (lengths.equal()) return uniform_lengths(batch, context);
  // ⌈F · context⌉, with a little slack so that a product like 0.035 · 400 = 14.000000000000002
  // is 14, and at least 1 where F · context is below the slack.
  const double shortest = std::ceil(lengths.shortest_fraction * context - 1e-9);
  return uniform_random_lengths(batch, std::max(1, static_cast<int>(shortest)), context, seed);
}

RowMetrics row_metrics(const std::vector<int>& seq_lens, int num_heads, Layout layout,
                       double microseconds) {
  const LayoutDims dims = dims_of(layout);
  const double tokens = std::accumulate(seq_lens.begin(), seq_lens.end(), 0.0);
  const double batch = static_cast<double>(seq_lens.size());
  const double kv_bytes = tokens * dims.d_qk * kBf16Bytes;
  const double q_bytes = batch * num_heads * dims.d_qk * kBf16Bytes;
  const double out_bytes = batch * num_heads * dims.d_v * kBf16Bytes;
  const double flops =
      static_cast<double>(kFlopsPerMac) * tokens * num_heads * (dims.d_qk + dims.d_v);
  const double seconds = microseconds / kMicrosPerSecond;
  return RowMetrics{.gbps = (kv_bytes + q_bytes + out_bytes) / kBytesPerGB / seconds,
                    .tflops = flops / kFlopsPerTflop / seconds};
}

BenchReport run_cuda_bench(const BenchRequest& request, std::ostream* progress) {
  std::string why_not;
  const auto device = query_device(&why_not);
  if (!device) throw std::runtime_error("no usable CUDA device: " + why_not);

  CudaStream stream;
  report_progress(progress, fmt::format("measuring memory bandwidth on {}", device->gpu));
  const Bandwidth bandwidth = measure_bandwidth(stream.get());
  // Read right after the bandwidth kernels, while the GPU still runs at its working clock
  // (an idle GPU reports its idle clock).
  const int clock_after_load = read_sm_clock_mhz();

  BenchReport report;
  report.lengths = dispatch::lengths_text(request.lengths);
  report.environment = BenchEnvironment{
      .gpu = device->gpu,
      .sm_count = device->sm_count,
      .sm_clock_mhz = clock_after_load > 0 ? clock_after_load : device->sm_clock_mhz,
      .driver = device->driver,
      .cuda_runtime = device->cuda_runtime,
      .commit = git_commit(),
      .read_gbps = bandwidth.read_gbps,
      .copy_gbps = bandwidth.copy_gbps,
  };

  const auto variants = select_variants(request, progress);
  const std::size_t total = request.batches.size() * request.contexts.size() * variants.size();
  std::optional<std::string> context_lost;
  for (const int batch : request.batches) {
    for (const int context : request.contexts) {
      const std::vector<int> seq_lens =
          drawn_lengths(request.lengths, batch, context, request.seed);
      std::optional<HostProblem> host;
      std::optional<DeviceProblem> device_problem;
      std::optional<LazyReference> reference;
      std::string problem_error;
      if (!context_lost) {
        try {
          host.emplace(make_problem(problem_spec(request, seq_lens)));
          device_problem.emplace(*host, device->l2_bytes);
          reference.emplace(*host, validation_batch_indices(batch), progress);
        } catch (const std::exception& error) {
          problem_error = error.what();
          if (!context_usable()) context_lost = problem_error;
        }
      }
      for (const auto& selected : variants) {
        BenchRow row = row_skeleton(request, selected.variant->name, context, seq_lens);
        if (context_lost) {
          row.status = RowStatus::kError;
          row.detail = "not run: the CUDA context was lost earlier (" + *context_lost + ")";
        } else if (!problem_error.empty()) {
          row.status = RowStatus::kError;
          row.detail = "problem setup failed: " + problem_error;
        } else if (selected.infeasible) {
          row.status = RowStatus::kInfeasible;
          row.detail = *selected.infeasible;
        } else {
          try {
            bench_variant(selected, request, *host, *device_problem, *reference, *device,
                          bandwidth, stream.get(), row);
          } catch (const std::exception& error) {
            row.status = RowStatus::kError;
            row.detail = error.what();
          }
          // A faulting kernel poisons the context for good: later rows could only fail.
          if (!context_usable()) context_lost = selected.variant->name + ": " + row.detail;
        }
        report.rows.push_back(std::move(row));
        report_progress(progress, row_progress(report.rows.back(), report.rows.size(), total));
      }
    }
  }
  return report;
}

BenchReport run_cpu_bench(const BenchRequest& request, std::ostream* progress) {
  const int threads = resolved_cpu_threads(request.cpu_threads);
  BenchReport report;
  report.lengths = dispatch::lengths_text(request.lengths);
  report.environment = BenchEnvironment{
      .gpu = cpu_backend_text(threads, static_cast<int>(usable_cpu_list().size())),
      .commit = git_commit(),
  };
  const std::size_t total = request.batches.size() * request.contexts.size();
  for (const int batch : request.batches) {
    for (const int context : request.contexts) {
      const std::vector<int> seq_lens =
          drawn_lengths(request.lengths, batch, context, request.seed);
      BenchRow row = row_skeleton(request, kCpuVariantName, context, seq_lens);
      try {
        HostProblem problem = make_problem(problem_spec(request, seq_lens));
        LazyReference reference(problem, validation_batch_indices(batch), progress);
        bench_cpu_problem(request, threads, problem, reference, row);
      } catch (const std::exception& error) {
        row.status = RowStatus::kError;
        row.detail = error.what();
      }
      report.rows.push_back(std::move(row));
      report_progress(progress, row_progress(report.rows.back(), report.rows.size(), total));
    }
  }
  return report;
}

}  // namespace mlalab::bench
