#include "dispatch/dispatcher.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <string_view>
#include <utility>
#include <vector>

#include "core/number_text.h"
#include "core/validate.h"
#include "dispatch/feasibility.h"
#include "kernels/device.h"
#include "kernels/registry.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::dispatch {
namespace {

// The 32-token variant first: it was 4-5 % faster than the 64-token one at H = 128 from
// concurrency 8 on and 27 % at 1, and 1-4 % (39 % at 1) at H = 16, when that one ran the
// lockstep schedule (docs/results/2026-12-02-h200-seesaw/); in pairs of tiles since, it is
// within 1 % from concurrency 32 on and 8 % slower at 8 (docs/results/2026-12-04-h200-v42/).
// The 64-token one where only it is compiled.
constexpr std::string_view kPreferredWgmma[] = {"wgmma_h64_t32_w8_s4", "wgmma_h64_t64_w8_s2"};
constexpr std::string_view kPreferredPortable = "h16_t16_w4_s2";
// A wgmma CTA always computes 64 heads. With fewer heads most of its MMA rows are padding, yet
// once a batch holds enough tokens its tensor-core reads of whole 64-token tiles still beat the
// portable kernel's 16-head tiles; below that the portable kernel's many small CTAs start
// sooner. Measured at H = 16 on the H200: at 4,096 tokens per sequence the wgmma kernel
// +4.0 to +12.5 % (V3) and +0.7 to +20.2 % (V4) from batch 8 to 128, −2 to −28 % at 1 to 4
// (docs/results/2026-12-01-h200-default-h16/); at 1,024 and 2,048 tokens per sequence it
// loses up to 26.6 % below 32,768 tokens per batch and wins 7.0 to 12.0 % from there
// (docs/results/2026-12-01-h200-default-tokens/). Both measured with the 64-token variant
// when it ran the lockstep schedule, which the seesaw one beat at every concurrency measured
// since (4,096 tokens).
constexpr int kWgmmaMinHeads = 64;
constexpr int kWgmmaMinBatch = 8;
constexpr long long kWgmmaMinBatchTokens = 32768;  // batch × max context
// Up to 16 heads the swapped kernel (16 heads per CTA, the tile's tokens as the MMAs' M) comes
// before both: measured at H = 16 (V3, heuristic splits, 45 keys of batch 1-128 × 512-16,384
// tokens, docs/results/2026-12-02-h200-v30/default-h16/) it is the fastest or within 2.5 % of
// the fastest wherever a batch holds fewer than 262,144 tokens (+1.7 to +12.6 % over the
// seesaw at 4,096 tokens, batch 1-32), and 1-4 % behind the seesaw from there (batch 128 at
// 2,048 and 4,096 tokens, batch 16-128 at 16,384), except below batch 8, where it leads at
// every length measured (+7 to +11 % at 16,384 tokens).
constexpr std::string_view kSwappedWgmma = "wgmma_h16_t64_w4_s2";
constexpr int kSwappedMaxHeads = 16;
constexpr long long kSwappedMaxBatchTokens = 262144;  // batch × max context, exclusive

// A key no call can have is a caller's mistake; it is named like an InputError.
void check_key(DispatchKey key) {
  if (key.batch < 1 || key.batch > kMaxBatch) {
    throw std::invalid_argument(
        "dispatch key: " +
        InputError{"batch", std::to_string(key.batch), fmt::format("[1, {}]", kMaxBatch)}
            .message());
  }
  if (key.max_context < 1) {
    throw std::invalid_argument(
        "dispatch key: " +
        InputError{"max_context", std::to_string(key.max_context), "≥ 1 (tokens)"}.message());
  }
}

// The problem a dispatcher serves, in the ranges validate_shapes allows a call.
void check_problem(int num_heads, int page_size) {
  if (num_heads < 1 || num_heads > kMaxHeads) {
    throw std::invalid_argument(
        "dispatcher: " +
        InputError{"num_heads", std::to_string(num_heads), fmt::format("[1, {}]", kMaxHeads)}
            .message());
  }
  if (page_size < 1 || page_size > kMaxPageSize ||
      !std::has_single_bit(static_cast<unsigned>(page_size))) {
    throw std::invalid_argument(
        "dispatcher: " + InputError{"page_size", std::to_string(page_size),
                                    fmt::format("a power of two in [1, {}]", kMaxPageSize)}
                             .message());
  }
}

// Whether work enqueued on `stream` now would be captured rather than run. The legacy stream
// cannot be used while another stream captures (cudaErrorStreamCaptureImplicit), which counts
// as capturing: nothing may allocate then either. A stream that cannot be queried at all (no
// device) cannot be capturing; the launch reports that error.
bool is_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  const cudaError_t status = cudaStreamIsCapturing(stream, &capture);
  if (status == cudaSuccess) return capture != cudaStreamCaptureStatusNone;
  cudaGetLastError();  // not sticky: leave no error behind for the caller's next check
  return status == cudaErrorStreamCaptureImplicit;
}

