// The experiment parser (experiment.cpp) with this build and this machine: the variants the
// build compiled, and the feasibility of each kernel arm's variant on this GPU.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ab/experiment.h"
#include "dispatch/feasibility.h"
#include "kernels/registry.h"

namespace mlalab::ab {
namespace {

// The most shared memory one CTA may opt in to on any GPU mlalab builds for: 227 KiB on sm_90
// (and sm_100). Without a GPU only a variant whose plan exceeds this is certain to run nowhere.
constexpr int kLargestSmemOptinBytes = 232448;

ParseInputs inputs_here(const ParseOptions& options) {
  ParseInputs inputs;
  if (options.compiled_variants) {
    inputs.compiled_variants = *options.compiled_variants;
  } else {
    for (const auto& variant : kernels::compiled_variants()) {
      inputs.compiled_variants.push_back(variant.name);
    }
  }
  inputs.feasibility = options.feasibility ? options.feasibility : default_feasibility_check();
  return inputs;
}

}  // namespace

FeasibilityCheck default_feasibility_check() {
  return [](const VariantShape& shape, Layout layout) -> std::optional<std::string> {
    const int d_qk = dims_of(layout).d_qk;
    if (dispatch::current_gpu_limits()) {
      const dispatch::Placement placement = dispatch::judge_here(shape, d_qk);
      if (placement.verdict.feasible) return std::nullopt;
      return placement.verdict.reason + " (on this GPU)";
    }
    // No GPU: only a variant that can run nowhere is refused here; the runner, on a GPU,
    // judges the rest.
    const dispatch::Placement placement = dispatch::judge_here(shape, d_qk, kLargestSmemOptinBytes);
    if (placement.verdict.feasible) return std::nullopt;
    return placement.verdict.reason +
           " (no GPU here: judged on the plan against the largest shared memory per CTA that "
           "any supported GPU allows)";
  };
}

Experiment parse_experiment(const std::string& text, const std::string& path_for_errors,
                            const ParseOptions& options) {
  return parse_experiment_text(text, path_for_errors, inputs_here(options));
}

Experiment load_experiment(const std::string& path, const ParseOptions& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw ExperimentError(path, 0, "", fmt::format("cannot open the file: {}",
                                                   std::strerror(errno)));
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) {
    throw ExperimentError(path, 0, "", fmt::format("cannot read the file: {}",
                                                   std::strerror(errno)));
  }
  return parse_experiment(text.str(), path, options);
}

}  // namespace mlalab::ab
