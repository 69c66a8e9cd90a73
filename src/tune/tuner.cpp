#include "tune/tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>

#include "ab/experiment.h"
#include "ab/runner.h"
#include "bench/bench_runner.h"
#include "bench/check.h"
#include "bench/cuda_raii.h"
#include "bench/device_info.h"
#include "bench/device_problem.h"
#include "bench/problem.h"
#include "core/median.h"
#include "core/validate.h"
#include "dispatch/feasibility.h"
#include "kernels/registry.h"
#include "kernels/split_plan.h"
#include "report/format.h"

namespace mlalab::tune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Thrown out of a sample when the stop flag is raised: the key being raced is abandoned.
struct Stopped {};

// A candidate variant that can run here, with its occupancy for the split model.
struct FeasibleVariant {
  const kernels::Variant* variant;
  kernels::DeviceSlots slots;
  bool balanced_resident;  // its balanced launch may race (dispatch::balanced_launch_refusal)
};

void check_request(const TuneRequest& request) {
  if (request.num_heads < 1 || request.num_heads > kMaxHeads) {
    throw std::invalid_argument(
        fmt::format("heads = {}: allowed [1, {}]", request.num_heads, kMaxHeads));
  }
  if (request.page_size < 1 || request.page_size > kMaxPageSize ||
      (request.page_size & (request.page_size - 1)) != 0) {
    throw std::invalid_argument(fmt::format("page size = {}: allowed a power of two in [1, {}]",
                                            request.page_size, kMaxPageSize));
  }
  const auto check_list = [](const std::vector<int>& values, const char* field, int max) {
    if (values.empty()) throw std::invalid_argument(fmt::format("{}: no value given", field));
    for (const int value : values) {
      if (value < 1 || value > max) {
        throw std::invalid_argument(fmt::format("{} = {}: allowed [1, {}]", field, value, max));
      }
    }
  };
  check_list(request.batches, "batch", kMaxBatch);
  check_list(request.contexts, "context", ab::kMaxContextLength);
  const double fraction = request.lengths.shortest_fraction;
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw std::invalid_argument(
        fmt::format("lengths: shortest fraction = {}: allowed (0, 1]", fraction));
  }
  if (request.launches_per_sample < 1) {
    throw std::invalid_argument(fmt::format("launches per sample = {}: allowed ≥ 1",
                                            request.launches_per_sample));
  }
  validate(request.race);
}

std::vector<const kernels::Variant*> candidate_variants(const TuneRequest& request) {
  std::vector<const kernels::Variant*> variants;
  if (request.candidates.empty()) {
    for (const kernels::Variant& variant : kernels::compiled_variants()) {
      variants.push_back(&variant);
    }
    return variants;
  }
  for (const std::string& name : request.candidates) {
    const kernels::Variant* variant = kernels::find_variant(name);
    if (variant == nullptr) {
      throw std::invalid_argument(
          fmt::format("candidates: {} is not compiled into this build", name));
    }
    if (std::find(variants.begin(), variants.end(), variant) == variants.end()) {
      variants.push_back(variant);
    }
  }
  return variants;
}

// One key's race: the problem on the device, the candidates checked and timed.
class KeyRace {
 public:
  KeyRace(const TuneRequest& request, int batch, int context, std::size_t l2_bytes,
          cudaStream_t stream)
      : context_(context),
        host_(bench::make_problem(
            {.layout = request.layout,
             .batch = batch,
             .num_heads = request.num_heads,
             .seq_lens = bench::drawn_lengths(request.lengths, batch, context, request.seed),
             .page_size = request.page_size,
             .permute_pages = true,
             .seed = request.seed})),
        device_problem_(host_, l2_bytes),
        reference_(host_, bench::validation_batch_indices(batch)),
        stream_(stream) {}

  const bench::HostProblem& host() const { return host_; }

  // The launch plan of a config at this key, on `slots`: for the key's context, whatever the
  // drawn lengths, as a Dispatcher plans its key's launch.
  kernels::LaunchPlan plan(const KernelConfig& config, const kernels::DeviceSlots& slots) const {
    return kernels::plan_launch(device_problem_.params(0), config, context_, slots);
  }

