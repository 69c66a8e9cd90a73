#include "cli/bench_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ab/environment.h"
#include "bench/bench_runner.h"
#include "bench/device_info.h"
#include "bench/printers.h"
#include "bench/timeline_report.h"
#include "cli/exit_status.h"
#include "cli/option_checks.h"
#include "core/kernel_config.h"
#include "core/layout.h"
#include "core/validate.h"
#include "dispatch/tuning_table.h"
#include "kernels/registry.h"
#include "kernels/split_plan.h"
#include "kernels/timeline.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::cli {
namespace {

constexpr int kExitFailed = 1;  // a row INVALID or failed

// The study's production analogue: 16 heads per CTA as DeepSeek's TP-8 slice has.
constexpr const char* kPreferredVariant = "h16_t16_w4_s2";
// GPU defaults: a single decode step and a full serving batch at a typical context.
constexpr std::array kGpuDefaultBatches{1, 64};
constexpr std::array kGpuDefaultContexts{4096};
// CPU defaults: small enough that the fp64 reference and 20 timed runs finish in seconds
// on two cores.
constexpr std::array kCpuDefaultBatches{1, 4};
constexpr std::array kCpuDefaultContexts{1024};
constexpr int kDefaultHeads = 16;
constexpr int kDefaultPageSize = 64;
constexpr std::uint64_t kDefaultSeed = 1;

enum class BackendChoice { kAuto, kCuda, kCpu };

struct BenchOptions {
  std::string layout = "v3";
  int heads = kDefaultHeads;
  std::vector<int> batches;   // empty: the backend's default
  std::vector<int> contexts;  // empty: the backend's default
  int page_size = kDefaultPageSize;
  std::string variants;  // empty: default_variant()
  std::string split = "heuristic";
  std::string json_path;
  std::string timeline_path;  // --timeline: each row's per-CTA records (a timeline build)
  std::string backend = "auto";
  int runs = bench::kMinTimedRuns;
  std::uint64_t seed = kDefaultSeed;
  dispatch::TunedLengths lengths{};
  // Set after parsing: whether CUDA-only options were given, to say they are ignored on CPU.
  const CLI::Option* variant_option = nullptr;
  const CLI::Option* split_option = nullptr;
};

std::string default_variant() {
  if (kernels::find_variant(kPreferredVariant) != nullptr) return kPreferredVariant;
  return kernels::compiled_variants().front().name;
}

CLI::Validator split_validator() {
  return CLI::Validator(
      [](std::string& text) {
        std::string error;
        return parse_split_policy(text, &error) ? std::string{} : error;
      },
      "", "split");
}

std::string footer() {
  return fmt::format(R"(Split policies (--split):
  heuristic        the split count minimising a model of the time, in steps: a launch in
                   one wave (SMs x resident CTAs of the variant) costs steps per split + {}
                   (wgmma kernels: plus {} x the fp32 partial rows' bytes over a full wave's
                   KV bytes per step); one of several waves costs that per wave, times
                   CTAs / ({} x the wave's slots) where more stream than HBM can feed, plus
                   the partial rows' bytes over a full wave's KV bytes per step; every split
                   adds 1/16 step (the combine's share); at least {} steps of block_t tokens
                   per split ({} tokens if fewer steps), at most {} splits
  fixed:N          exactly N splits, N in [1, {}] (capped so every split has tokens)
  target_ctas:T    the fewest splits with batch x head_blocks x splits >= T (T >= 1)
  balanced[:W]     no per-sequence split: W workers per head block (default one wave of
                   resident CTAs) share the batch's tokens evenly, whatever the lengths,
                   each sequence's start counted as {} steps of work ({} of the 64-head
                   wgmma kernel's 32-token steps)

Every variant is first run once and checked against an fp64 reference (on up to 8 sequences
of a large batch); a variant that disagrees is reported INVALID, not timed, and makes the
exit status 1. Timing rotates over copies of the inputs spanning >= 4x the L2 cache, so the
KV cache comes from HBM; the result is the median of --runs samples. GB/s counts the KV
cache once plus q and out; %read compares it with this GPU's streaming-read bandwidth,
measured in the same run.

Exit status: 0 every row ok; 1 a row INVALID or failed; 2 a usage error, or an error that
stopped the benchmark (e.g. no usable GPU for --backend cuda, a --json path that cannot be
written: both are checked before anything runs).

Mixed lengths (--lengths uniform:F): each row's batch draws its lengths between F times the
context and the context, so the context is the longest a sequence may be (a Dispatcher's
key); the GB/s and TFLOP/s count the tokens drawn. Serving batches mix lengths: split
launches then wait for their longest sequence, balanced ones share the tokens evenly.

Timelines (--timeline FILE, in a build configured with -DMLALAB_TIMELINE=ON, whose kernels read
the GPU's timer and so differ from a normal build's): when each CTA of a row's last timed call
started and finished each of its parts. A balanced launch's CTAs that end late by their
number of parts pay per part started; a few late CTAs are a tail. The wgmma family also
records each KV tile's way through its ring of stages (SM cycles): how long the MMA warps
waited for a tile, how long after its stage was freed its copy was issued and how long the
copy took to land, and how long before the MMA warps asked for it the stage was freed, and
a CTA's prologue (when it knew its work and issued q's copy). Each row's line also gives the
SMs' clock over the call (their cycles over the timer's nanoseconds, min / median / max):
under load it may run below the top clock that the cycles assume.

Examples:
  mlalab bench                                    defaults (CPU backend without a GPU)
  mlalab bench --variant all --batch 1,8,64 --context 1024,8192 --json results.json
  mlalab bench --layout v4 --heads 64 --split fixed:4
  mlalab bench --heads 128 --batch 64 --context 8192 --lengths uniform:0.125 --split balanced
  mlalab bench --heads 128 --batch 80 --split balanced --timeline tl.json  (a timeline build))",
                     kernels::kPrologueSteps, kernels::kOneWavePartialRowsWeight,
                     kernels::kHbmSaturation, kernels::kMinTilesPerSplit,
                     kernels::kMinTokensPerSplit, kernels::kMaxHeuristicSplits, kMaxSplits,
                     kernels::kPrologueSteps, kernels::wgmma::kSeesawPartStartSteps);
}

