#include "cli/bench_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_runner.h"
#include "bench/device_info.h"
#include "bench/printers.h"
#include "core/kernel_config.h"
#include "core/layout.h"
#include "core/validate.h"
#include "kernels/registry.h"
#include "kernels/split_plan.h"

namespace mlalab::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsageError = 2;

// The study's production analogue: 16 heads per CTA as DeepSeek's TP-8 slice has.
constexpr const char* kPreferredVariant = "h16_t16_w4_s2";
// GPU defaults: a single decode step and a full serving batch at a typical context.
constexpr const char* kGpuDefaultBatches = "1,64";
constexpr const char* kGpuDefaultContexts = "4096";
// CPU defaults: small enough that the fp64 reference and 20 timed runs finish in seconds
// on two cores.
constexpr const char* kCpuDefaultBatches = "1,4";
constexpr const char* kCpuDefaultContexts = "1024";
constexpr int kDefaultHeads = 16;
constexpr int kDefaultPageSize = 64;
constexpr std::uint64_t kDefaultSeed = 1;

enum class BackendChoice { kAuto, kCuda, kCpu };

struct BenchOptions {
  std::string layout = "v3";
  int heads = kDefaultHeads;
  std::string batches;   // empty: the backend's default
  std::string contexts;  // empty: the backend's default
  int page_size = kDefaultPageSize;
  std::string variants;  // empty: default_variant()
  std::string split = "heuristic";
  std::string json_path;
  std::string backend = "auto";
  int runs = bench::kMinTimedRuns;
  std::uint64_t seed = kDefaultSeed;
  // Set after parsing: whether CUDA-only options were given, to say they are ignored on CPU.
  const CLI::Option* variant_option = nullptr;
  const CLI::Option* split_option = nullptr;
};

std::string default_variant() {
  if (kernels::find_variant(kPreferredVariant) != nullptr) return kPreferredVariant;
  return kernels::compiled_variants().front().name;
}

std::string compiled_names() {
  std::string names;
  for (const auto& variant : kernels::compiled_variants()) {
    names += (names.empty() ? "" : ", ") + variant.name;
  }
  return names;
}

std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    parts.emplace_back(text.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return parts;
}

// "1,8,64" → {1, 8, 64}, each in [low, high]; the error says which element and why.
std::optional<std::vector<int>> parse_int_list(std::string_view text, int low, int high,
                                               std::string* error) {
  std::vector<int> values;
  for (const auto& part : split_commas(text)) {
    int value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc{} || end != part.data() + part.size()) {
      *error = fmt::format("'{}' is not an integer (expected a comma-separated list such as "
                           "1,8,64)", part);
      return std::nullopt;
    }
    if (value < low || value > high) {
      *error = fmt::format("{} is out of range: allowed [{}, {}]", value, low, high);
      return std::nullopt;
    }
    values.push_back(value);
  }
  return values;
}

CLI::Validator int_list_validator(int low, int high) {
  return CLI::Validator(
      [low, high](std::string& text) {
        std::string error;
        return parse_int_list(text, low, high, &error) ? std::string{} : error;
      },
      fmt::format("each in [{}, {}]", low, high), "int_list");
}

CLI::Validator page_size_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        int value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        const bool whole = ec == std::errc{} && end == text.data() + text.size();
        if (whole && value >= 1 && value <= kMaxPageSize && (value & (value - 1)) == 0) return {};
        return fmt::format("'{}': allowed a power of two in [1, {}]", text, kMaxPageSize);
      },
      fmt::format("power of two in [1, {}]", kMaxPageSize), "page_size");
}

CLI::Validator variant_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        for (const auto& name : split_commas(text)) {
          if (name != bench::kAllVariants && kernels::find_variant(name) == nullptr) {
            return fmt::format("unknown variant '{}': allowed 'all' or a compiled variant: {}",
                               name, compiled_names());
          }
        }
        return {};
      },
      "", "variant");
}

CLI::Validator split_validator() {
  return CLI::Validator(
      [](std::string& text) {
        std::string error;
        return parse_split_policy(text, &error) ? std::string{} : error;
      },
      "", "split");
}

