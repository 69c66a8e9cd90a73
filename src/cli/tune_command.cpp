#include "cli/tune_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ab/stats.h"
#include "bench/bench_runner.h"
#include "cli/exit_status.h"
#include "cli/option_checks.h"
#include "cli/stop_signal.h"
#include "core/layout.h"
#include "core/number_text.h"
#include "core/text_table.h"
#include "core/validate.h"
#include "dispatch/feasibility.h"
#include "dispatch/tuning_table.h"
#include "report/format.h"
#include "tune/tuner.h"

namespace mlalab::cli {
namespace {

constexpr int kMaxRaceRounds = 1000;
constexpr int kMaxLaunchesPerSample = 1000;

struct TuneOptions {
  std::string layout = "v3";
  int heads = 16;
  int page_size = 64;
  std::vector<int> batches = dispatch::default_batch_buckets();
  std::vector<int> contexts = dispatch::default_context_buckets();
  dispatch::TunedLengths lengths{};
  std::string candidates = std::string(bench::kAllVariants);
  std::optional<int> smem_limit;
  std::string out;  // empty: default_table_path
  int max_rounds = tune::RaceSettings{}.max_rounds;
  int launches_per_sample = tune::TuneRequest{}.launches_per_sample;
  std::uint64_t seed = 1;
  std::vector<int> explain;  // batch, context
  bool fresh = false;        // replace the --out table instead of updating it
};

std::string default_table_path(const TuneOptions& options) {
  return fmt::format("tuning-{}-h{}-p{}.json", options.layout, options.heads, options.page_size);
}

std::string table_path(const TuneOptions& options) {
  return options.out.empty() ? default_table_path(options) : options.out;
}

void print_grid(const dispatch::TuningTable& table) {
  std::vector<TextColumn> columns = {{"batch \\ context"}};
  for (const int context : table.context_buckets) columns.push_back({std::to_string(context)});
  std::vector<TextRow> lines;
  for (const int batch : table.batch_buckets) {
    std::vector<std::string> line = {std::to_string(batch)};
    for (const int context : table.context_buckets) {
      const dispatch::TableEntry* entry = table.find_bucket(batch, context);
      line.push_back(entry == nullptr
                         ? "-"
                         : fmt::format("{} {:.1f} µs",
                                       dispatch::config_text(entry->variant, entry->splits,
                                                             entry->workers),
                                       entry->winner().us));
    }
    lines.push_back(std::move(line));
  }
  print_plain_table(std::cout, columns, lines);
}

void print_identity(const dispatch::TuningTable& table, const std::string& path) {
  const dispatch::TableIdentity& identity = table.identity;
  fmt::print("tuning table {}: {} ({} SMs, sm_{}), CUDA driver {}, runtime {}; {}, {} heads, "
             "page {}, lengths {}; {} candidate variants; commit {}, {}\n",
             path, identity.gpu, identity.sm_count, identity.compute_capability,
             identity.cuda_driver, identity.cuda_runtime, name_of(identity.layout),
             identity.num_heads, identity.page_size, dispatch::lengths_text(table.lengths),
             identity.candidates.size(), table.commit, table.created_utc);
}

// Whether this build still has the code the table was tuned with (which needs no GPU; the GPU
// and CUDA versions are checked where the table is used).
void print_code_check(const dispatch::TuningTable& table) {
  const dispatch::CandidateCodeCheck check = dispatch::check_candidate_code_here(table.identity);
  const std::size_t candidates = table.identity.candidates.size();
  const auto listed = [](const std::vector<std::string>& names) {
    constexpr std::size_t kShown = 6;
    if (names.size() <= kShown) return fmt::format("{}", fmt::join(names, ", "));
    return fmt::format("{}, and {} more", fmt::join(names.begin(), names.begin() + kShown, ", "),
                       names.size() - kShown);
  };
  if (check.changed.empty() && check.not_compiled.empty()) {
    fmt::print("this build: the machine code of {} is the table's\n",
               candidates == 1 ? std::string("its one candidate")
                               : fmt::format("all {} candidates", candidates));
    return;
  }
  std::vector<std::string> parts;
  if (!check.changed.empty()) {
    parts.push_back(fmt::format("{} of {} candidates' machine code differs from the table's ({})",
                                check.changed.size(), candidates, listed(check.changed)));
  }
  if (!check.not_compiled.empty()) {
    parts.push_back(fmt::format("{} are not compiled ({})", check.not_compiled.size(),
                                listed(check.not_compiled)));
  }
  fmt::print("this build: {}: a Dispatcher or a tuned arm refuses this table ({})\n",
             fmt::join(parts, "; "),
             check.changed.empty()
                 ? "build the variants it lacks (MLALAB_VARIANTS), or re-tune it with this build"
                 : "re-tune it: mlalab tune --fresh");
}

int explain(const TuneOptions& options) {
  const std::string path = table_path(options);
  const dispatch::TuningTable table = dispatch::read_table(path);
  print_identity(table, path);
  print_code_check(table);
  const int batch = options.explain[0];
  const int context = options.explain[1];
  const int batch_bucket = dispatch::bucket_of(table.batch_buckets, batch);
  const int context_bucket = dispatch::bucket_of(table.context_buckets, context);
  fmt::print("a call of batch {} with contexts up to {} is served by the entry of batch {}, "
             "context {} (the smallest tuned bucket at least as large, else the largest)\n",
             batch, context, batch_bucket, context_bucket);
  const dispatch::TableEntry* entry = table.find_bucket(batch_bucket, context_bucket);
  if (entry == nullptr) {
    fmt::print("that entry was not tuned: a Dispatcher uses its default config there\n");
    return kExitOk;
  }
  fmt::print("chosen: {} ({}); raced {} rounds in {}\n\n",
             dispatch::config_text(entry->variant, entry->splits, entry->workers), entry->decision,
             entry->rounds, report::duration_text(entry->seconds));
  fmt::print("{:>4}  {:<32}  {:>26}  {:>28}  {:>7}  {}\n", "rank", "variant/split",
             "µs per call [99 % interval]", "throughput vs the chosen", "samples", "outcome");
  int rank = 0;
  for (const dispatch::CandidateResult& result : entry->ranking) {
    const std::string versus =
        result.change_pct ? fmt::format("{} [{}, {}]", report::signed_percent(*result.change_pct),
                                        report::signed_percent(result.change_low_pct),
                                        report::signed_percent(result.change_high_pct))
                          : std::string("-");
    fmt::print("{:>4}  {:<32}  {:>26}  {:>28}  {:>7}  {}\n", ++rank,
               dispatch::config_text(result.variant, result.splits, result.workers),
               fmt::format("{:.2f} [{:.2f}, {:.2f}]", result.us, result.us_low, result.us_high),
               versus, result.samples, result.outcome);
  }
  if (!table.pruned.empty()) {
    fmt::print("\npruned before racing:\n");
    for (const auto& pruned : table.pruned) fmt::print("  {}: {}\n", pruned.variant, pruned.reason);
  }
  return kExitOk;
}

int run_tune(const TuneOptions& options) {
  if (options.fresh && !options.explain.empty()) {
    throw std::invalid_argument(
        "--fresh replaces a tuning table and --explain reads one: pass one of them");
  }
  if (!options.explain.empty()) {
    if (options.explain.size() != 2) {
      throw std::invalid_argument(fmt::format(
          "--explain {}: expected BATCH,CONTEXT, e.g. 8,4096", fmt::join(options.explain, ",")));
    }
    return explain(options);
  }

  const std::string path = table_path(options);
  std::optional<dispatch::TuningTable> existing;
  if (std::filesystem::exists(path)) {
    if (options.fresh) {
      fmt::print("{} exists: --fresh: replacing it with a new table (written over it once the "
                 "first key is tuned)\n", path);
    } else {
      existing = dispatch::read_table(path);
      fmt::print("{} exists: updating it (an entry is replaced only by a challenger faster "
                 "beyond the noise)\n", path);
    }
    std::fflush(stdout);  // before any refusal of the table, which goes to stderr
  }
  tune::TuneRequest request{.layout = *parse_layout(options.layout),
                            .num_heads = options.heads,
                            .page_size = options.page_size,
                            .batches = dispatch::merge_buckets({}, options.batches),
                            .contexts = dispatch::merge_buckets({}, options.contexts),
                            .lengths = options.lengths,
                            .smem_limit = options.smem_limit,
                            .launches_per_sample = options.launches_per_sample,
                            .seed = options.seed};
  request.race.max_rounds = options.max_rounds;
  request.race.seed = options.seed;
  if (options.candidates != bench::kAllVariants) {
    for (const auto name : split_commas(options.candidates)) request.candidates.emplace_back(name);
  }

  StopSignalScope signals("mlalab tune", "the table holds every key tuned before");
  const tune::TuneSummary summary = tune::tune(
      request, std::move(existing),
      [&](const dispatch::TuningTable& table) { dispatch::write_table(table, path); }, std::cout,
      &StopSignalScope::signal());

  fmt::print("\n");
  print_identity(summary.table, path);
  print_grid(summary.table);
  const double saved = summary.samples_without_halving > 0
                           ? 1.0 - static_cast<double>(summary.samples) /
                                       static_cast<double>(summary.samples_without_halving)
                           : 0.0;
  fmt::print("\n{} key{} tuned in {}: {} timed samples; racing every candidate for as many "
             "rounds would have taken {} ({:.0f} % saved by dropping the separated ones)\n",
             summary.keys_tuned, summary.keys_tuned == 1 ? "" : "s",
             report::duration_text(summary.seconds), group_thousands(summary.samples),
             group_thousands(summary.samples_without_halving), 100.0 * saved);
  fmt::print("mlalab tune --out {} --explain BATCH,CONTEXT shows how an entry was chosen\n",
             path);
  if (summary.interrupted) {
    fmt::print(stderr, "mlalab tune: interrupted: {} holds the {} key{} tuned before\n", path,
               summary.keys_tuned, summary.keys_tuned == 1 ? "" : "s");
    return ab::kExitPartial;
  }
  return kExitOk;
}

std::string footer() {
  return fmt::format(
      R"(For every key (batch bucket x context bucket) the tuner builds the problem (every
sequence as long as the context bucket, or with --lengths uniform each drawn between a
fraction of it and it; pages scattered), prunes the variants that cannot run
here (shared memory, spills, occupancy: 'mlalab configs' shows why), checks every candidate
(variant x split: the heuristic's split count h, h/2, 2h, the most that fit one wave, 1, and
the balanced launch, one wave of workers sharing the batch's tokens) against the fp64
reference, then races them in shuffled rounds: each round times every candidate still racing
(the median of --launches CUDA-graph replays); from round 3 on, a candidate slower than
the leader beyond doubt (the 99 % interval of their paired log time ratio, the A/B lab's
statistic, lies wholly on the slower side) is dropped. A key ends with one candidate left, or
after --max-rounds rounds. The table is written after every key: an interrupted run keeps them.

Re-tuning into an existing table is sticky: its entry races as the incumbent and stays unless
a challenger is faster beyond the noise. A table made on another GPU, driver, CUDA runtime,
problem (layout, heads, page size), build of the kernels or --lengths is refused, naming the
field: after a kernel change, re-tune with --fresh (or into a new --out file).

Lengths: equal lengths favour split launches, whose CTAs then finish together; serving
batches mix short and long sequences, where a balanced launch (workers sharing the batch's
tokens whatever the lengths) can be much faster. --lengths uniform tunes for such batches
(drawn from --seed): uniform in 1,024-8,192 is --context 8192 --lengths uniform:0.125.

Buckets: a call of batch b with sequences up to L tokens is served by the entry of the
smallest tuned batch >= b and the smallest tuned context >= L (past the largest: the largest).
Defaults: batch {}, context {}.

Exit status: 0 tuned (or explained); 2 an error (no GPU, a bad option, a table that does not
match); 4 interrupted (Ctrl-C): the table holds the keys tuned before.

Examples:
  mlalab tune --layout v3 --heads 16                    the full default grid
  mlalab tune --heads 128 --batch 1,8,64 --context 4096 --out h128.json
  mlalab tune --out h128.json --explain 8,4096          why that entry won
  mlalab tune --heads 128 --context 8192 --lengths uniform --out h128-mixed.json)",
      fmt::join(dispatch::default_batch_buckets(), ","),
      fmt::join(dispatch::default_context_buckets(), ","));
}

}  // namespace

