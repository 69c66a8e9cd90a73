#pragma once
// Graph-safe dispatch: what a serving engine calls every decode step. Everything a launch
// needs (variant, split, grid, workspace) is resolved by prepare(), before any CUDA-graph
// capture; while a stream is capturing, run() only looks up what was prepared, so a capture
// never contains a benchmark, an allocation or a synchronize.
//
//   dispatch::Dispatcher dispatcher(Layout::kV3, /*num_heads=*/16, /*page_size=*/64,
//                                   dispatch::read_table("h200-v3-h16.json"));
//   const std::vector<dispatch::DispatchKey> keys = {{.batch = 8, .max_context = 4096},
//                                                    {.batch = 64, .max_context = 4096}};
//   dispatcher.prepare(keys);
//   cudaStreamBeginCapture(stream, ...);
//   dispatcher.run(params, /*max_context=*/4096, stream);   // params.batch == 8
//   cudaStreamEndCapture(stream, &graph);                    // replay with any lengths ≤ 4096
//
// A key is (batch, max context): the launch shape depends on it alone, never on the live
// sequence lengths (the kernels split each sequence by its own length on the device), so one
// captured graph serves every step whose lengths stay within its max context. With the
// balanced split (for batches of mixed lengths) the grid depends on the batch alone and every
// launch shares the live tokens evenly over it (README, split policies).
#include <cuda_runtime_api.h>

#include <compare>
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/decode_params.h"
#include "core/kernel_config.h"
#include "core/layout.h"
#include "dispatch/tuning_table.h"
#include "kernels/launch.h"
#include "kernels/split_plan.h"

namespace mlalab::dispatch {

struct DispatchKey {
  int batch = 0;        // the call's batch, as captured
  int max_context = 0;  // the longest sequence any replay may have, in tokens
  auto operator<=>(const DispatchKey&) const = default;
  std::string to_string() const;  // "batch 8, max context 4096"
};

// What one key resolved to.
struct ResolvedLaunch {
  KernelConfig config;       // the variant, and its split as fixed:N or balanced:W
  kernels::LaunchPlan plan;  // grid and workspace
  std::string source;        // "table: entry batch 8, context 4096" or "default: ..."
};

// The config a key gets without a table, or when the table has no entry for it: the preferred
// compiled variant that can run here (on sm_90a: for up to 16 heads, wgmma_h16_t64_w4_s2 for a
// batch below 8 or one that holds fewer than 262,144 tokens at its max context; then
// wgmma_h64_t32_w8_s4, else wgmma_h64_t64_w8_s2, for 64 heads or more, or for a batch of 8 or
// more that holds 32,768 tokens or more; else h16_t16_w4_s2, else the first compiled variant
// that can), with `split` (default the heuristic). Throws std::runtime_error when no compiled
// variant can run here.
KernelConfig default_config(Layout layout, int num_heads, DispatchKey key, SplitPolicy split = {});

// Resolves one key with no side effect: the table's entry (bucket_of on both axes) when a table
// is given and has one, else default_config with `default_split`; then the launch plan on
// this GPU. Throws std::invalid_argument for a key out of range (batch or max_context < 1),
// naming the field.
ResolvedLaunch resolve_launch(Layout layout, int num_heads, int page_size,
                              const TuningTable* table, DispatchKey key,
                              SplitPolicy default_split = {});

// Thrown by run() for a key that was not prepared while the stream is capturing: nothing was
// enqueued, and the capture stays usable.
class UnpreparedKey : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class Dispatcher {
 public:
  // Without a table every key gets default_config with `default_split`: the heuristic, or
  // balanced for serving's mixed lengths. A table must match this process (identity_mismatch)
  // and this problem (layout, heads, page size); else throws TableError naming the field that
  // differs. Heads or a page size no call could have throw std::invalid_argument naming the
  // field and its range, as DecodeParams validation words them.
  Dispatcher(Layout layout, int num_heads, int page_size,
             std::optional<TuningTable> table = std::nullopt, SplitPolicy default_split = {});
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Resolves every key and grows the workspace to the largest any of them needs (one
  // allocation). Call outside capture: it allocates. Growing keeps the old workspace until the
  // dispatcher goes, since graphs captured before hold its address: prepare every key before
  // the first capture to allocate once. Throws std::invalid_argument for a bad key,
  // std::logic_error when called while `capture_check_stream` (if given) is capturing, and
  // std::runtime_error with CUDA's text when the allocation fails or when a workspace is needed
  // and there is no device. A throw prepares none of the new keys and changes nothing else.
  void prepare(std::span<const DispatchKey> keys, cudaStream_t capture_check_stream = nullptr);

  // Launches the call with the prepared resolution of (params.batch, max_context). Outside a
  // capture an unprepared key is prepared first (which may grow the workspace: see prepare);
  // inside one it throws UnpreparedKey naming the key and saying to call prepare(). A refused
  // or failed launch comes back as the status (kernels::launch_failure_text words it); a call
  // of another problem (heads, layout or page size) than the dispatcher's is refused as
  // kInvalidInput, since its workspace was sized for this one.
  kernels::LaunchStatus run(const DecodeParams& params, int max_context, cudaStream_t stream);

  // The resolution of a prepared key, or null.
  const ResolvedLaunch* find(DispatchKey key) const;
  std::size_t workspace_bytes() const { return workspace_bytes_; }
  // The problem it serves.
  Layout layout() const { return layout_; }
  int num_heads() const { return num_heads_; }
  int page_size() const { return page_size_; }

 private:
  Layout layout_;
  int num_heads_;
  int page_size_;
  std::optional<TuningTable> table_;
  SplitPolicy default_split_;
  std::map<DispatchKey, ResolvedLaunch> resolved_;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  std::vector<void*> retired_workspaces_;  // outgrown, still held by graphs captured before
};

}  // namespace mlalab::dispatch