CLI::Validator json_path_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto parent = std::filesystem::path(text).parent_path();
        std::error_code error;
        if (parent.empty() || std::filesystem::is_directory(parent, error)) return {};
        return fmt::format("folder '{}' does not exist", parent.string());
      },
      "", "json_path");
}

std::string footer() {
  return fmt::format(R"(Split policies (--split):
  heuristic        the split count minimising waves x (steps per split + {}), where a wave is
                   SMs x resident CTAs of the variant: whole waves, no needless splitting;
                   at least {} steps of block_t tokens per split, at most {} splits
  fixed:N          exactly N splits, N in [1, {}] (capped so every split has tokens)
  target_ctas:T    the fewest splits with batch x head_blocks x splits >= T (T >= 1)

Every variant is first run once and checked against an fp64 reference (on up to 8 sequences
of a large batch); a variant that disagrees is reported INVALID, not timed, and makes the
exit status 1. Timing rotates over copies of the inputs spanning >= 4x the L2 cache, so the
KV cache comes from HBM; the result is the median of --runs samples. GB/s counts the KV
cache once plus q and out; %read compares it with this GPU's streaming-read bandwidth,
measured in the same run.

Examples:
  mlalab bench                                    defaults (CPU backend without a GPU)
  mlalab bench --variant all --batch 1,8,64 --context 1024,8192 --json results.json
  mlalab bench --layout v4 --heads 64 --split fixed:4)",
                     kernels::kPrologueSteps, kernels::kMinTilesPerSplit,
                     kernels::kMaxHeuristicSplits, kMaxSplits);
}

void register_options(CLI::App& command, BenchOptions* raw) {
  command.add_option("--layout", raw->layout,
                     "Cache layout: v3 (d_qk 576 = 512 latent + 64 rope) or v4 (d_qk 512). "
                     "Default: v3")
      ->check(CLI::IsMember({"v3", "v4"}));
  command.add_option("--heads", raw->heads,
                     fmt::format("Query heads per sequence (all share one latent KV head). "
                                 "Default: {}", kDefaultHeads))
      ->check(CLI::Range(1, kMaxHeads));
  command.add_option("--batch", raw->batches,
                     fmt::format("Batch sizes, comma-separated, each timed separately. "
                                 "Default: {} on a GPU, {} on the CPU",
                                 kGpuDefaultBatches, kCpuDefaultBatches))
      ->type_name("LIST")
      ->check(int_list_validator(1, kMaxBatch));
  command.add_option("--context", raw->contexts,
                     fmt::format("KV tokens per sequence, comma-separated. Default: {} on a "
                                 "GPU, {} on the CPU", kGpuDefaultContexts, kCpuDefaultContexts))
      ->type_name("LIST")
      ->check(int_list_validator(1, bench::kMaxContext));
  command.add_option("--page-size", raw->page_size,
                     fmt::format("Tokens per page of the paged KV cache (pages are scattered "
                                 "at random). Default: {}", kDefaultPageSize))
      ->check(page_size_validator());
  raw->variant_option =
      command.add_option("--variant", raw->variants,
                         fmt::format("Kernel variants to time, comma-separated, or 'all' (every "
                                     "compiled variant that fits this GPU). Names read "
                                     "h<heads per CTA>_t<tokens per step>_w<warps>_s<pipeline "
                                     "stages>. Default: {}. Compiled: {}",
                                     default_variant(), compiled_names()))
          ->type_name("NAME[,NAME...]|all")
          ->check(variant_validator());
  raw->split_option = command.add_option("--split", raw->split,
                                         "How each sequence's KV range is split across CTAs "
                                         "(forms below). Default: heuristic")
                          ->type_name("POLICY")
                          ->check(split_validator());
  command.add_option("--json", raw->json_path,
                     "Also write the results to FILE as JSON (ok rows only)")
      ->type_name("FILE")
      ->check(json_path_validator());
  command.add_option("--backend", raw->backend,
                     "auto: CUDA when a device is usable, else the CPU backend; cuda: fail "
                     "without a device; cpu: the multithreaded CPU backend. Default: auto")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  command.add_option("--runs", raw->runs,
                     fmt::format("Timed samples per row; the median is reported. Default and "
                                 "minimum: {}", bench::kMinTimedRuns))
      ->check(CLI::Range(bench::kMinTimedRuns, bench::kMaxTimedRuns));
  command.add_option("--seed", raw->seed,
                     fmt::format("Seed of the random inputs and page order. Default: {}",
                                 kDefaultSeed));
  command.footer(footer());
}

