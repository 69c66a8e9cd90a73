#include "cli/configs_command.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/device_info.h"
#include "cli/exit_status.h"
#include "cli/option_checks.h"
#include "core/atomic_file.h"
#include "core/layout.h"
#include "core/number_text.h"
#include "core/text_table.h"
#include "kernels/registry.h"
#include "dispatch/feasibility.h"

namespace mlalab::cli {
namespace {

constexpr const char* kUnknown = "-";

struct ConfigsOptions {
  std::string layout = "v3";
  std::optional<int> smem_limit;
  std::string json_path;
};

std::string optional_text(const std::optional<int>& value) {
  return value ? group_thousands(*value) : kUnknown;
}

void print_table(const std::vector<dispatch::PlacedVariant>& rows) {
  // Names and words left-aligned, numbers right-aligned; the reason is last.
  const std::vector<TextColumn> columns = {
      {"variant", false},       {"block_h", true},       {"block_t", true},
      {"warps", true},          {"stages", true},        {"regs", true},
      {"smem dynamic B", true}, {"smem static B", true}, {"spill B", true},
      {"CTAs/SM", true},        {"balanced CTAs/SM", true}, {"balanced spill B", true},
      {"feasible", false},      {"reason", false}};
  std::vector<TextRow> cells;
  for (const auto& [variant, placement] : rows) {
    const VariantShape& shape = variant->shape;
    const dispatch::ResourceUsage& usage = placement.usage;
    cells.push_back({variant->name, std::to_string(shape.block_h), std::to_string(shape.block_t),
                     std::to_string(shape.warps), std::to_string(shape.stages),
                     optional_text(usage.regs), group_thousands(usage.smem_bytes),
                     placement.measured ? group_thousands(usage.static_smem_bytes) : kUnknown,
                     optional_text(usage.spill_bytes), optional_text(usage.max_ctas_per_sm),
                     optional_text(usage.max_balanced_ctas_per_sm),
                     optional_text(usage.balanced_spill_bytes),
                     dispatch::feasible_text(placement.verdict),
                     dispatch::reason_text(placement.verdict)});
  }
  print_plain_table(std::cout, columns, cells);
}

int run_configs(const ConfigsOptions& options) {
  const Layout layout = *parse_layout(options.layout);  // CLI::IsMember admitted only these
  const int d_qk = dims_of(layout).d_qk;

  std::string why_no_gpu;
  const auto device = bench::query_device(&why_no_gpu);

  const auto variants = kernels::compiled_variants();
  fmt::print("{} compiled kernel variant{}, layout {} (d_qk {}, d_v {})\n", variants.size(),
             variants.size() == 1 ? "" : "s", name_of(layout), d_qk, dims_of(layout).d_v);
  if (device) {
    fmt::print("GPU: {} (sm_{}{}), shared-memory opt-in limit {} B per CTA\n", device->gpu,
               device->cc_major, device->cc_minor,
               group_thousands(device->smem_optin_bytes));
  } else {
    fmt::print("No GPU ({}): shared memory is the plan from the kernel traits; "
               "registers, spills and occupancy need a GPU (shown as {}).\n",
               why_no_gpu, kUnknown);
  }
  if (options.smem_limit) {
    fmt::print("Shared-memory limit: {} B per CTA (--smem-limit{})\n",
               group_thousands(*options.smem_limit),
               device ? "; the smaller limit applies" : "");
  } else if (!device) {
    fmt::print("Shared-memory feasibility is unknown without a limit: pass --smem-limit BYTES "
               "(e.g. 101376, consumer Blackwell's).\n");
  }
  fmt::print("\n");

  const auto rows = dispatch::place_compiled_variants(d_qk, options.smem_limit);
  print_table(rows);
  const auto count = [&](const char* verdict) {
    return std::count_if(rows.begin(), rows.end(), [&](const dispatch::PlacedVariant& row) {
      return dispatch::feasible_text(row.placement.verdict) == verdict;
    });
  };
  fmt::print("\n{} feasible, {} pruned, {} unknown\n", count("yes"), count("no"), count("unknown"));

  if (!options.json_path.empty()) {
    try {
      write_file_atomically(options.json_path,
                            [&](std::ostream& out) {
        out << dispatch::variant_table_json(rows).dump(2) << '\n';
      });
    } catch (const std::runtime_error& error) {
      fmt::print(stderr, "mlalab configs: --json: {}\n", error.what());
      return kExitError;
    }
    fmt::print("Wrote {} variants to {}\n", rows.size(), options.json_path);
  }
  return 0;
}

}  // namespace

CLI::App* add_configs_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ConfigsOptions>();
  CLI::App* command = app.add_subcommand(
      "configs", "List the compiled kernel variants, their resources and feasibility");
  command->add_option("--layout", options->layout,
                      "Cache layout whose row width sizes the shared memory: v3 (d_qk 576, "
                      "the larger) or v4 (d_qk 512)")
      ->check(CLI::IsMember({"v3", "v4"}))
      ->capture_default_str();
  const IntegerRange smem_limit_range{
      .low = 1, .high = dispatch::kMaxSmemLimitOverrideBytes, .unit = "bytes"};
  add_checked_option(*command, "--smem-limit", options->smem_limit, integer_in(smem_limit_range),
                     fmt::format("Also judge shared memory per CTA against BYTES, in {} (the "
                                 "smaller of this and the GPU's opt-in limit applies). 101376 "
                                 "(99 KiB) is the opt-in limit of consumer Blackwell (sm_120, "
                                 "e.g. RTX 5090): use it to see which tiles such a GPU prunes.",
                                 range_text(smem_limit_range)))
      ->type_name("BYTES");
  add_checked_option(*command, "--json", options->json_path, output_file(),
                     "Also write the list to FILE as JSON: one object per variant with the keys "
                     "name, family (portable or wgmma), block_h, block_t, warps, stages, "
                     "whole_tiles (a _whole variant: each KV tile taken whole), smem_bytes "
                     "(dynamic), static_smem_bytes, regs, spill_bytes, "
                     "max_ctas_per_sm, max_balanced_ctas_per_sm, balanced_spill_bytes (these "
                     "null when unknown: no GPU), feasible, reason (empty when feasible and fully "
                     "checked), unchecked (the rules that could not be evaluated), measured "
                     "(whether a GPU was asked), code_hash (of the variant's compiled code, "
                     "its kernels' names left out) and code_hash_with_names (the form recorded "
                     "before 2026-12-06, which also covers them)")
      ->type_name("FILE");
  command->footer(
      "A variant is feasible when it fits the shared-memory limit, does not spill to local\n"
      "memory (decode is memory-bound, so spilling variants are pruned), and at least one CTA\n"
      "fits per SM. Registers, spills and occupancy need a GPU. Without one, shared memory is\n"
      "the plan of the kernel traits, and feasibility comes from --smem-limit alone:\n"
      "\"unknown\" without it (JSON: feasible true, reason saying what is missing).\n"
      "Every variant has a second kernel for the balanced split policy (a fixed grid sharing\n"
      "the batch's tokens); the table judges the split kernel, and 'balanced CTAs/SM' is the\n"
      "balanced kernel's occupancy, which sizes its one-wave grid.\n"
      "\n"
      "Exit status: 0 listed; 2 a usage error, or a --json path that cannot be written (checked\n"
      "before anything runs).\n"
      "\n"
      "Examples:\n"
      "  mlalab configs\n"
      "  mlalab configs --layout v4 --smem-limit 101376 --json configs.json");
  command->callback([options, &exit_code] { exit_code = run_configs(*options); });
  return command;
}

}  // namespace mlalab::cli
