#include "dispatch/feasibility.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/number_text.h"
#include "kernels/device.h"
#include "kernels/launch.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::dispatch {
namespace {

constexpr const char* kSmemRule = "shared memory (no limit: no GPU and no override)";

// A kernel's local size, as the runtime reports it: register spills, or a stack frame (an
// array indexed at run time), which ptxas does not call a spill.
std::string local_memory_use(int bytes) {
  return fmt::format("uses {} B/thread of local memory (spills or a stack frame)",
                     group_thousands(bytes));
}

}  // namespace

bool Feasibility::smem_unchecked() const {
  return feasible && std::find(unchecked.begin(), unchecked.end(), kSmemRule) != unchecked.end();
}

Feasibility judge(const ResourceUsage& usage, std::optional<GpuLimits> limits,
                  std::optional<int> smem_limit_override) {
  Feasibility verdict;
  std::vector<std::string> failures;

  // Shared memory: the stricter of the two limits, named so the user knows which one bit.
  std::optional<int> smem_limit;
  const char* limit_source = "";
  if (limits) {
    smem_limit = limits->smem_optin_bytes;
    limit_source = "the GPU's opt-in limit";
  }
  if (smem_limit_override && (!smem_limit || *smem_limit_override < *smem_limit)) {
    smem_limit = smem_limit_override;
    limit_source = "requested limit";
  }
  const long long smem_total = static_cast<long long>(usage.smem_bytes) + usage.static_smem_bytes;
  if (!smem_limit) {
    verdict.unchecked.emplace_back(kSmemRule);
  } else if (smem_total > *smem_limit) {
    const std::string static_part =
        usage.static_smem_bytes > 0
            ? fmt::format(" ({} dynamic + {} static)", group_thousands(usage.smem_bytes),
                          group_thousands(usage.static_smem_bytes))
            : "";
    failures.push_back(fmt::format("needs {} B of shared memory{}, limit {} B ({})",
                                   group_thousands(smem_total), static_part,
                                   group_thousands(*smem_limit), limit_source));
  }

  if (!usage.spill_bytes) {
    verdict.unchecked.emplace_back("spills (no GPU)");
  } else if (*usage.spill_bytes > 0) {
    failures.push_back(local_memory_use(*usage.spill_bytes));
  }

  if (!usage.regs) {
    verdict.unchecked.emplace_back("registers (no GPU)");
  } else if (limits) {
    if (*usage.regs > limits->max_regs_per_thread) {
      failures.push_back(fmt::format("uses {} registers/thread, limit {}", *usage.regs,
                                     limits->max_regs_per_thread));
    } else if (usage.threads > 0 &&
               static_cast<long long>(*usage.regs) * usage.threads > limits->regs_per_sm) {
      failures.push_back(fmt::format("0 CTAs fit per SM: {} threads × {} registers > {} per SM",
                                     usage.threads, *usage.regs,
                                     group_thousands(limits->regs_per_sm)));
    }
  }

  if (usage.required_compute_capability != 0 && limits && limits->compute_capability != 0 &&
      limits->compute_capability != usage.required_compute_capability) {
    failures.push_back(fmt::format("needs sm_{}a (wgmma), this GPU is sm_{}",
                                   usage.required_compute_capability,
                                   limits->compute_capability));
  }

  if (!usage.max_ctas_per_sm) {
    verdict.unchecked.emplace_back("occupancy (no GPU)");
  } else if (*usage.max_ctas_per_sm <= 0 && failures.empty()) {
    failures.emplace_back("0 CTAs fit per SM");
  }

  verdict.feasible = failures.empty();
  verdict.reason = fmt::format("{}", fmt::join(failures, "; "));
  return verdict;
}

ResourceUsage planned_usage(const VariantShape& shape, int d_qk) {
  ResourceUsage usage;
  usage.smem_bytes = kernels::decode_smem_bytes(shape, d_qk);
  usage.threads = kernels::threads_of(shape);
  if (shape.family == KernelFamily::kWgmma) {
    usage.required_compute_capability = kernels::wgmma::kComputeCapability;
  }
  return usage;
}

cudaError_t query_usage(const kernels::Variant& variant, int d_qk, ResourceUsage* usage) {
  *usage = planned_usage(variant.shape, d_qk);
  cudaFuncAttributes attributes{};
  if (const auto status = cudaFuncGetAttributes(&attributes, variant.handles.decode_kernel);
      status != cudaSuccess) {
    return status;
  }
  usage->static_smem_bytes = static_cast<int>(attributes.sharedSizeBytes);
  usage->regs = attributes.numRegs;
  usage->spill_bytes = static_cast<int>(attributes.localSizeBytes);
  int ctas = 0;
  const auto status = kernels::max_ctas_per_sm(variant, d_qk, &ctas);
  // Architecture-specific code on another GPU: judged by the architecture rule, not an error.
  if (status == cudaErrorNoKernelImageForDevice && usage->required_compute_capability != 0) {
    usage->max_ctas_per_sm = 0;
    return cudaSuccess;
  }
  if (status != cudaSuccess) return status;
  usage->max_ctas_per_sm = ctas;
  int balanced_ctas = 0;
  if (const auto balanced = kernels::max_ctas_per_sm(variant, d_qk, &balanced_ctas, true);
      balanced != cudaSuccess) {
    return balanced;
  }
  usage->max_balanced_ctas_per_sm = balanced_ctas;
  cudaFuncAttributes balanced_attributes{};
  if (const auto status =
          cudaFuncGetAttributes(&balanced_attributes, variant.handles.balanced_kernel);
      status != cudaSuccess) {
    return status;
  }
  usage->balanced_spill_bytes = static_cast<int>(balanced_attributes.localSizeBytes);
  if (kernels::wgmma::merges_split_pairs(variant.shape)) {
    int clusters = 0;
    if (const auto status = kernels::max_split_pair_clusters(variant, d_qk, &clusters);
        status != cudaSuccess) {
      return status;
    }
    usage->max_split_pair_clusters = clusters;
  }
  return cudaSuccess;
}

