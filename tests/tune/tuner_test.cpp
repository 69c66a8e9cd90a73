// The tuner's pure part: which split counts each variant races at a key, and the lengths of its
// problem. (Racing itself is tests/tune/race_test.cpp; the tuner on a GPU is measured in
// docs/results.)
#include "tune/tuner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "kernels/split_plan.h"

namespace mlalab::tune {
namespace {

constexpr int kH200Sms = 132;

// `batch` sequences of `context` tokens, `heads` heads in blocks of `block_h`, V3.
kernels::SplitShape split_shape(int batch, int heads, int block_h, int context, int block_t) {
  return {.batch = batch,
          .num_heads = heads,
          .head_blocks = (heads + block_h - 1) / block_h,
          .max_seq_len = context,
          .block_t = block_t};
}

// The heuristic's count for 16 heads in one block.
int heuristic_splits(int batch, int context, int block_t, int ctas_per_sm) {
  return kernels::choose_num_splits({}, split_shape(batch, 16, 16, context, block_t),
                                    {.sm_count = kH200Sms, .ctas_per_sm = ctas_per_sm});
}


// Refused before any GPU is asked for: a table of other lengths is refused on any machine.
TEST(Tune, RefusesATableOfOtherLengthsNamingTheField) {
  dispatch::TuningTable existing;
  existing.lengths = {.shortest_fraction = 0.125};
  const TuneRequest request{.batches = {8}, .contexts = {4096}};
  std::ostringstream progress;
  try {
    tune(request, existing, [](const dispatch::TuningTable&) {}, progress);
    FAIL() << "tuned into a table of other lengths";
  } catch (const dispatch::TableError& error) {
    EXPECT_EQ(std::string(error.what()),
              "lengths: the existing table was tuned on uniform:0.125 lengths, this run draws "
              "equal: re-tune into a new file, or pass --lengths uniform:0.125");
  }
}

TEST(Tune, RefusesAShortestFractionOutsideItsRange) {
  for (const double fraction : {0.0, -0.5, 1.5}) {
    const TuneRequest request{
        .batches = {8}, .contexts = {4096}, .lengths = {.shortest_fraction = fraction}};
    std::ostringstream progress;
    EXPECT_THROW(tune(request, std::nullopt, [](const dispatch::TuningTable&) {}, progress),
                 std::invalid_argument)
        << fraction;
  }
}

TEST(SplitCandidates, OneSequenceRacesTheHeuristicItsNeighboursOneWaveAndNoSplit) {
  // 4096 tokens in 16-token steps: 256 steps, so at most 256 splits; one wave of 3 CTAs per SM
  // holds 396 CTAs, more than the steps allow.
  const int h = heuristic_splits(1, 4096, 16, 3);
  const std::vector<int> splits = split_candidates(split_shape(1, 16, 16, 4096, 16), kH200Sms, 3);
  std::vector<int> expected = {1, h / 2, h, 2 * h, 256};
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  EXPECT_EQ(splits, expected);
}

TEST(SplitCandidates, ALargeBatchRacesTheCountThatFillsOneWave) {
  // 128 sequences × 1 head block: 396 slots / 128 = 3 splits fill one wave.
  const std::vector<int> splits = split_candidates(split_shape(128, 16, 16, 4096, 16), kH200Sms, 3);
  EXPECT_TRUE(std::is_sorted(splits.begin(), splits.end()));
  EXPECT_EQ(std::adjacent_find(splits.begin(), splits.end()), splits.end()) << "duplicates";
  EXPECT_NE(std::find(splits.begin(), splits.end(), 3), splits.end());
  EXPECT_NE(std::find(splits.begin(), splits.end(), 1), splits.end());
  EXPECT_NE(std::find(splits.begin(), splits.end(), heuristic_splits(128, 4096, 16, 3)),
            splits.end());
}

TEST(SplitCandidates, AreCappedSoEverySplitHasTokens) {
  // 40 tokens in 16-token steps: 3 steps, so no candidate above 3.
  for (const int splits : split_candidates(split_shape(1, 16, 16, 40, 16), kH200Sms, 3)) {
    EXPECT_GE(splits, 1);
    EXPECT_LE(splits, 3);
  }
}

// H = 128 with one 64-head CTA per SM at batch 80: 160 CTAs per split, so no split count fills
// whole waves; the balanced launch (one wave of workers) races beside the split counts.
const kernels::SplitShape kBatch80 = split_shape(80, 128, 64, 4096, 64);

TEST(CandidateSplits, TheSplitCountsThenTheBalancedLaunch) {
  const std::vector<SplitPolicy> splits = candidate_splits(kBatch80, kH200Sms, 1, true);
  const std::vector<int> counts = split_candidates(kBatch80, kH200Sms, 1);
  ASSERT_EQ(splits.size(), counts.size() + 1);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    EXPECT_EQ(splits[i], (SplitPolicy{.kind = SplitPolicy::Kind::kFixed, .value = counts[i]}));
  }
  EXPECT_EQ(splits.back(), (SplitPolicy{.kind = SplitPolicy::Kind::kBalanced, .value = 0}));
}

TEST(CandidateSplits, NoBalancedLaunchWhenItsKernelDoesNotFit) {
  for (const SplitPolicy& split : candidate_splits(kBatch80, kH200Sms, 1, false)) {
    EXPECT_EQ(split.kind, SplitPolicy::Kind::kFixed);
  }
}

}  // namespace
}  // namespace mlalab::tune
