#include "kernels/split_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "bench/problem.h"
#include "kernels/balanced_partition.h"

namespace mlalab::kernels {
namespace {

constexpr SplitPolicy fixed(int splits) {
  return {.kind = SplitPolicy::Kind::kFixed, .value = splits};
}
constexpr SplitPolicy target_ctas(int ctas) {
  return {.kind = SplitPolicy::Kind::kTargetCtas, .value = ctas};
}
constexpr SplitPolicy kHeuristic{};

constexpr DeviceSlots kH200{.sm_count = 132, .ctas_per_sm = 2};
constexpr int kLong = 1 << 16;  // long enough that the token cap never binds

// `batch` sequences of up to `max_seq_len` tokens in `head_blocks` blocks of 16 heads (or of
// `heads` / `head_blocks`), V3, for a kernel of `family`.
constexpr SplitShape shape(int batch, int head_blocks, int max_seq_len, int block_t,
                           int heads = 0, KernelFamily family = KernelFamily::kPortable) {
  return {.batch = batch,
          .num_heads = heads > 0 ? heads : 16 * head_blocks,
          .head_blocks = head_blocks,
          .max_seq_len = max_seq_len,
          .block_t = block_t,
          .family = family};
}
// The same for the wgmma family (the seesaw at 128 heads: two blocks of 64).
constexpr SplitShape wgmma_shape(int batch, int head_blocks, int max_seq_len, int block_t,
                                 int heads = 0) {
  return shape(batch, head_blocks, max_seq_len, block_t, heads, KernelFamily::kWgmma);
}

TEST(ChooseNumSplits, TargetCtasIsTheSmallestCountReachingTheTarget) {
  struct Case {
    int batch;
    int head_blocks;
    int target;
  };
  for (const auto [batch, head_blocks, target] :
       {Case{3, 2, 512}, Case{1, 1, 7}, Case{64, 8, 512}, Case{97, 1, 1000}, Case{5, 3, 15}}) {
    const int splits =
        choose_num_splits(target_ctas(target), shape(batch, head_blocks, kLong, 16), kH200);
    SCOPED_TRACE(testing::Message() << batch << "x" << head_blocks << " target " << target);
    EXPECT_GE(batch * head_blocks * splits, target);
    if (splits > 1) {
      EXPECT_LT(batch * head_blocks * (splits - 1), target);
    }
  }
  EXPECT_EQ(choose_num_splits(target_ctas(512), shape(3, 2, kLong, 16), kH200), 86);
  EXPECT_EQ(choose_num_splits(target_ctas(512), shape(64, 8, kLong, 16), kH200), 1);
}

TEST(ChooseNumSplits, FixedIsTakenAsGiven) {
  for (const int splits : {1, 2, 7, 64, kMaxSplits}) {
    EXPECT_EQ(choose_num_splits(fixed(splits), shape(4, 2, kLong, 16), kH200), splits);
  }
}

TEST(ChooseNumSplits, CappedAtOneStepOfTokensPerSplit) {
  // 100 tokens in steps of 16 are 7 steps: no more than 7 splits, whatever is asked.
  EXPECT_EQ(choose_num_splits(fixed(64), shape(1, 1, 100, 16), kH200), 7);
  EXPECT_EQ(choose_num_splits(target_ctas(512), shape(1, 1, 100, 16), kH200), 7);
  EXPECT_EQ(choose_num_splits(fixed(64), shape(1, 1, 100, 64), kH200), 2);
  EXPECT_EQ(choose_num_splits(fixed(5), shape(1, 1, 65, 64), kH200), 2);
  // And at kMaxSplits.
  EXPECT_EQ(choose_num_splits(target_ctas(1 << 20), shape(1, 1, kLong, 16), kH200), kMaxSplits);
}

TEST(ChooseNumSplits, HeuristicFillsWholeWavesOfResidentCtas) {
  // One wave is 132 · 2 = 264 CTAs; 65536 tokens are 1024 steps of 64.
  // One sequence: every split count up to the caps fits in one wave, so the most splits win.
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(1, 1, kLong, 64), kH200), kMaxHeuristicSplits);
  // 8 base CTAs: 33 splits still fit one wave, but 1024 steps take 32 steps per split at 32
  // splits as at 33; the tie goes to fewer splits.
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(4, 2, kLong, 64), kH200), 32);
  // 512 base CTAs are already two waves; splitting only adds partial waves and prologues.
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(64, 8, kLong, 64), kH200), 1);
  // 264 CTAs of 16 steps fill exactly one wave (16 + 2 steps); 2 splits take 2 waves of 8 + 2.
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(264, 1, 1024, 64), kH200), 1);
}

