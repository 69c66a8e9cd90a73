#include "cli/verify_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ab/experiment.h"
#include "ab/sha256.h"
#include "bench/device_info.h"
#include "kernels/registry.h"
#include "report/fingerprint.h"

namespace mlalab::cli {
namespace {

constexpr int kExitVerified = 0;
constexpr int kExitDifferent = 1;
constexpr int kExitError = 2;

struct VerifyOptions {
  std::string fingerprint_path;
  std::string backend;          // empty: the recorded one
  std::string experiment_path;  // empty: configs are not compared
};

// The declared arm that a recorded arm corresponds to: the baseline by its role (whatever its
// name), a variant by its name.
const ab::Arm* declared_arm(const ab::Experiment& experiment, const report::FingerprintArm& arm) {
  if (arm.role == ab::ArmRole::kBaseline) return &experiment.baseline;
  const auto found = std::find_if(experiment.variants.begin(), experiment.variants.end(),
                                  [&](const ab::Arm& variant) { return variant.name == arm.name; });
  return found == experiment.variants.end() ? nullptr : &*found;
}

// What this build holds for a kernel variant: its code hash, or why there is none.
std::string current_code_hash(const std::string& variant) {
  if (variant == ab::kCpuVariant) return {};  // the CPU backend has no SASS to hash
  const kernels::Variant* compiled = kernels::find_variant(variant);
  return compiled != nullptr ? compiled->code_hash : "none: not compiled into this build";
}

report::FingerprintArm current_arm(const report::FingerprintArm& recorded, const ab::Arm* declared,
                                   const std::string& backend) {
  report::FingerprintArm arm{.name = recorded.name,
                             .role = recorded.role,
                             .config_text = recorded.config_text,
                             .config = {},
                             .code_hash = {},
                             .valid = recorded.valid};
  std::string variant;
  if (declared != nullptr) {
    arm.config = report::config_fields(*declared);
    arm.config_text = ab::arm_config_text(*declared);
    if (const auto* kernel = std::get_if<ab::KernelArm>(&declared->config)) {
      variant = kernel->variant;
    } else {
      arm.code_hash = ab::sha256_hex(std::get<ab::CommandArm>(declared->config).command);
    }
  } else if (const auto found = recorded.config.find("variant"); found != recorded.config.end()) {
    variant = found->second;
  }
  // The CPU backend runs no variant's SASS: there is nothing to hash.
  if (!variant.empty() && backend == "cuda") arm.code_hash = current_code_hash(variant);
  return arm;
}

report::Fingerprint current_fingerprint(const report::Fingerprint& recorded,
                                        const std::string& backend,
                                        const std::optional<ab::Experiment>& experiment) {
  report::Fingerprint current;
  current.experiment = recorded.experiment;
  current.backend = backend;
  current.commit = bench::git_commit();
  if (backend == "cuda") {
    std::string why_not;
    if (const auto device = bench::query_device(&why_not)) {
      current.gpu = device->gpu;
      current.sm_count = device->sm_count;
      current.sm_clock_mhz = device->sm_clock_mhz;
      current.max_sm_clock_mhz = device->max_sm_clock_mhz;
      current.driver = device->driver;
      current.cuda_runtime = device->cuda_runtime;
    } else {
      current.gpu = fmt::format("no GPU: cannot compare ({})", why_not);
    }
  }
  for (const report::FingerprintArm& arm : recorded.arms) {
    if (arm.role == ab::ArmRole::kBaselineRepeat) continue;
    const ab::Arm* declared = experiment ? declared_arm(*experiment, arm) : nullptr;
    if (experiment && declared == nullptr) continue;  // gone from the file: a difference
    current.arms.push_back(current_arm(arm, declared, backend));
  }
  if (experiment) {
    // Arms the file declares now that the run did not have.
    for (const ab::Arm& variant : experiment->variants) {
      const bool recorded_arm =
          std::any_of(recorded.arms.begin(), recorded.arms.end(),
                      [&](const report::FingerprintArm& arm) { return arm.name == variant.name; });
      if (!recorded_arm) {
        current.arms.push_back({.name = variant.name,
                                .role = ab::ArmRole::kVariant,
                                .config_text = ab::arm_config_text(variant),
                                .config = report::config_fields(variant),
                                .code_hash = {},
                                .valid = true});
      }
    }
  }
  return current;
}

std::string or_unknown(const std::string& text) { return text.empty() ? "unknown" : text; }

int run_verify(const VerifyOptions& options) {
  report::Fingerprint recorded;
  std::optional<ab::Experiment> experiment;
  try {
    recorded = report::read_fingerprint(options.fingerprint_path);
    if (!options.experiment_path.empty()) {
      experiment = ab::load_experiment(options.experiment_path);
    }
  } catch (const std::exception& error) {
    fmt::print(stderr, "mlalab verify: error: {}\n", error.what());
    return kExitError;
  }
  const std::string backend =
      !options.backend.empty() ? options.backend
                               : (recorded.backend.empty() ? std::string("cuda") : recorded.backend);

  const report::Fingerprint current = current_fingerprint(recorded, backend, experiment);
  const std::vector<report::Difference> differences =
      report::compare_fingerprints(recorded, current);

  int kernel_arms = 0;
  for (const report::FingerprintArm& arm : recorded.arms) {
    const auto kind = arm.config.find("kind");
    if (arm.role != ab::ArmRole::kBaselineRepeat && kind != arm.config.end() &&
        kind->second == "kernel") {
      ++kernel_arms;
    }
  }
  fmt::print("Recorded: experiment {} ({}): backend {}, GPU {}, commit {}\n",
             or_unknown(recorded.experiment), or_unknown(recorded.started_utc),
             or_unknown(recorded.backend), or_unknown(recorded.gpu), or_unknown(recorded.commit));
  fmt::print("Current:  backend {}, GPU {}, commit {}\n", backend,
             backend == "cuda" ? or_unknown(current.gpu) : "not used", or_unknown(current.commit));
  const std::string hashes =
      backend == "cuda"
          ? fmt::format("the code hashes of {} kernel arm{}", kernel_arms,
                        kernel_arms == 1 ? "" : "s")
          : "no code hashes (the CPU backend runs no kernel code)";
  fmt::print("Compared: backend, GPU, SM count and peak clock, {}, {}\n", hashes,
             experiment ? fmt::format("every arm's config against {}", options.experiment_path)
                        : "no configs (pass --experiment FILE to compare them)");

  std::vector<std::string> blocking;
  std::vector<std::string> notes;
  for (const report::Difference& difference : differences) {
    (difference.blocking ? blocking : notes).push_back(report::difference_line(difference));
  }
  if (blocking.empty()) {
    fmt::print("verified\n");
  } else {
    fmt::print("{} difference{}:\n", blocking.size(), blocking.size() == 1 ? "" : "s");
    for (const std::string& line : blocking) fmt::print("  {}\n", line);
  }
  for (const std::string& line : notes) fmt::print("note: {}\n", line);
  return blocking.empty() ? kExitVerified : kExitDifferent;
}

}  // namespace

CLI::App* add_verify_command(CLI::App& app, int& exit_code) {
  CLI::App* command = app.add_subcommand(
      "verify",
      "Check that this build and GPU match a recorded fingerprint.json (from mlalab ab): GPU, "
      "kernel code hashes, and with --experiment the arms' configs");
  auto options = std::make_shared<VerifyOptions>();
  command->add_option("fingerprint", options->fingerprint_path, "fingerprint.json of a run")
      ->required();
  command
      ->add_option("--backend", options->backend,
                   "the backend to compare as (default: the recorded one)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  command->add_option("--experiment", options->experiment_path,
                      "the experiment file as it is now: compare every arm's config with it");
  command->footer(
      "Exit status: 0 verified; 1 differences (one line each: what, recorded, current); 2 an "
      "error (unreadable fingerprint or experiment file).");
  command->callback([options, &exit_code] { exit_code = run_verify(*options); });
  return command;
}

}  // namespace mlalab::cli