void register_options(CLI::App& command, BenchOptions* raw) {
  command.add_option("--layout", raw->layout,
                     "Cache layout: v3 (d_qk 576 = 512 latent + 64 rope) or v4 (d_qk 512). "
                     "Default: v3")
      ->check(CLI::IsMember({"v3", "v4"}));
  add_checked_option(command, "--heads", raw->heads, integer_in({.low = 1, .high = kMaxHeads}),
                     fmt::format("Query heads per sequence (all share one latent KV head), in "
                                 "[1, {}]. Default: {}", kMaxHeads, kDefaultHeads))
      ->type_name("INT");
  add_checked_option(command, "--batch", raw->batches,
                     integer_list_in({.low = 1, .high = kMaxBatch}),
                     fmt::format("Batch sizes, comma-separated, each timed separately, each in "
                                 "[1, {}]. Default: {} on a GPU, {} on the CPU",
                                 kMaxBatch, fmt::join(kGpuDefaultBatches, ","),
                                 fmt::join(kCpuDefaultBatches, ",")))
      ->type_name("LIST");
  add_checked_option(command, "--context", raw->contexts,
                     integer_list_in({.low = 1, .high = bench::kMaxContext}),
                     fmt::format("KV tokens per sequence, comma-separated, each in [1, {}] (and "
                                 "one problem's KV cache at most {} GiB). Default: {} on a "
                                 "GPU, {} on the CPU", bench::kMaxContext,
                                 bench::kMaxProblemKvBytes >> 30,
                                 fmt::join(kGpuDefaultContexts, ","),
                                 fmt::join(kCpuDefaultContexts, ",")))
      ->type_name("LIST");
  add_checked_option(command, "--page-size", raw->page_size,
                     power_of_two_in({.low = 1, .high = kMaxPageSize}),
                     fmt::format("Tokens per page of the paged KV cache (pages are scattered "
                                 "at random), a power of two in [1, {}]. Default: {}",
                                 kMaxPageSize, kDefaultPageSize))
      ->type_name("INT");
  raw->variant_option =
      command.add_option("--variant", raw->variants,
                         fmt::format("Kernel variants to time, comma-separated, or 'all' (every "
                                     "compiled variant that fits this GPU). Names read "
                                     "h<heads per CTA>_t<tokens per step>_w<warps>_s<pipeline "
                                     "stages>. Default: {}. Compiled: {}",
                                     default_variant(), compiled_variant_names()))
          ->type_name("NAME[,NAME...]|all")
          ->check(variant_list_validator());
  raw->split_option = command.add_option("--split", raw->split,
                                         "How each sequence's KV range is split across CTAs "
                                         "(forms below). Default: heuristic")
                          ->type_name("POLICY")
                          ->check(split_validator());
  add_checked_option(command, "--json", raw->json_path, output_file(),
                     "Also write the results to FILE as JSON (ok rows only)")
      ->type_name("FILE");
  add_checked_option(
      command, "--timeline", raw->timeline_path, output_file(),
      fmt::format("Also record when every CTA of each row's last timed call started and "
                  "finished each of its parts (%globaltimer), write them to FILE as JSON and "
                  "print a summary per row (CTAs grouped by their number of parts). Needs a "
                  "build configured with -DMLALAB_TIMELINE=ON (this one: {}) and the CUDA "
                  "backend",
                  kernels::kTimelineBuild ? "yes" : "no"))
      ->type_name("FILE");
  command.add_option("--backend", raw->backend,
                     "auto: CUDA when a device is usable, else the CPU backend; cuda: exit "
                     "status 2 without a usable device; cpu: the multithreaded CPU backend. "
                     "Default: auto")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  add_checked_option(command, "--runs", raw->runs,
                     integer_in({.low = bench::kMinTimedRuns, .high = bench::kMaxTimedRuns}),
                     fmt::format("Timed samples per row; the median is reported. In [{}, {}]. "
                                 "Default: {}", bench::kMinTimedRuns, bench::kMaxTimedRuns,
                                 bench::kMinTimedRuns))
      ->type_name("INT");
  add_checked_option(command, "--lengths", raw->lengths, sequence_lengths(),
                     fmt::format("Each row's sequence lengths: equal (every sequence as long as "
                                 "--context), or uniform:F, each uniform between F times the "
                                 "context and it, drawn from --seed, F in (0, 1] ('uniform' "
                                 "alone: F = {}), as mlalab tune --lengths draws them. "
                                 "Default: equal",
                                 dispatch::kDefaultShortestFraction))
      ->type_name("equal|uniform[:F]");
  add_checked_option(command, "--seed", raw->seed, integer_in(kSeedRange),
                     fmt::format("Seed of the random inputs, page order and drawn lengths, in "
                                 "{}. Default: {}",
                                 range_text(kSeedRange), kDefaultSeed))
      ->type_name("INT");
  command.footer(footer());
}