  // Checks every config against the reference, then captures the timers of those that pass;
  // the failures, by index, for those that do not.
  std::vector<std::optional<std::string>> prepare(const std::vector<KernelConfig>& configs,
                                                  const std::vector<kernels::LaunchPlan>& plans) {
    std::size_t workspace_bytes = 0;
    for (const auto& plan : plans) workspace_bytes = std::max(workspace_bytes, plan.workspace_bytes);
    // One workspace for every candidate: their samples never overlap.
    workspace_ = bench::DeviceBuffer<std::byte>(workspace_bytes);
    std::vector<std::optional<std::string>> failures(configs.size());
    timers_.resize(configs.size());
    for (std::size_t i = 0; i < configs.size(); ++i) {
      failures[i] = bench::validate_on_device(host_, device_problem_, configs[i], plans[i],
                                              workspace_.data(), stream_, reference_);
      if (failures[i]) continue;
      timers_[i] = std::make_unique<bench::ReplicaTimer>(device_problem_, configs[i], plans[i],
                                                         workspace_.data(), stream_);
    }
    return failures;
  }

  double sample_us(std::size_t index, int launches) {
    return median(timers_[index]->time_calls_us(launches));
  }

  ~KeyRace() { cudaStreamSynchronize(stream_); }

 private:
  int context_;
  bench::HostProblem host_;
  bench::DeviceProblem device_problem_;
  bench::LazyReference reference_;
  cudaStream_t stream_;
  bench::DeviceBuffer<std::byte> workspace_;  // before timers_: their graphs use it
  std::vector<std::unique_ptr<bench::ReplicaTimer>> timers_;
};

std::string result_text(const dispatch::CandidateResult& result) {
  return fmt::format("{} {:.2f} µs [{:.2f}, {:.2f}]",
                     dispatch::config_text(result.variant, result.splits, result.workers),
                     result.us, result.us_low, result.us_high);
}

}  // namespace

std::vector<int> split_candidates(const kernels::SplitShape& shape, int sm_count,
                                  int ctas_per_sm) {
  const kernels::DeviceSlots slots{.sm_count = sm_count, .ctas_per_sm = std::max(1, ctas_per_sm)};
  const auto capped = [&](int splits) {
    return kernels::choose_num_splits({.kind = SplitPolicy::Kind::kFixed, .value = splits}, shape,
                                      slots);
  };
  const int heuristic = kernels::choose_num_splits({}, shape, slots);
  const long long base_ctas = static_cast<long long>(shape.batch) * shape.head_blocks;
  const long long slots_per_wave = static_cast<long long>(slots.sm_count) * slots.ctas_per_sm;
  const int one_wave = static_cast<int>(
      std::clamp<long long>(slots_per_wave / base_ctas, 1, kMaxSplits));
  std::vector<int> splits = {capped(1), capped(std::max(1, heuristic / 2)), heuristic,
                             capped(2 * heuristic), capped(one_wave)};
  std::sort(splits.begin(), splits.end());
  splits.erase(std::unique(splits.begin(), splits.end()), splits.end());
  return splits;
}

std::vector<SplitPolicy> candidate_splits(const kernels::SplitShape& shape, int sm_count,
                                          int ctas_per_sm, bool balanced_resident) {
  std::vector<SplitPolicy> splits;
  for (const int count : split_candidates(shape, sm_count, ctas_per_sm)) {
    splits.push_back({.kind = SplitPolicy::Kind::kFixed, .value = count});
  }
  if (balanced_resident) splits.push_back({.kind = SplitPolicy::Kind::kBalanced});
  return splits;
}

