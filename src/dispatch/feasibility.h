#pragma once
// Feasibility pruning: may a compiled variant run well on a GPU at all? The verdict is a pure
// function of the variant's resource usage and the GPU's limits, so it is tested without a
// GPU; gathering the usage is the only part that needs one (registers, spills, occupancy).
//
// The rules, in order (every failing rule is named in the reason):
//   shared memory   dynamic + static bytes per CTA ≤ the limit: the smaller of the GPU's
//                   opt-in limit and the override (e.g. 101,376 B, consumer Blackwell's)
//   spills          0 bytes of local memory per thread. A spilling kernel is pruned: decode is
//                   memory-bound, and local-memory traffic competes with the KV stream.
//   registers       ≤ max_regs_per_thread, and one CTA's registers fit in the SM's file
//   architecture    the variant's family runs on this GPU (the wgmma family: sm_90a only)
//   occupancy       ≥ 1 resident CTA per SM (only named when no rule above explains it)
// A rule whose inputs are unknown (no GPU, no limit) is not failed but listed as unchecked.
// Every variant also compiles a balanced kernel (the balanced split policy), which may hold
// more registers: the rules above judge the split kernel, which every launch can use, and
// balanced_launch_refusal holds the balanced one to the spill and occupancy rules, so that a
// variant whose balanced kernel spills runs split launches only.
#include <cuda_runtime_api.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/kernel_config.h"
#include "kernels/registry.h"

namespace mlalab::dispatch {

struct ResourceUsage {
  int smem_bytes = 0;         // dynamic, from the family's plan (kernels::decode_smem_bytes)
  int static_smem_bytes = 0;  // __shared__ arrays of the compiled kernel; 0 when unknown (no GPU)
  int threads = 0;            // per CTA; 0 when unknown
  std::optional<int> regs;             // registers per thread (compiled kernel)
  std::optional<int> spill_bytes;      // local memory bytes per thread (compiled kernel)
  std::optional<int> max_ctas_per_sm;  // resident CTAs per SM (occupancy calculator)
  std::optional<int> max_balanced_ctas_per_sm;  // the same for the balanced kernel
  std::optional<int> balanced_spill_bytes;      // and its local memory bytes per thread
  std::optional<int> max_split_pair_clusters;   // resident clusters of two split CTAs, for
                                                // variants that merge split pairs
  int required_compute_capability = 0;  // 90 for sm_90a-only code; 0 for any architecture
};

struct GpuLimits {
  int smem_optin_bytes = 0;   // largest shared memory one CTA may opt in to
  int smem_per_sm_bytes = 0;
  int regs_per_sm = 65536;    // every architecture from sm_50 to sm_120
  int max_regs_per_thread = 255;
  int compute_capability = 0; // 10 · major + minor, e.g. 90; 0 when unknown
};

struct Feasibility {
  bool feasible = true;  // false only when a known limit is exceeded
  std::string reason;    // why not, e.g. "needs 142,544 B of shared memory, limit 101,376 B
                         // (requested limit)"; empty when feasible
  std::vector<std::string> unchecked;  // rules that could not be evaluated, e.g. "spills (no GPU)"

  // True when nothing failed but the shared-memory rule could not be evaluated: the verdict
  // is then "unknown" rather than "yes".
  bool smem_unchecked() const;
};

// Why a feasible variant's balanced launch should not be offered (its balanced kernel spills,
// or no CTA of it fits on an SM), or nullopt; unknown inputs (no GPU) refuse nothing.
std::optional<std::string> balanced_launch_refusal(const ResourceUsage& usage);

// The verdict for one variant. `smem_limit_override` (bytes) models another GPU's limit; with
// both limits present the smaller one applies.
Feasibility judge(const ResourceUsage& usage, std::optional<GpuLimits> limits,
                  std::optional<int> smem_limit_override);

// Usage known without a GPU: the shared-memory plan from the traits and the thread count.
ResourceUsage planned_usage(const VariantShape& shape, int d_qk);

// Usage of a compiled variant on the current GPU: registers, local memory and static shared
// memory from cudaFuncGetAttributes, resident CTAs per SM from kernels::max_ctas_per_sm.
// Returns the first failing CUDA call's status (e.g. cudaErrorNoDevice, or
// cudaErrorNoKernelImageForDevice when the build lacks this GPU's architecture); `usage` then
// holds the planned part only.
cudaError_t query_usage(const kernels::Variant& variant, int d_qk, ResourceUsage* usage);

// The limits of this process's GPU (kernels::current_device), or nullopt without one.
std::optional<GpuLimits> current_gpu_limits();

// A variant judged for this machine at a row width: the one answer to "can it run here, and
// why not" that bench, the A/B lab, configs and the tuner share.
//   Compiled, with a GPU: its resources as compiled (query_usage) against the GPU's limits and
//   the override if given. A kernel that cannot be queried (its architecture was not built)
//   is infeasible, with that reason.
//   Otherwise (no GPU, or a shape this build did not compile): its shared-memory plan against
//   the GPU's limits if there is one, and the override; the rules that need the compiled
//   kernel are listed as unchecked.
struct Placement {
  ResourceUsage usage;
  Feasibility verdict;
  bool measured = false;  // usage came from the compiled kernel on this GPU

  // Resident CTAs per SM on this GPU; 0 when infeasible or unknown.
  int ctas_per_sm() const { return verdict.feasible ? usage.max_ctas_per_sm.value_or(0) : 0; }
  // What plan_launch needs on a GPU of `sm_count` SMs (at least one resident CTA).
  kernels::DeviceSlots slots(int sm_count) const;
};
Placement judge_here(const VariantShape& shape, int d_qk,
                     std::optional<int> smem_limit_override = std::nullopt);

// Far above any GPU's per-CTA shared memory (227 KiB on sm_90): a larger override is a typo.
constexpr int kMaxSmemLimitOverrideBytes = 1 << 20;

// The variant table: every compiled variant judged here at a row width, in registry order.
struct PlacedVariant {
  const kernels::Variant* variant = nullptr;
  Placement placement;
};
std::vector<PlacedVariant> place_compiled_variants(int d_qk,
                                                   std::optional<int> smem_limit_override);

// The verdict in a word: "no" (a known limit is exceeded), "unknown" (nothing failed, but
// there is no shared-memory limit to judge against: no GPU and no override) or "yes".
std::string feasible_text(const Feasibility& verdict);
// The reason as printed and written: why not; for an unknown verdict, what is missing.
std::string reason_text(const Feasibility& verdict);

// The table as `mlalab configs --json` writes it and mlalab.configs() returns it: one object
// per variant (name, shape, family, shared memory, registers, spills, occupancy of both
// builds, the verdict, the rules left unchecked, whether measured, the code hash in both
// forms, kernels::VariantCodeHashes).
nlohmann::ordered_json variant_table_json(const std::vector<PlacedVariant>& table);

}  // namespace mlalab::dispatch