TEST(ChooseNumSplits, HeuristicPaysHbmSaturationAndPartialRowsBeyondOneWave) {
  // 200 CTAs of 64 steps fit one wave: 66 steps. 5 splits, 1000 CTAs, make 3 full waves of
  // 13 + 2 steps, each stretched by 264 / (0.8 · 264) = 1.25, and one of 208 CTAs: 71 steps,
  // and the partial rows on top.
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(200, 1, 4096, 64), kH200), 1);
  // Measured (docs/perf-notes.md, versions 31 and 33): the seesaw (one 64-head CTA per SM,
  // 32-token steps) on 96 sequences of 1,024 tokens, 16 heads, took 39.2 µs at one split and
  // 50.4 at 4 (three waves); at 128 heads (two head blocks), 1,024 tokens, one split ran 65 %
  // faster than 4 at batch 48, 46 % at 80, 25 % faster than 2 at 96; at 4,096 tokens one
  // split 9 % faster than 4 at batch 48, 3 splits 3 % faster than 4 at batch 80.
  const DeviceSlots one_per_sm{.sm_count = 132, .ctas_per_sm = 1};
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(96, 1, 1024, 32), one_per_sm), 1);
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(48, 2, 1024, 32, 128), one_per_sm), 1);
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(80, 2, 1024, 32, 128), one_per_sm), 1);
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(96, 2, 1024, 32, 128), one_per_sm), 1);
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(48, 2, 4096, 32, 128), one_per_sm), 1);
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(80, 2, 4096, 32, 128), one_per_sm), 3);
  // Within one wave no stretch, and the rows at kOneWavePartialRowsWeight: batch 1 at 128
  // heads, 4,096 tokens keeps 32 splits (64 CTAs), which measured 8 % faster than the 26 that
  // the stretch and the full rows would pick, and 13 % faster than 43 (the rows left out);
  // batch 8 keeps 8 (3 % faster than 7).
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(1, 2, 4096, 32, 128), one_per_sm), 32);
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(8, 2, 4096, 32, 128), one_per_sm), 8);
  // The swapped kernel (16 heads, 64-token steps) at 2,048 tokens: batch 96 one split, 23 %
  // faster than 4; batch 16 keeps 8 splits (2 % faster than 7).
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(96, 1, 2048, 64), one_per_sm), 1);
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(16, 1, 2048, 64), one_per_sm), 8);
}

TEST(ChooseNumSplits, HeuristicChargesWgmmaPartialRowsWithinOneWave) {
  // The seesaw at 128 heads (two head blocks, one CTA per SM, 32-token steps), 1,024 tokens,
  // batch 4: the partial rows keep 8 splits; 11 measured 7.9 % slower. The portable family's
  // model, without them, would take 16. Batch 2 takes 11 (3.5 % faster than 8; 16 measured
  // 7.2 %: a miss of the model).
  const DeviceSlots one_per_sm{.sm_count = 132, .ctas_per_sm = 1};
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(4, 2, 1024, 32, 128), one_per_sm), 8);
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(4, 2, 1024, 32, 128), one_per_sm), 16);
  EXPECT_EQ(choose_num_splits(kHeuristic, wgmma_shape(2, 2, 1024, 32, 128), one_per_sm), 11);
}

TEST(ChooseNumSplits, HeuristicCountsTheCombinesShareOfEachSplit) {
  // Batch 1, 16,384 tokens in 64-token tiles: 256 steps, all in one wave. 128 splits of 2
  // steps cost 16 · (2 + 2) + 128 = 192 sixteenths, 64 of 4 steps 16 · (4 + 2) + 64 = 160.
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(1, 1, 16384, 64), kH200), 64);
}

TEST(ChooseNumSplits, HeuristicKeepsMinStepsPerSplit) {
  // Four steps of 16 tokens, two of 32, one of 64 (kMinTokensPerSplit = 64 tokens).
  EXPECT_EQ(min_steps_per_split(16), 4);
  EXPECT_EQ(min_steps_per_split(32), 2);
  EXPECT_EQ(min_steps_per_split(64), 1);
  // 1024 tokens are 16 steps of 64: a step each, 16 splits (measured 6-18 % faster than 8 at
  // batch 1-8, 16 heads, the swapped kernel); 64 steps of 16 at 4 each, 16 splits.
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(1, 1, 1024, 64), kH200), 16);
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(1, 1, 1024, 16), kH200), 16);
  // Batch 1, 4096 tokens in 64-token tiles: 32 splits of 2 steps in one wave; 64 of one step
  // would pay 32 more splits of combine and partial rows for the one step they save.
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(1, 1, 4096, 64), kH200), 32);
  // Fewer than the least steps in all: one split.
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(1, 1, 64, 64), kH200), 1);
  EXPECT_EQ(choose_num_splits(kHeuristic, shape(1, 1, 3 * 16, 16), kH200), 1);
}