KernelConfig table_config(const TableEntry& entry, int d_qk) {
  const std::optional<VariantShape> shape = parse_variant_name(entry.variant);
  const std::string where =
      fmt::format("tuning table entry batch {}, context {}", entry.batch, entry.context);
  if (!shape) {
    throw std::runtime_error(fmt::format("{}: '{}' is not a variant name", where, entry.variant));
  }
  if (kernels::find_variant(*shape) == nullptr) {  // cannot_run_reason says so in its words
    throw std::runtime_error(
        fmt::format("{}: {}", where, kernels::cannot_run_reason(*shape, d_qk).value()));
  }
  return KernelConfig{.shape = *shape, .split = tuned_split(entry.splits, entry.workers)};
}

}  // namespace

std::string DispatchKey::to_string() const {
  return fmt::format("batch {}, max context {}", batch, max_context);
}

KernelConfig default_config(Layout layout, int num_heads, DispatchKey key, SplitPolicy split) {
  std::vector<const kernels::Variant*> candidates;
  const auto consider = [&](const kernels::Variant* variant) {
    if (variant != nullptr && std::find(candidates.begin(), candidates.end(), variant) ==
                                  candidates.end()) {
      candidates.push_back(variant);
    }
  };
  const long long batch_tokens = static_cast<long long>(key.batch) * key.max_context;
  const bool sm90a =
      kernels::current_device().compute_capability == kernels::wgmma::kComputeCapability;
  if (sm90a && num_heads <= kSwappedMaxHeads &&
      (key.batch < kWgmmaMinBatch || batch_tokens < kSwappedMaxBatchTokens)) {
    consider(kernels::find_variant(kSwappedWgmma));
  }
  const bool enough_tokens =
      key.batch >= kWgmmaMinBatch && batch_tokens >= kWgmmaMinBatchTokens;
  if (sm90a && (num_heads >= kWgmmaMinHeads || enough_tokens)) {
    for (const std::string_view name : kPreferredWgmma) consider(kernels::find_variant(name));
  }
  consider(kernels::find_variant(kPreferredPortable));
  for (const kernels::Variant& variant : kernels::compiled_variants()) consider(&variant);

  std::vector<std::string> refusals;
  for (const kernels::Variant* variant : candidates) {
    const Placement placement = judge_here(variant->shape, dims_of(layout).d_qk);
    if (placement.verdict.feasible) return KernelConfig{.shape = variant->shape, .split = split};
    refusals.push_back(fmt::format("{}: {}", variant->name, placement.verdict.reason));
  }
  if (refusals.empty()) {
    throw std::runtime_error(
        "no default config: this build compiled no variant (MLALAB_VARIANTS)");
  }
  throw std::runtime_error(fmt::format("no default config: no compiled variant can run {} here: {}",
                                       name_of(layout), fmt::join(refusals, "; ")));
}

ResolvedLaunch resolve_launch(Layout layout, int num_heads, int page_size,
                              const TuningTable* table, DispatchKey key,
                              SplitPolicy default_split) {
  check_key(key);
  const LayoutDims dims = dims_of(layout);
  ResolvedLaunch resolved;
  const TableEntry* entry = table != nullptr ? table->find(key.batch, key.max_context) : nullptr;
  if (entry != nullptr) {
    resolved.config = table_config(*entry, dims.d_qk);
    resolved.source = fmt::format("table: entry batch {}, context {}", entry->batch,
                                  entry->context);
  } else {
    resolved.config = default_config(layout, num_heads, key, default_split);
    resolved.source = fmt::format("default: {}, {} split", variant_name(resolved.config.shape),
                                  resolved.config.split.to_string());
  }
  // The plan reads the problem's sizes only, and the longest sequence from the key: never the
  // live lengths, so that every replay of a captured call launches the same grid.
  const DecodeParams sizes{.batch = key.batch,
                           .num_heads = num_heads,
                           .d_qk = dims.d_qk,
                           .d_v = dims.d_v,
                           .page_size = page_size};
  const Placement placement = judge_here(resolved.config.shape, dims.d_qk);
  resolved.plan = kernels::plan_launch(sizes, resolved.config, key.max_context,
                                       placement.slots(kernels::current_device().sm_count));
  return resolved;
}