// The request for the chosen backend, its defaults filled in. Options were validated by
// their checks during parsing, so the parses below cannot fail.
bench::BenchRequest make_request(const BenchOptions& options, bool on_cpu) {
  std::string ignored;
  const auto list = [&](const std::string& given, const char* gpu_default,
                        const char* cpu_default, int high) {
    const std::string text = !given.empty() ? given : on_cpu ? cpu_default : gpu_default;
    return parse_int_list(text, 1, high, &ignored).value_or(std::vector<int>{});
  };
  return bench::BenchRequest{
      .layout = parse_layout(options.layout).value_or(Layout::kV3),
      .num_heads = options.heads,
      .batches = list(options.batches, kGpuDefaultBatches, kCpuDefaultBatches, kMaxBatch),
      .contexts = list(options.contexts, kGpuDefaultContexts, kCpuDefaultContexts,
                       bench::kMaxContext),
      .page_size = options.page_size,
      .variants = options.variants.empty() ? std::vector<std::string>{default_variant()}
                                           : split_commas(options.variants),
      .split = parse_split_policy(options.split).value_or(SplitPolicy{}),
      .timed_runs = options.runs,
      .seed = options.seed,
  };
}

int run_bench_command(const BenchOptions& options) {
  bool on_cpu = options.backend == "cpu";
  if (!on_cpu) {
    std::string why_not;
    if (!bench::query_device(&why_not)) {
      if (options.backend == "cuda") {
        std::cerr << fmt::format("error: --backend cuda: no CUDA device ({})\n", why_not);
        return kExitFailed;
      }
      std::cerr << fmt::format("no CUDA device ({}): running the CPU backend\n", why_not);
      on_cpu = true;
    }
  }
  const bench::BenchRequest request = make_request(options, on_cpu);
  if (const auto error = bench::validate_request(request)) {
    std::cerr << "error: " << error->message() << '\n';
    return kExitUsageError;
  }
  if (on_cpu && (options.variant_option->count() > 0 || options.split_option->count() > 0)) {
    std::cerr << "note: --variant and --split choose CUDA kernels; the CPU backend ignores "
                 "them\n";
  }

  bench::BenchReport report;
  try {
    report = on_cpu ? bench::run_cpu_bench(request, &std::cerr)
                    : bench::run_cuda_bench(request, &std::cerr);
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return kExitFailed;
  }

  bench::FanOutPrinter printers;
  printers.add(std::make_unique<bench::TablePrinter>(std::cout));
  std::ofstream json_file;
  if (!options.json_path.empty()) {
    json_file.open(options.json_path);
    if (!json_file) {
      std::cerr << fmt::format("error: --json: cannot write '{}'\n", options.json_path);
      return kExitFailed;
    }
    printers.add(std::make_unique<bench::JsonPrinter>(json_file));
  }
  printers.print(report);
  if (json_file.is_open() && !json_file) {
    std::cerr << fmt::format("error: --json: writing '{}' failed\n", options.json_path);
    return kExitFailed;
  }

  if (report.any_failed()) {
    const auto failed = std::count_if(report.rows.begin(), report.rows.end(), [](const auto& row) {
      return row.status == bench::RowStatus::kInvalid || row.status == bench::RowStatus::kError;
    });
    std::cerr << fmt::format("{} row(s) INVALID or failed: see the status column\n", failed);
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, int& exit_code) {
  CLI::App* command = app.add_subcommand(
      "bench", "Validate, then time kernel variants on chosen shapes (or the CPU backend "
               "without a GPU)");
  // The callback owns the options, so they live as long as the command that writes them.
  auto options = std::make_shared<BenchOptions>();
  register_options(*command, options.get());
  command->callback([options, &exit_code] { exit_code = run_bench_command(*options); });
  return command;
}

}  // namespace mlalab::cli
