#include "cli/verify_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "ab/arms.h"
#include "ab/environment.h"
#include "ab/experiment.h"
#include "ab/runner.h"
#include "ab/sha256.h"
#include "ab/worker.h"
#include "bench/device_info.h"
#include "cli/exit_status.h"
#include "cli/option_checks.h"
#include "kernels/registry.h"
#include "report/fingerprint.h"

namespace mlalab::cli {
namespace {

constexpr int kExitVerified = 0;
constexpr int kExitDifferent = 1;

struct VerifyOptions {
  std::string fingerprint_path;
  std::string backend;          // empty: the recorded one
  std::string experiment_path;  // empty: configs are not compared
  std::optional<double> heat_ms;  // the run's --heat-ms, applied to the experiment file
  std::optional<int> launches_per_sample;  // and its --launches-per-sample
};

// The declared arm that a recorded arm corresponds to: the baseline by its role (whatever its
// name), a variant by its name.
const ab::Arm* declared_arm(const ab::Experiment& experiment, const report::FingerprintArm& arm) {
  if (arm.role == ab::ArmRole::kBaseline) return &experiment.baseline;
  const auto found = std::find_if(experiment.variants.begin(), experiment.variants.end(),
                                  [&](const ab::Arm& variant) { return variant.name == arm.name; });
  return found == experiment.variants.end() ? nullptr : &*found;
}

// What this build holds for a kernel arm it runs itself on `backend`: its code hash, or why
// there is none. A GPU arm recorded before code hashes left kernel names out
// (kernels::VariantCodeHashes) is compared in the form it was recorded in.
std::string current_code_hash(const ab::KernelArm& kernel, Backend backend,
                              const std::string& recorded) {
  if (backend == Backend::kCpu) return std::string(kernels::cpu_backend_code_hash());
  try {
    const std::string hash = ab::cuda_code_hash(kernel);
    if (hash.empty()) return "none: not compiled into this build";
    if (hash == recorded) return hash;
    const std::string with_names = ab::cuda_code_hash(kernel, ab::CodeHashForm::kWithNames);
    return with_names == recorded ? with_names : hash;
  } catch (const std::exception& error) {
    return fmt::format("none: {}", error.what());  // the tuned arm's table cannot be read
  }
}

// The code hash of an arm that another process runs (another build's `mlalab worker`, the
// Python worker), as that worker gives it now; empty (unknown) when it cannot be started.
std::string worker_code_hash(const ab::KernelArm& kernel, Backend backend) {
  try {
    const auto worker = kernel.python.empty()
                            ? ab::make_worker_backend(kernel.build, backend, nullptr)
                            : ab::make_python_worker_backend(backend, nullptr);
    return worker->code_hash(kernel);
  } catch (const std::exception&) {
    return {};
  }
}

report::FingerprintArm current_arm(const report::FingerprintArm& recorded, const ab::Arm* declared,
                                   Backend backend) {
  report::FingerprintArm arm{.name = recorded.name,
                             .role = recorded.role,
                             .config_text = recorded.config_text,
                             .config = {},
                             .code_hash = {},
                             .valid = recorded.valid};
  std::optional<ab::KernelArm> run_here;  // a kernel arm this build runs itself
  if (declared != nullptr) {
    arm.config = report::config_fields(*declared, backend);
    arm.config_text = ab::arm_config_text(*declared);
    if (const auto* kernel = std::get_if<ab::KernelArm>(&declared->config)) {
      if (ab::worker_of(*kernel).empty()) {
        run_here = *kernel;
      } else {
        arm.code_hash = worker_code_hash(*kernel, backend);
      }
    } else {
      arm.code_hash = ab::sha256_hex(std::get<ab::CommandArm>(declared->config).command);
    }
  } else if (const auto found = recorded.config.find("variant");
             found != recorded.config.end() && found->second &&
             !recorded.config.contains("build") && !recorded.config.contains("python")) {
    // (Another process's arm: without the experiment file its worker is not known now.)
    run_here = ab::KernelArm{.variant = *found->second, .split = {}};
  }
  // A command arm's code is its command line: without the experiment file it is not known now.
  if (run_here) arm.code_hash = current_code_hash(*run_here, backend, recorded.code_hash);
  return arm;
}

// This machine as a run on `backend` records it (ab/environment.h), so that verify and the
// runner read the machine the same way. Without a usable GPU a cuda run cannot be verified at
// all: as for a cuda run, that is an error (exit 2), not a difference.
// `backend_option`: whether --backend chose `backend` (else the fingerprint did).
report::Fingerprint current_machine(Backend backend, bool backend_option) {
  if (backend == Backend::kCpu) return report::machine_fingerprint(ab::cpu_environment());
  if (backend == Backend::kNone) return report::machine_fingerprint(ab::command_environment());
  std::string why_not;
  const auto device = bench::query_device(&why_not);
  if (!device) {
    throw std::runtime_error(
        backend_option
            ? fmt::format("--backend cuda: this machine has no usable CUDA device ({})", why_not)
            : fmt::format("the run was on the cuda backend and this machine has no usable CUDA "
                          "device ({}): its GPU cannot be compared; run verify where the GPU is",
                          why_not));
  }
  return report::machine_fingerprint(ab::cuda_environment(*device));
}

report::Fingerprint current_fingerprint(const report::Fingerprint& recorded,
                                        Backend backend, bool backend_option,
                                        const std::optional<ab::Experiment>& experiment) {
  report::Fingerprint current = current_machine(backend, backend_option);
  current.experiment = recorded.experiment;
  if (experiment) current.sweep = report::sweep_fields(*experiment);
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
                                .config = report::config_fields(variant, backend),
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
  Backend backend = Backend::kCuda;
  report::Fingerprint current;
  try {
    recorded = report::read_fingerprint(options.fingerprint_path);
    if (!options.experiment_path.empty()) {
      experiment = ab::with_overrides(ab::load_experiment(options.experiment_path),
                                      ab::Overrides{.heat_ms = options.heat_ms,
                                                    .launches_per_sample =
                                                        options.launches_per_sample});
    }
    backend = !options.backend.empty() ? parse_backend(options.backend).value_or(Backend::kCuda)
                                       : recorded.backend.value_or(Backend::kCuda);
    current = current_fingerprint(recorded, backend, !options.backend.empty(), experiment);
  } catch (const std::exception& error) {
    fmt::print(stderr, "mlalab verify: error: {}\n", error.what());
    return kExitError;
  }
  const report::Comparison comparison = report::compare_fingerprints(recorded, current);

  fmt::print("Recorded: experiment {} ({}): {}, commit {}\n", or_unknown(recorded.experiment),
             or_unknown(recorded.started_utc), ab::ran_on_text(report::machine_of(recorded)),
             or_unknown(recorded.commit));
  fmt::print("Current:  {}, commit {}\n", ab::ran_on_text(report::machine_of(current)),
             or_unknown(current.commit));
  fmt::print("Compared: {}{}\n",
             comparison.compared.empty() ? "nothing"
                                         : fmt::format("{}", fmt::join(comparison.compared, ", ")),
             comparison.noted.empty()
                 ? ""
                 : fmt::format("; noted when different: {}", fmt::join(comparison.noted, ", ")));
  if (!comparison.not_compared.empty()) {
    fmt::print("Not compared: {}\n", fmt::join(comparison.not_compared, ", "));
  }
  if (!experiment) {
    fmt::print("The sweep and the configs not compared: pass --experiment FILE to compare "
               "them\n");
  }

  std::vector<std::string> blocking;
  std::vector<std::string> notes;
  for (const report::Difference& difference : comparison.differences) {
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
      "Check that this build and machine match a recorded fingerprint.json (from mlalab ab): "
      "the GPU or the host's CPU, the arms' code hashes, and with --experiment the sweep and "
      "the arms' configs");
  auto options = std::make_shared<VerifyOptions>();
  command->add_option("fingerprint", options->fingerprint_path, "fingerprint.json of a run")
      ->required();
  command
      ->add_option("--backend", options->backend,
                   "the backend to compare as (default: the recorded one)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  command->add_option("--experiment", options->experiment_path,
                      "the experiment file as it is now: compare the sweep (layout, heads, page "
                      "size, concurrency, context, launches per sample, heat) and every arm's "
                      "config with it");
  add_checked_option(*command, "--heat-ms", options->heat_ms, heat_milliseconds(),
                     "with --experiment: the --heat-ms the run was given (its command line in "
                     "results.json says), applied to the file as `mlalab ab` did")
      ->type_name("MS");
  add_checked_option(*command, "--launches-per-sample", options->launches_per_sample,
                     launches_per_sample(),
                     "with --experiment: the --launches-per-sample the run was given, as for "
                     "--heat-ms")
      ->type_name("N");
  command->footer(
      "What must match depends on the recorded backend: cuda the GPU, its SM count and peak\n"
      "clocks; cpu the CPU model, hardware threads and usable CPUs (taskset counts); none\n"
      "(command arms) those and the GPUs visible; on every backend each arm's code hash (the\n"
      "variant's SASS, the CPU backend's machine code, the command line) and, with\n"
      "--experiment, its config and the sweep. Only noted: the commit (the code hashes decide), the driver\n"
      "and CUDA runtime, and the host: another host with the same CPU or GPU measures alike,\n"
      "and a container's host name changes at every start. The Compared: line lists exactly\n"
      "what was compared.\n"
      "Exit status: 0 verified; 1 differences (one line each: what, recorded, current); 2 an\n"
      "error (unreadable fingerprint or experiment file, or a cuda run and no usable GPU here).\n"
      "\n"
      "Examples:\n"
      "  mlalab verify results/occupancy-20261201T120000Z/fingerprint.json\n"
      "  mlalab verify results/occupancy-20261201T120000Z/fingerprint.json \\\n"
      "      --experiment experiments/occupancy.toml      the sweep and the arms' configs too");
  command->callback([options, &exit_code] { exit_code = run_verify(*options); });
  return command;
}

}  // namespace mlalab::cli