std::optional<std::string> balanced_launch_refusal(const ResourceUsage& usage) {
  if (usage.balanced_spill_bytes.value_or(0) > 0) {
    return "its balanced kernel " + local_memory_use(*usage.balanced_spill_bytes);
  }
  if (usage.max_balanced_ctas_per_sm && *usage.max_balanced_ctas_per_sm < 1) {
    return std::string("no CTA of its balanced kernel fits on an SM");
  }
  return std::nullopt;
}

kernels::DeviceSlots Placement::slots(int sm_count) const {
  const int balanced = verdict.feasible ? usage.max_balanced_ctas_per_sm.value_or(0) : 0;
  return {.sm_count = sm_count,
          .ctas_per_sm = std::max(1, ctas_per_sm()),
          .balanced_ctas_per_sm = balanced > 0 ? balanced : std::max(1, ctas_per_sm()),
          .split_pairs_fit = usage.max_split_pair_clusters.value_or(1) > 0};
}

std::optional<GpuLimits> current_gpu_limits() {
  const kernels::CurrentDevice& device = kernels::current_device();
  if (!device.present) return std::nullopt;
  return GpuLimits{.smem_optin_bytes = device.smem_optin_bytes,
                   .smem_per_sm_bytes = device.smem_per_sm_bytes,
                   .compute_capability = device.compute_capability};
}

Placement judge_here(const VariantShape& shape, int d_qk,
                     std::optional<int> smem_limit_override) {
  Placement placement{.usage = planned_usage(shape, d_qk), .verdict = {}, .measured = false};
  const std::optional<GpuLimits> limits = current_gpu_limits();
  const kernels::Variant* variant = kernels::find_variant(shape);
  if (limits && variant != nullptr) {
    if (const cudaError_t status = query_usage(*variant, d_qk, &placement.usage);
        status != cudaSuccess) {
      cudaGetLastError();  // clear it: the next variant's queries must not see it
      placement.verdict.feasible = false;
      placement.verdict.reason = fmt::format(
          "cannot be queried on this GPU (sm_{}: {}): was its architecture in "
          "MLALAB_CUDA_ARCHS?",
          limits->compute_capability, cudaGetErrorString(status));
      return placement;
    }
    placement.measured = true;
  }
  placement.verdict = judge(placement.usage, limits, smem_limit_override);
  return placement;
}

std::vector<PlacedVariant> place_compiled_variants(int d_qk,
                                                   std::optional<int> smem_limit_override) {
  std::vector<PlacedVariant> table;
  for (const kernels::Variant& variant : kernels::compiled_variants()) {
    table.push_back({.variant = &variant,
                     .placement = judge_here(variant.shape, d_qk, smem_limit_override)});
  }
  return table;
}

std::string feasible_text(const Feasibility& verdict) {
  if (!verdict.feasible) return "no";
  return verdict.smem_unchecked() ? "unknown" : "yes";
}

std::string reason_text(const Feasibility& verdict) {
  if (verdict.smem_unchecked()) return "no shared-memory limit: no GPU and no --smem-limit";
  return verdict.reason;
}

nlohmann::ordered_json variant_table_json(const std::vector<PlacedVariant>& table) {
  const auto optional_json = [](const std::optional<int>& value) {
    return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
  };
  auto list = nlohmann::ordered_json::array();
  for (const auto& [variant, placement] : table) {
    const VariantShape& shape = variant->shape;
    const ResourceUsage& usage = placement.usage;
    list.push_back(
        {{"name", variant->name},
         {"family", shape.family == KernelFamily::kWgmma ? "wgmma" : "portable"},
         {"block_h", shape.block_h},
         {"block_t", shape.block_t},
         {"warps", shape.warps},
         {"stages", shape.stages},
         {"whole_tiles", shape.whole_tiles},
         {"smem_bytes", usage.smem_bytes},
         {"static_smem_bytes",
          placement.measured ? nlohmann::ordered_json(usage.static_smem_bytes) : nullptr},
         {"regs", optional_json(usage.regs)},
         {"spill_bytes", optional_json(usage.spill_bytes)},
         {"max_ctas_per_sm", optional_json(usage.max_ctas_per_sm)},
         {"max_balanced_ctas_per_sm", optional_json(usage.max_balanced_ctas_per_sm)},
         {"balanced_spill_bytes", optional_json(usage.balanced_spill_bytes)},
         {"feasible", placement.verdict.feasible},
         {"reason", reason_text(placement.verdict)},
         {"unchecked", placement.verdict.unchecked},
         {"measured", placement.measured},
         {"code_hash", variant->code_hash},
         {"code_hash_with_names", variant->code_hash_with_names}});
  }
  return list;
}

}  // namespace mlalab::dispatch