Dispatcher::Dispatcher(Layout layout, int num_heads, int page_size,
                       std::optional<TuningTable> table, SplitPolicy default_split)
    : layout_(layout),
      num_heads_(num_heads),
      page_size_(page_size),
      table_(std::move(table)),
      default_split_(default_split) {
  check_problem(num_heads_, page_size_);
  if (!table_) return;
  // The problem is part of the identity, so a table of another layout, head count or page
  // size is refused here too.
  if (const auto mismatch = mismatch_here(*table_, layout_, num_heads_, page_size_)) {
    throw TableError("the tuning table does not fit this process: " + *mismatch);
  }
}

Dispatcher::~Dispatcher() {
  if (workspace_ != nullptr) cudaFree(workspace_);
  for (void* retired : retired_workspaces_) cudaFree(retired);
}

void Dispatcher::prepare(std::span<const DispatchKey> keys, cudaStream_t capture_check_stream) {
  if (capture_check_stream != nullptr && is_capturing(capture_check_stream)) {
    throw std::logic_error(
        "Dispatcher::prepare was called while the stream is capturing: it may allocate, which "
        "a capture must not contain; prepare every key before the capture begins");
  }
  // Resolved aside and added only once the workspace fits them all, so that a prepared key
  // always has the workspace its plan needs.
  std::map<DispatchKey, ResolvedLaunch> fresh;
  std::size_t needed = workspace_bytes_;
  std::optional<DispatchKey> widest;  // the fresh key needing the most workspace, past the old
  for (const DispatchKey& key : keys) {
    if (resolved_.contains(key) || fresh.contains(key)) continue;
    ResolvedLaunch resolved =
        resolve_launch(layout_, num_heads_, page_size_, table_ ? &*table_ : nullptr, key,
                       default_split_);
    if (resolved.plan.workspace_bytes > needed) {
      needed = resolved.plan.workspace_bytes;
      widest = key;
    }
    fresh.emplace(key, std::move(resolved));
  }

  if (widest) {
    const std::string needed_text = group_thousands(static_cast<long long>(needed));
    if (!kernels::current_device().present) {
      throw std::runtime_error(fmt::format(
          "Dispatcher::prepare: {} needs {} B of split-KV workspace, and there is no CUDA "
          "device to allocate it on",
          widest->to_string(), needed_text));
    }
    // The old workspace stays allocated (retired) until the dispatcher goes: graphs captured
    // before hold its address, and must never run into freed memory. If the new one cannot be
    // had, nothing changes: the keys prepared before still have theirs.
    void* grown = nullptr;
    if (const cudaError_t allocated = cudaMalloc(&grown, needed); allocated != cudaSuccess) {
      cudaGetLastError();  // not sticky: leave no error behind for the caller's next check
      throw std::runtime_error(fmt::format("Dispatcher::prepare: cudaMalloc of {} B of "
                                           "workspace failed: {}",
                                           needed_text, cudaGetErrorString(allocated)));
    }
    if (workspace_ != nullptr) retired_workspaces_.push_back(workspace_);
    workspace_ = grown;
    workspace_bytes_ = needed;
  }
  resolved_.merge(fresh);
}

kernels::LaunchStatus Dispatcher::run(const DecodeParams& params, int max_context,
                                      cudaStream_t stream) {
  // Its plans and workspace were sized for this dispatcher's problem: another head count could
  // overrun the workspace.
  const LayoutDims dims = dims_of(layout_);
  if (params.num_heads != num_heads_ || params.d_qk != dims.d_qk || params.d_v != dims.d_v ||
      params.page_size != page_size_) {
    return {.error = cudaErrorInvalidValue, .refusal = kernels::LaunchRefusal::kInvalidInput};
  }
  const DispatchKey key{.batch = params.batch, .max_context = max_context};
  auto found = resolved_.find(key);
  if (found == resolved_.end()) {
    check_key(key);
    if (is_capturing(stream)) {
      throw UnpreparedKey(fmt::format(
          "no prepared launch for {} while the stream is capturing: call Dispatcher::prepare "
          "with this key before capture",
          key.to_string()));
    }
    prepare(std::span(&key, 1));
    found = resolved_.find(key);
  }
  const ResolvedLaunch& resolved = found->second;
  return kernels::launch(params, resolved.config, resolved.plan, workspace_, stream);
}

const ResolvedLaunch* Dispatcher::find(DispatchKey key) const {
  const auto found = resolved_.find(key);
  return found != resolved_.end() ? &found->second : nullptr;
}

}  // namespace mlalab::dispatch