TEST(ChooseNumSplits, AlwaysAtLeastOne) {
  for (const SplitPolicy policy :
       {fixed(1), fixed(8), target_ctas(1), target_ctas(512), kHeuristic}) {
    for (const int max_seq_len : {0, 1, 15, 4097}) {
      EXPECT_GE(choose_num_splits(policy, shape(97, 8, max_seq_len, 64), kH200), 1);
      EXPECT_GE(choose_num_splits(policy, shape(1, 1, max_seq_len, 64), DeviceSlots{}), 1);
    }
  }
  EXPECT_EQ(choose_num_splits(fixed(8), shape(1, 1, 0, 16), kH200), 1);
}

TEST(SplitWorkspace, HoldsPartialOutAndLsePerSplit) {
  EXPECT_EQ(split_workspace_bytes(1, 64, 128, 512), 0u);
  EXPECT_EQ(split_workspace_bytes(4, 2, 16, 512), 4u * 2 * 16 * (512 + 1) * sizeof(float));
}

TEST(PlanLaunch, CombinesHeadBlocksSplitsAndWorkspace) {
  DecodeParams params{.batch = 3, .num_heads = 17, .d_qk = 576, .d_v = 512};
  const KernelConfig config{.shape = {.block_h = 16, .block_t = 16, .warps = 4, .stages = 2},
                            .split = fixed(7)};
  const LaunchPlan plan = plan_launch(params, config, 1000, kH200);
  EXPECT_EQ(plan.head_blocks, 2);
  EXPECT_EQ(plan.num_splits, 7);
  EXPECT_EQ(plan.ctas, 3 * 2 * 7);
  EXPECT_EQ(plan.workspace_bytes, split_workspace_bytes(7, 3, 17, 512));

  const LaunchPlan unsplit =
      plan_launch(params, {.shape = config.shape, .split = fixed(1)}, 1000, kH200);
  EXPECT_EQ(unsplit.num_splits, 1);
  EXPECT_EQ(unsplit.workspace_bytes, 0u);
}

TEST(PlanLaunch, TwoSplitsOfTheWgmmaKernelMergeInPairsWithoutWorkspace) {
  const DecodeParams params{.batch = 32, .num_heads = 128, .d_qk = 576, .d_v = 512};
  constexpr VariantShape kSeesaw{
      .family = KernelFamily::kWgmma, .block_h = 64, .block_t = 32, .warps = 8, .stages = 4};
  const LaunchPlan pairs = plan_launch(params, {.shape = kSeesaw, .split = fixed(2)}, 1024, kH200);
  EXPECT_TRUE(pairs.split_pairs);
  EXPECT_EQ(pairs.num_splits, 2);
  EXPECT_EQ(pairs.partial_splits(), 1);
  EXPECT_EQ(pairs.ctas, 32 * 2 * 2);
  EXPECT_EQ(pairs.workspace_bytes, 0u);

  // Other split counts, and the other kernels (the swapped wgmma one, the portable family),
  // write partial rows for the combine.
  const LaunchPlan three = plan_launch(params, {.shape = kSeesaw, .split = fixed(3)}, 1024, kH200);
  EXPECT_FALSE(three.split_pairs);
  EXPECT_EQ(three.workspace_bytes, split_workspace_bytes(3, 32, 128, 512));
  constexpr VariantShape kSwapped{
      .family = KernelFamily::kWgmma, .block_h = 16, .block_t = 64, .warps = 4, .stages = 2};
  constexpr VariantShape kPortable{.block_h = 16, .block_t = 16, .warps = 4, .stages = 2};
  for (const VariantShape& shape : {kSwapped, kPortable}) {
    const LaunchPlan plan = plan_launch(params, {.shape = shape, .split = fixed(2)}, 1024, kH200);
    EXPECT_FALSE(plan.split_pairs) << shape.block_h;
    EXPECT_EQ(plan.workspace_bytes, split_workspace_bytes(2, 32, 128, 512)) << shape.block_h;
  }
}