TuneSummary tune(const TuneRequest& request, std::optional<dispatch::TuningTable> existing,
                 const std::function<void(const dispatch::TuningTable&)>& on_key_done,
                 std::ostream& progress, const std::atomic<int>* stop_signal) {
  check_request(request);
  // Before the GPU is asked for anything: a table of other lengths is refused anywhere.
  if (existing && existing->lengths != request.lengths) {
    throw dispatch::TableError(fmt::format(
        "lengths: the existing table was tuned on {} lengths, this run draws {}: re-tune "
        "into a new file, or pass --lengths {}",
        dispatch::lengths_text(existing->lengths), dispatch::lengths_text(request.lengths),
        dispatch::lengths_text(existing->lengths)));
  }
  std::string why_not;
  const auto device = bench::query_device(&why_not);
  if (!device) throw std::runtime_error("tuning measures on a GPU: " + why_not);
  const Clock::time_point started = Clock::now();
  const int d_qk = dims_of(request.layout).d_qk;

  // Prune once: feasibility does not depend on the key.
  TuneSummary summary;
  dispatch::TuningTable& table = summary.table;
  std::vector<FeasibleVariant> feasible;
  std::vector<std::string> candidate_names;
  std::vector<std::string> balanced_refusals;  // "variant: why its balanced launch does not race"
  for (const kernels::Variant* variant : candidate_variants(request)) {
    candidate_names.push_back(variant->name);
    const dispatch::Placement placement =
        dispatch::judge_here(variant->shape, d_qk, request.smem_limit);
    if (placement.verdict.feasible && placement.ctas_per_sm() > 0) {
      const auto no_balanced = dispatch::balanced_launch_refusal(placement.usage);
      if (no_balanced) balanced_refusals.push_back(variant->name + ": " + *no_balanced);
      feasible.push_back({variant, placement.slots(device->sm_count), !no_balanced});
    } else {
      table.pruned.push_back({.variant = variant->name,
                              .reason = placement.verdict.feasible
                                            ? "no resident CTA per SM"
                                            : placement.verdict.reason});
    }
  }
  if (feasible.empty()) {
    throw std::runtime_error(fmt::format(
        "no candidate can run here: {}", table.pruned.empty() ? "" : table.pruned.front().reason));
  }
  const dispatch::TableIdentity identity = dispatch::identity_here(
      request.layout, request.num_heads, request.page_size, candidate_names);
  if (existing) {
    if (auto mismatch = dispatch::identity_mismatch(existing->identity, identity)) {
      throw dispatch::TableError("the existing table does not match this run: " + *mismatch +
                                 " (mlalab tune --fresh replaces it; or tune into a new --out "
                                 "file)");
    }
    if (existing->identity.candidates.size() != identity.candidates.size()) {
      throw dispatch::TableError(fmt::format(
          "candidates: the existing table raced {} variants, this run {}: re-tune into a new "
          "file, or pass the table's candidates",
          existing->identity.candidates.size(), identity.candidates.size()));
    }
    table.batch_buckets = existing->batch_buckets;
    table.context_buckets = existing->context_buckets;
    table.entries = std::move(existing->entries);
  }
  table.identity = identity;
  table.lengths = request.lengths;
  table.commit = bench::git_commit();
  table.batch_buckets = dispatch::merge_buckets(table.batch_buckets, request.batches);
  table.context_buckets = dispatch::merge_buckets(table.context_buckets, request.contexts);

  progress << fmt::format(
      "mlalab tune: {} at {} heads, page {}, on {} ({} SMs): {} of {} candidate variants "
      "feasible, {} batch × {} context buckets, lengths {}\n",
      name_of(request.layout), request.num_heads, request.page_size, device->gpu,
      device->sm_count, feasible.size(), candidate_names.size(), request.batches.size(),
      request.contexts.size(), dispatch::lengths_text(request.lengths));
  for (const auto& pruned : table.pruned) {
    progress << fmt::format("  pruned {}: {}\n", pruned.variant, pruned.reason);
  }
  for (const auto& refusal : balanced_refusals) {
    progress << fmt::format("  split launches only, {}\n", refusal);
  }

  bench::CudaStream stream;
  const int keys = static_cast<int>(request.batches.size() * request.contexts.size());
  for (const int context : request.contexts) {
    for (const int batch : request.batches) {
      if (stop_signal != nullptr && stop_signal->load() != 0) {
        summary.interrupted = true;
        break;
      }
      const Clock::time_point key_started = Clock::now();
      const std::string key_name = fmt::format("[{}/{}] batch {}, context {}",
                                               summary.keys_tuned + 1, keys, batch, context);
      progress << key_name << ": building the problem\n" << std::flush;
      KeyRace key(request, batch, context, device->l2_bytes, stream.get());
      const dispatch::TableEntry* incumbent = table.find_bucket(batch, context);

      std::vector<Entrant> entrants;
      std::vector<KernelConfig> configs;
      std::vector<kernels::LaunchPlan> plans;
      const auto add = [&](const FeasibleVariant& candidate, SplitPolicy split,
                           bool is_incumbent) {
        const KernelConfig config{.shape = candidate.variant->shape, .split = split};
        const kernels::LaunchPlan plan = key.plan(config, candidate.slots);
        for (Entrant& entrant : entrants) {
          if (entrant.variant == candidate.variant->name && entrant.splits == plan.num_splits &&
              entrant.workers == plan.workers) {
            entrant.incumbent = entrant.incumbent || is_incumbent;
            return;
          }
        }
        entrants.push_back({.variant = candidate.variant->name,
                            .splits = plan.num_splits,
                            .workers = plan.workers,
                            .incumbent = is_incumbent});
        configs.push_back(config);
        plans.push_back(plan);
      };
      for (const FeasibleVariant& candidate : feasible) {
        const VariantShape& shape = candidate.variant->shape;
        const kernels::SplitShape split_shape{
            .batch = batch,
            .num_heads = request.num_heads,
            .head_blocks = (request.num_heads + shape.block_h - 1) / shape.block_h,
            .max_seq_len = context,
            .block_t = shape.block_t,
            .d_qk = dims_of(request.layout).d_qk,
            .d_v = dims_of(request.layout).d_v,
            .family = shape.family};
        for (const SplitPolicy& split :
             candidate_splits(split_shape, device->sm_count, candidate.slots.ctas_per_sm,
                              candidate.balanced_resident)) {
          add(candidate, split, false);
        }
        // The incumbent races as it was, unless it was a balanced launch whose kernel no
        // longer fits (then the key is tuned afresh for this variant).
        if (incumbent != nullptr && incumbent->variant == candidate.variant->name &&
            (incumbent->workers == 0 || candidate.balanced_resident)) {
          add(candidate, dispatch::tuned_split(incumbent->splits, incumbent->workers), true);
        }
      }

      // Check every candidate against the reference; a wrong one never races.
      const auto failures = key.prepare(configs, plans);
      std::vector<Entrant> checked;
      std::vector<std::size_t> timer_of;
      for (std::size_t i = 0; i < entrants.size(); ++i) {
        if (failures[i]) {
          const std::string config = dispatch::config_text(
              entrants[i].variant, entrants[i].splits, entrants[i].workers);
          progress << fmt::format("  WRONG RESULT {}: {}\n", config, *failures[i]);
          table.pruned.push_back(
              {.variant = entrants[i].variant,
               .reason = fmt::format("wrong result at batch {}, context {}, {}: {}", batch,
                                     context, config, *failures[i])});
          continue;
        }
        checked.push_back(entrants[i]);
        timer_of.push_back(i);
      }
      if (checked.empty()) {
        throw std::runtime_error(key_name + ": every candidate gave a wrong result");
      }

      RaceSettings settings = request.race;
      settings.seed = request.race.seed + static_cast<std::uint64_t>(summary.keys_tuned);
      const Clock::time_point race_started = Clock::now();
      RaceOutcome outcome;
      try {
        outcome = race(
            checked,
            [&](std::size_t index) {
              if (stop_signal != nullptr && stop_signal->load() != 0) throw Stopped{};
              return key.sample_us(timer_of[index], request.launches_per_sample);
            },
            settings, [&] { return seconds_since(race_started); });
      } catch (const Stopped&) {
        summary.interrupted = true;
        progress << key_name << ": interrupted; the keys before it are in the table\n";
        break;
      }
      summary.samples += outcome.samples;
      summary.samples_without_halving +=
          static_cast<long long>(checked.size()) * outcome.rounds;

      dispatch::TableEntry entry{.batch = batch,
                                 .context = context,
                                 .variant = checked[outcome.winner].variant,
                                 .splits = checked[outcome.winner].splits,
                                 .workers = checked[outcome.winner].workers,
                                 .ranking = std::move(outcome.ranking),
                                 .rounds = outcome.rounds,
                                 .seconds = seconds_since(key_started),
                                 .decision = outcome.decision};
      const dispatch::CandidateResult* runner_up = entry.runner_up();
      progress << fmt::format(
          "{}: {} candidates, {} rounds ({}), {} samples; {}{}; {}, {}\n", key_name,
          checked.size(), outcome.rounds, outcome.stopped_because, outcome.samples,
          result_text(entry.winner()),
          runner_up == nullptr
              ? std::string{}
              : fmt::format(", runner-up {} ({:+.1f} %)", result_text(*runner_up),
                            runner_up->change_pct.value_or(0.0)),
          entry.decision, report::duration_text(entry.seconds));
      if (dispatch::TableEntry* old = table.find_bucket(batch, context)) {
        *old = std::move(entry);
      } else {
        table.entries.push_back(std::move(entry));
      }
      std::sort(table.entries.begin(), table.entries.end(),
                [](const dispatch::TableEntry& a, const dispatch::TableEntry& b) {
                  return std::pair(a.batch, a.context) < std::pair(b.batch, b.context);
                });
      table.created_utc = ab::iso8601_utc(std::chrono::system_clock::now());
      ++summary.keys_tuned;
      on_key_done(table);
    }
    if (summary.interrupted) break;
  }
  summary.seconds = seconds_since(started);
  return summary;
}

}  // namespace mlalab::tune