// The given list, or the backend's default.
std::vector<int> or_default(const std::vector<int>& given, std::span<const int> gpu_default,
                            std::span<const int> cpu_default, bool on_cpu) {
  if (!given.empty()) return given;
  const std::span<const int> chosen = on_cpu ? cpu_default : gpu_default;
  return {chosen.begin(), chosen.end()};
}

// The request for the chosen backend, its defaults filled in. Options were validated by
// their checks during parsing, so the parses below cannot fail.
bench::BenchRequest make_request(const BenchOptions& options, bool on_cpu) {
  const std::vector<std::string_view> names = split_commas(options.variants);
  return bench::BenchRequest{
      .layout = parse_layout(options.layout).value_or(Layout::kV3),
      .num_heads = options.heads,
      .batches = or_default(options.batches, kGpuDefaultBatches, kCpuDefaultBatches, on_cpu),
      .contexts =
          or_default(options.contexts, kGpuDefaultContexts, kCpuDefaultContexts, on_cpu),
      .page_size = options.page_size,
      .variants = options.variants.empty()
                      ? std::vector<std::string>{default_variant()}
                      : std::vector<std::string>(names.begin(), names.end()),
      .split = parse_split_policy(options.split).value_or(SplitPolicy{}),
      .lengths = options.lengths,
      .timed_runs = options.runs,
      .seed = options.seed,
      .timeline = !options.timeline_path.empty(),
  };
}