TEST(PlanLaunch, TwoSplitsWriteRowsForTheCombineWhereNoPairFits) {
  // A GPU partition (MIG, a green context) that holds no cluster of two such CTAs.
  DeviceSlots partition = kH200;
  partition.split_pairs_fit = false;
  const DecodeParams params{.batch = 32, .num_heads = 128, .d_qk = 576, .d_v = 512};
  constexpr VariantShape kSeesaw{
      .family = KernelFamily::kWgmma, .block_h = 64, .block_t = 32, .warps = 8, .stages = 4};
  const LaunchPlan plan =
      plan_launch(params, {.shape = kSeesaw, .split = fixed(2)}, 1024, partition);
  EXPECT_FALSE(plan.split_pairs);
  EXPECT_EQ(plan.partial_splits(), 2);
  EXPECT_EQ(plan.workspace_bytes, split_workspace_bytes(2, 32, 128, 512));
}

constexpr SplitPolicy balanced(int workers = 0) {
  return {.kind = SplitPolicy::Kind::kBalanced, .value = workers};
}

TEST(PlanLaunch, BalancedIsOneWaveOfWorkersWhateverTheLengths) {
  const DecodeParams params{.batch = 64, .num_heads = 128, .d_qk = 576, .d_v = 512};
  const KernelConfig config{.shape = {.block_h = 16, .block_t = 16, .warps = 4, .stages = 2},
                            .split = balanced()};
  const LaunchPlan plan = plan_launch(params, config, 8192, kH200);
  EXPECT_TRUE(plan.balanced());
  EXPECT_EQ(plan.head_blocks, 8);
  EXPECT_EQ(plan.workers, 132 * 2 / 8);
  EXPECT_EQ(plan.num_splits, 1);
  EXPECT_EQ(plan.ctas, 8 * plan.workers);
  EXPECT_EQ(plan.workspace_bytes, balanced_workspace_bytes(plan.workers, 64, 128, 512));
  for (const int max_seq_len : {0, 1, 100, 1 << 20}) {
    const LaunchPlan other = plan_launch(params, config, max_seq_len, kH200);
    EXPECT_EQ(other.ctas, plan.ctas) << max_seq_len;
    EXPECT_EQ(other.workspace_bytes, plan.workspace_bytes) << max_seq_len;
  }
  EXPECT_EQ(choose_balanced_workers(balanced(7), 8, kH200), 7);
  EXPECT_EQ(choose_balanced_workers(balanced(), 1000, kH200), 1);
  EXPECT_EQ(choose_balanced_workers(balanced(), 1, {.sm_count = 132, .ctas_per_sm = 16}),
            kMaxBalancedWorkers);
}

TEST(BalancedWorkspace, HoldsTheSequencePartsThenEveryPartSlot) {
  // 3 sequences' parts (24 bytes, padded to 32), then (5 + 3 − 1) slots × 2 heads of d_v + 1.
  EXPECT_EQ(balanced_workspace_bytes(5, 3, 2, 512), 32u + 7u * 2 * (512 + 1) * sizeof(float));
}

// One part of a worker's share, listed from balanced_partition.h's arithmetic: the steps of
// the sequence among the worker's positions, its token range and its slot.
struct Part {
  int worker;
  int batch;
  std::int64_t begin;  // tokens
  std::int64_t end;
  std::int64_t steps;
  std::int64_t slot;
};

std::int64_t steps_of(std::int64_t tokens, int block_t) { return (tokens + block_t - 1) / block_t; }

struct Stream {
  std::vector<std::int64_t> steps;   // per sequence
  std::vector<std::int64_t> starts;  // first position of each sequence's range
  std::int64_t total = 0;
};

Stream stream_of(const std::vector<std::int64_t>& lengths, int block_t, int start_cost) {
  Stream stream;
  for (const std::int64_t length : lengths) {
    stream.steps.push_back(steps_of(length, block_t));
    stream.starts.push_back(stream.total);
    stream.total += balanced::sequence_cost(stream.steps.back(), start_cost);
  }
  return stream;
}

