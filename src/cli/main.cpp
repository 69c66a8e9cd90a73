// mlalab: the command-line entry. Composes the subcommands; every failure ends here as a
// message on stderr and exit status 2, never as an abort.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/cuda_raii.h"
#include "bench/device_info.h"
#include "cli/ab_command.h"
#include "cli/bench_command.h"
#include "cli/configs_command.h"
#include "cli/exit_status.h"
#include "cli/tune_command.h"
#include "cli/unknown_subcommand.h"
#include "cli/verify_command.h"
#include "cli/worker_command.h"

namespace {

using mlalab::cli::kExitError;

constexpr const char* kDescription =
    "mlalab: the lab for tuning LLM decode attention: MLA (DeepSeek multi-head latent\n"
    "attention) over a paged latent KV cache, in the V3 (rows of 576 = 512 latent + 64 rope)\n"
    "and V4 (512 = 448 + 64) layouts.\n"
    "\n"
    "It ships a family of CUDA decode kernels whose occupancy knobs are run-time choices: the\n"
    "tile shape (heads and KV tokens per CTA, warps, pipeline stages) picks one of the compiled\n"
    "variants, the split policy picks how many CTAs share a sequence. It prunes the variants\n"
    "that cannot run well on a GPU (shared memory, register spills, occupancy), and it checks\n"
    "every variant against a reference before timing it.\n";

constexpr const char* kFooter =
    "Examples:\n"
    "  mlalab configs                      the compiled variants and their resources\n"
    "  mlalab configs --smem-limit 101376  ... and which ones a 99 KiB GPU prunes\n"
    "  mlalab bench                        validate and time the default variant\n"
    "  mlalab bench --variant all --batch 1,64 --context 4096 --json results.json\n"
    "  mlalab ab experiments/occupancy.toml  A/B-test the study's knobs over a concurrency sweep\n"
    "  mlalab tune --heads 16              race variants and splits per batch: a tuning table\n"
    "  mlalab verify results/<run>/fingerprint.json  is this build what was measured?\n"
    "\n"
    "Run 'mlalab <subcommand> --help' (or 'mlalab help <subcommand>') for a subcommand's\n"
    "options.\n"
    "Exit status: 0 success; 1 a run failed (e.g. a variant did not match the reference);\n"
    "2 a usage error, or an error that stopped mlalab (e.g. no usable GPU for --backend cuda,\n"
    "an output path that cannot be written: both are checked before anything runs); the\n"
    "message goes to stderr.";

// The word CLI11 could not place when no subcommand was recognised: "bnech" in `mlalab bnech`.
// (mlalab itself takes no positional arguments, so the first one is meant as a subcommand.)
std::optional<std::string> unknown_subcommand_word(const CLI::App& app) {
  if (!app.get_subcommands().empty()) return std::nullopt;
  const std::vector<std::string> unplaced = app.remaining();
  if (unplaced.empty() || unplaced.front().starts_with('-')) return std::nullopt;
  return unplaced.front();
}

// The option a subcommand could not place, and that subcommand: "--hedas" in
// `mlalab bench --hedas 4` (CLI11 would say "The following arguments were not expected").
std::optional<std::pair<CLI::App*, std::string>> unknown_option(const CLI::App& app) {
  for (CLI::App* subcommand : app.get_subcommands()) {
    for (const std::string& word : subcommand->remaining()) {
      if (word.starts_with("--")) return std::make_pair(subcommand, word);
    }
  }
  return std::nullopt;
}

std::vector<std::string> long_option_names(const CLI::App& subcommand) {
  std::vector<std::string> names;
  for (const CLI::Option* option : subcommand.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

std::vector<std::string> subcommand_names(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* subcommand : app.get_subcommands([](CLI::App*) { return true; })) {
    names.push_back(subcommand->get_name());
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "mlalab"};
  app.footer(kFooter);
  app.set_version_flag("--version", fmt::format("mlalab {} (commit {})", MLALAB_VERSION,
                                                mlalab::bench::git_commit()));
  app.require_subcommand(1);

  int exit_code = 0;
  mlalab::cli::add_configs_command(app, exit_code);
  mlalab::cli::add_bench_command(app, exit_code);
  mlalab::cli::add_verify_command(app, exit_code);
  mlalab::cli::add_ab_command(app, exit_code);
  mlalab::cli::add_tune_command(app, exit_code);
  mlalab::cli::add_worker_command(app, exit_code);

  // `mlalab help` and `mlalab help bench`, as git and pip read them: --help of that level.
  std::vector<char*> arguments(argv, argv + argc);
  static char help_flag[] = "--help";
  if (argc >= 2 && std::string_view(argv[1]) == "help") {
    arguments.erase(arguments.begin() + 1);
    arguments.insert(arguments.begin() + std::min<std::ptrdiff_t>(2, argc - 1), help_flag);
  }

  try {
    app.parse(static_cast<int>(arguments.size()), arguments.data());
  } catch (const CLI::ParseError& error) {
    if (const auto word = unknown_subcommand_word(app)) {
      fmt::print(stderr, "{}Run with --help for more information.\n",
                 mlalab::cli::unknown_subcommand_message(*word, subcommand_names(app)));
      return kExitError;
    }
    if (const auto option = unknown_option(app);
        option && dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
      const auto& [subcommand, word] = *option;
      fmt::print(stderr, "{}", mlalab::cli::unknown_option_message(
                                   subcommand->get_name(), word, long_option_names(*subcommand)));
      return kExitError;
    }
    // --help and --version arrive here too, with exit code 0.
    const int status = app.exit(error);
    return status == 0 ? 0 : kExitError;
  } catch (const mlalab::bench::CudaError& error) {
    fmt::print(stderr, "mlalab: CUDA error: {}\n", error.what());
    return kExitError;
  } catch (const std::exception& error) {
    fmt::print(stderr, "mlalab: error: {}\n", error.what());
    return kExitError;
  }
  return exit_code;
}