CLI::App* add_tune_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<TuneOptions>();
  CLI::App* command = app.add_subcommand(
      "tune",
      "Race the compiled variants and splits per batch and context bucket on this GPU, "
      "and write the winners to a tuning table (or --explain an entry)");
  command->add_option("--layout", options->layout, "Cache layout: v3 (d_qk 576) or v4 (512). "
                                                   "Default: v3")
      ->check(CLI::IsMember({"v3", "v4"}));
  add_checked_option(*command, "--heads", options->heads,
                     integer_in({.low = 1, .high = kMaxHeads}),
                     fmt::format("Query heads per sequence, in [1, {}]. Default: 16", kMaxHeads))
      ->type_name("INT");
  add_checked_option(*command, "--page-size", options->page_size,
                     power_of_two_in({.low = 1, .high = kMaxPageSize}),
                     "Tokens per page of the paged KV cache. Default: 64")
      ->type_name("INT");
  add_checked_option(*command, "--batch", options->batches,
                     integer_list_in({.low = 1, .high = kMaxBatch}),
                     fmt::format("Batch buckets to tune, comma-separated (each is measured at "
                                 "this batch). Default: {}",
                                 fmt::join(dispatch::default_batch_buckets(), ",")))
      ->type_name("LIST");
  add_checked_option(*command, "--context", options->contexts,
                     integer_list_in({.low = 1, .high = bench::kMaxContext}),
                     fmt::format("Context buckets to tune, in tokens, comma-separated. "
                                 "Default: {}",
                                 fmt::join(dispatch::default_context_buckets(), ",")))
      ->type_name("LIST");
  add_checked_option(*command, "--lengths", options->lengths, sequence_lengths(),
                     fmt::format("Each key's sequence lengths: equal (all as long as the context "
                                 "bucket), or uniform:F, each uniform between F times the "
                                 "context bucket and it, F in (0, 1] ('uniform' alone: F = "
                                 "{}). Default: equal",
                                 dispatch::kDefaultShortestFraction))
      ->type_name("equal|uniform[:F]");
  command->add_option("--candidates", options->candidates,
                      fmt::format("Variants to race, comma-separated, or 'all'. Default: all. "
                                  "Compiled: {}",
                                  compiled_variant_names()))
      ->type_name("all|NAME[,NAME...]")
      ->check(variant_list_validator());
  const IntegerRange smem_limit_range{
      .low = 1, .high = dispatch::kMaxSmemLimitOverrideBytes, .unit = "bytes"};
  add_checked_option(*command, "--smem-limit", options->smem_limit, integer_in(smem_limit_range),
                     fmt::format("Prune variants needing more shared memory per CTA than BYTES, "
                                 "in {} (e.g. 101376, consumer Blackwell's limit)",
                                 range_text(smem_limit_range)))
      ->type_name("BYTES");
  add_checked_option(*command, "--out", options->out, output_file(),
                     "The tuning table (JSON). Updated when it exists (unless --fresh). "
                     "Default: tuning-<layout>-h<heads>-p<page size>.json")
      ->type_name("FILE");
  command->add_flag("--fresh", options->fresh,
                    "Replace the --out table instead of updating it: every key races without "
                    "an incumbent, and the new table is written over the old one once its "
                    "first key is tuned. Needed after a kernel change: the tuner refuses to "
                    "update a table tuned with other code");
  add_checked_option(*command, "--max-rounds", options->max_rounds,
                     integer_in({.low = ab::kMinRounds, .high = kMaxRaceRounds}),
                     fmt::format("Rounds after which a key's race ends with the leader, in "
                                 "[{}, {}]. Default: {}",
                                 ab::kMinRounds, kMaxRaceRounds, tune::RaceSettings{}.max_rounds))
      ->type_name("INT");
  add_checked_option(*command, "--launches", options->launches_per_sample,
                     integer_in({.low = 1, .high = kMaxLaunchesPerSample}),
                     fmt::format("CUDA-graph replays per sample (its median is the sample), "
                                 "in [1, {}]. Default: {}",
                                 kMaxLaunchesPerSample, tune::TuneRequest{}.launches_per_sample))
      ->type_name("INT");
  add_checked_option(*command, "--seed", options->seed, integer_in(kSeedRange),
                     "Seed of the inputs, the page order and the rounds' order. Default: 1")
      ->type_name("INT");
  add_checked_option(*command, "--explain", options->explain,
                     integer_list_in({.low = 1, .high = bench::kMaxContext}),
                     "Print how the entry serving a call of BATCH sequences of up to CONTEXT "
                     "tokens was chosen (the ranking, each candidate's time and why it was "
                     "dropped), from the --out table, and whether this build still has the "
                     "machine code it was tuned with; needs no GPU")
      ->type_name("BATCH,CONTEXT");
  command->footer(footer());
  command->callback([options, &exit_code] { exit_code = run_tune(*options); });
  return command;
}

}  // namespace mlalab::cli