std::vector<Part> list_parts(const std::vector<std::int64_t>& lengths, int launch_workers,
                             int block_t, int start_cost) {
  const Stream stream = stream_of(lengths, block_t, start_cost);
  const int workers = balanced::active_workers(launch_workers, stream.total);
  std::vector<Part> parts;
  for (int worker = 0; worker < workers; ++worker) {
    const std::int64_t share_begin = balanced::worker_begin(worker, workers, stream.total);
    const std::int64_t share_end = balanced::worker_begin(worker + 1, workers, stream.total);
    for (int b = 0; b < static_cast<int>(lengths.size()); ++b) {
      // Sequence b's steps are the positions [first, first + steps(b)).
      const std::int64_t first = stream.starts[b] + start_cost;
      const std::int64_t begin = std::max(share_begin, first);
      const std::int64_t end = std::min(share_end, first + stream.steps[b]);
      if (begin < end) {
        parts.push_back({.worker = worker,
                         .batch = b,
                         .begin = (begin - first) * block_t,
                         .end = std::min(lengths[b], (end - first) * block_t),
                         .steps = end - begin,
                         .slot = balanced::part_slot(worker, b)});
      }
    }
  }
  return parts;
}

// A worker's load as measured (docs/perf-notes.md, version 21): its steps plus start_cost for
// every part after its first (which every worker starts, from a sequence's start or inside it).
std::vector<std::int64_t> modelled_loads(const std::vector<Part>& parts, int launch_workers,
                                         int start_cost) {
  std::vector<std::int64_t> loads(launch_workers, 0);
  std::vector<int> part_count(launch_workers, 0);
  for (const Part& part : parts) {
    loads[part.worker] += part.steps + (part_count[part.worker]++ > 0 ? start_cost : 0);
  }
  return loads;
}

// The invariants the kernels and the combine rely on, for one batch, worker count, tile and
// start cost.
void expect_balanced_partition(const std::vector<std::int64_t>& lengths, int launch_workers,
                               int block_t, int page_size, int start_cost) {
  SCOPED_TRACE(testing::Message() << lengths.size() << " sequences, " << launch_workers
                                  << " workers, block_t " << block_t << ", start cost "
                                  << start_cost);
  const int batch = static_cast<int>(lengths.size());
  const Stream stream = stream_of(lengths, block_t, start_cost);
  const std::vector<Part> parts = list_parts(lengths, launch_workers, block_t, start_cost);
  const int workers = balanced::active_workers(launch_workers, stream.total);

  // Every token of every sequence exactly once; every part's tokens fill its steps but the
  // sequence's last.
  std::vector<std::vector<int>> owners(batch);
  for (int b = 0; b < batch; ++b) owners[b].assign(lengths[b], 0);
  std::vector<std::int64_t> token_load(launch_workers, 0);  // the idle ones too
  for (const Part& part : parts) {
    for (std::int64_t token = part.begin; token < part.end; ++token) ++owners[part.batch][token];
    EXPECT_EQ(part.steps, steps_of(part.end - part.begin, block_t));
    EXPECT_EQ(part.begin % block_t, 0);
    token_load[part.worker] += part.end - part.begin;
  }
  for (int b = 0; b < batch; ++b) {
    ASSERT_TRUE(std::all_of(owners[b].begin(), owners[b].end(), [](int n) { return n == 1; }))
        << "sequence " << b;
  }
  // Modelled loads within 2 · start_cost + 1 steps of each other; without a start cost,
  // steps within one of each other, so tokens within one page (but for the partly filled last
  // steps of sequences).
  const std::vector<std::int64_t> loads = modelled_loads(parts, launch_workers, start_cost);
  const auto [lightest, heaviest] = std::minmax_element(loads.begin(), loads.end());
  EXPECT_LE(*heaviest - *lightest, 2 * start_cost + 1);
  if (start_cost == 0 && block_t <= page_size) {
    const std::int64_t last_steps_slack = static_cast<std::int64_t>(batch) * (block_t - 1);
    const auto [fewest, most] = std::minmax_element(token_load.begin(), token_load.end());
    EXPECT_LE(*most - *fewest, page_size + last_steps_slack);
  }

  // Distinct slots, all below part_slots; a sequence's parts are consecutive slots, and its
  // SequenceParts name them, recorded by exactly one worker.
  std::vector<std::int64_t> slots;
  for (const Part& part : parts) slots.push_back(part.slot);
  std::sort(slots.begin(), slots.end());
  EXPECT_EQ(std::adjacent_find(slots.begin(), slots.end()), slots.end());
  if (!slots.empty()) {
    EXPECT_LT(slots.back(), balanced::part_slots(launch_workers, batch));
  }
  for (int b = 0; b < batch; ++b) {
    std::vector<std::int64_t> sequence_slots;
    for (const Part& part : parts) {
      if (part.batch == b) sequence_slots.push_back(part.slot);
    }
    const std::int64_t start = stream.starts[b];
    const balanced::SequenceParts recorded = balanced::sequence_parts(
        b, start, balanced::sequence_cost(stream.steps[b], start_cost), start_cost, workers,
        stream.total);
    EXPECT_EQ(recorded.count, static_cast<int>(sequence_slots.size())) << "sequence " << b;
    for (std::size_t k = 0; k < sequence_slots.size(); ++k) {
      EXPECT_EQ(sequence_slots[k], recorded.first_slot + static_cast<std::int64_t>(k));
    }
    int recorders = 0;
    for (int worker = 0; worker < workers; ++worker) {
      recorders += balanced::records_sequence(worker, workers, stream.total, start) ? 1 : 0;
    }
    EXPECT_EQ(recorders, 1) << "sequence " << b;
  }
}