int run_bench_command(const BenchOptions& options) {
  bool on_cpu = options.backend == "cpu";
  if (!on_cpu) {
    std::string why_not;
    if (!bench::query_device(&why_not)) {
      if (options.backend == "cuda") {
        std::cerr << fmt::format("error: --backend cuda: no usable CUDA device ({})\n",
                                 why_not);
        return kExitError;
      }
      std::cerr << fmt::format("no CUDA device ({}): running the CPU backend\n", why_not);
      on_cpu = true;
    }
  }
  const bench::BenchRequest request = make_request(options, on_cpu);
  if (const auto error = bench::validate_request(request)) {
    std::cerr << "error: " << error->message() << '\n';
    return kExitError;
  }
  if (on_cpu && request.timeline) {
    std::cerr << "error: --timeline records CUDA kernels; the CPU backend has none\n";
    return kExitError;
  }
  if (request.timeline && options.timeline_path == options.json_path) {
    std::cerr << fmt::format("error: --timeline: '{}' is also the --json file\n",
                             options.timeline_path);
    return kExitError;
  }
  std::ofstream timeline_file;
  if (request.timeline) {  // opened before anything runs, so a bad path costs no run
    timeline_file.open(options.timeline_path);
    if (!timeline_file) {
      std::cerr << fmt::format("error: --timeline: cannot write '{}'\n", options.timeline_path);
      return kExitError;
    }
  }
  if (on_cpu && (options.variant_option->count() > 0 || options.split_option->count() > 0)) {
    std::cerr << "note: --variant and --split choose CUDA kernels; the CPU backend ignores "
                 "them\n";
  }

  // The CPU backend's times are the host's: other processes on its CPUs move them (a build
  // running beside made rows 10× slower), so the load is read and judged as mlalab ab does.
  std::optional<ab::CpuUsage> cpu_usage_at_start;
  ab::EnvironmentRecord host;
  if (on_cpu) {
    host = ab::cpu_environment();
    cpu_usage_at_start = ab::read_cpu_usage();
    host.load_at_start = ab::read_start_load(*cpu_usage_at_start);
    std::cerr << fmt::format("host {}; load at the start: {}\n", ab::host_text(host),
                             ab::start_load_text(host));
    if (const auto warning = ab::start_load_warning(host)) {
      std::cerr << "warning: " << *warning << '\n';
    }
  }

  bench::BenchReport report;
  try {
    report = on_cpu ? bench::run_cpu_bench(request, &std::cerr)
                    : bench::run_cuda_bench(request, &std::cerr);
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return kExitFailed;
  }
  if (cpu_usage_at_start) {
    host.load_at_end = ab::read_end_load(*cpu_usage_at_start);
    std::cerr << "load at the end: " << ab::end_load_text(host) << '\n';
    if (const auto warning = ab::end_load_warning(host)) {
      std::cerr << "warning: " << *warning << '\n';
    }
  }

  bench::FanOutPrinter printers;
  printers.add(std::make_unique<bench::TablePrinter>(std::cout));
  std::ofstream json_file;
  if (!options.json_path.empty()) {
    json_file.open(options.json_path);
    if (!json_file) {
      std::cerr << fmt::format("error: --json: cannot write '{}'\n", options.json_path);
      return kExitError;
    }
    printers.add(std::make_unique<bench::JsonPrinter>(json_file));
  }
  printers.print(report);
  if (json_file.is_open() && !json_file) {
    std::cerr << fmt::format("error: --json: writing '{}' failed\n", options.json_path);
    return kExitError;
  }
  if (request.timeline) {
    for (const bench::BenchRow& row : report.rows) {
      if (row.timeline.empty()) continue;
      const bench::TimelineSummary summary = bench::summarize_timeline(row.timeline);
      std::cout << fmt::format("timeline {} B={} L={}: {}\n", row.variant, row.batch,
                               row.context, bench::timeline_summary_text(summary));
      const std::string ring = bench::ring_summary_text(bench::summarize_ring(row.timeline));
      if (!ring.empty()) std::cout << "  " << ring << '\n';
    }
    timeline_file << bench::timeline_json(report.rows).dump(1) << '\n';
    if (!timeline_file) {
      std::cerr << fmt::format("error: --timeline: writing '{}' failed\n",
                               options.timeline_path);
      return kExitError;
    }
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