// Issue 9's mixed batch of `batch` sequences, as the lab draws it: uniform in 1,024-8,192,
// seed 7.
std::vector<std::int64_t> issue9_lengths(int batch) {
  const std::vector<int> drawn = bench::uniform_random_lengths(batch, 1024, 8192, 7);
  return {drawn.begin(), drawn.end()};
}

TEST(BalancedPartition, EveryTokenOnceLoadsBalancedSlotsConsecutive) {
  // Empty and one-token sequences, page boundaries, one long sequence among short ones, fewer
  // steps than workers, no tokens at all; tiles of 16 and 64 tokens; no start cost, the
  // kernels' and a large one.
  for (const int start_cost : {0, kPrologueSteps, 5}) {
    for (const int block_t : {16, 64}) {
      expect_balanced_partition({0, 1, 63, 64, 65, 0, 4097}, 132, block_t, 64, start_cost);
      expect_balanced_partition({1, 1, 1, 100000, 1, 1}, 66, block_t, 64, start_cost);
      expect_balanced_partition({3, 0, 2}, 16, block_t, 64, start_cost);
      expect_balanced_partition({0, 0, 0}, 8, block_t, 64, start_cost);
      expect_balanced_partition({4096}, 1, block_t, 64, start_cost);
    }
    expect_balanced_partition({3, 0, 2, 17, 1}, 4, 1, 1, start_cost);
    for (const int batch : {8, 64, 128}) {
      const std::vector<std::int64_t> lengths = issue9_lengths(batch);
      for (const int workers : {1, 7, 66, 132, 264, kMaxBalancedWorkers}) {
        expect_balanced_partition(lengths, workers, 16, 64, start_cost);
        expect_balanced_partition(lengths, workers, 64, 64, start_cost);
      }
    }
  }
}

TEST(BalancedPartition, StartCostsSpareTheWorkersThatStartManySequences) {
  // Issue 9's mixed batches (1,024-8,192 tokens), 66 workers of 64-token steps: counted in
  // steps alone, the worker with the most parts carries their start costs on top of an equal
  // share of steps; the start positions give it fewer steps.
  for (const int batch : {8, 64, 128}) {
    SCOPED_TRACE(testing::Message() << "batch " << batch);
    const std::vector<std::int64_t> lengths = issue9_lengths(batch);
    const auto heaviest = [&](int start_cost) {
      const std::vector<std::int64_t> loads =
          modelled_loads(list_parts(lengths, 66, 64, start_cost), 66, kPrologueSteps);
      return *std::max_element(loads.begin(), loads.end());
    };
    EXPECT_LT(heaviest(kPrologueSteps), heaviest(0));
  }
}

TEST(BalancedPartition, EveryActiveWorkerHasAPositionAndAtLeastOneWorkerIsActive) {
  EXPECT_EQ(balanced::active_workers(132, 0), 1);
  EXPECT_EQ(balanced::active_workers(132, 5), 5);
  EXPECT_EQ(balanced::active_workers(132, 132), 132);
  EXPECT_EQ(balanced::active_workers(132, std::int64_t{1} << 40), 132);
}

TEST(BalancedPartition, OwnerOfIsTheWorkerWhoseShareHoldsThePosition) {
  for (const std::int64_t total : {1, 10, 131, 4097}) {
    for (const int workers : {1, 3, 132}) {
      for (std::int64_t position = 0; position < total; ++position) {
        const int owner = balanced::owner_of(position, workers, total);
        EXPECT_LE(balanced::worker_begin(owner, workers, total), position);
        EXPECT_LT(position, balanced::worker_begin(owner + 1, workers, total));
      }
    }
  }
}

}  // namespace
}  // namespace mlalab::kernels
