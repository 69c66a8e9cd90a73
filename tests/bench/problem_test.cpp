#include "bench/problem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace mlalab::bench {
namespace {

bool is_nan(bf16 value) { return std::isnan(to_float(value)); }

bool same_values(const std::vector<bf16>& a, const std::vector<bf16>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](bf16 x, bf16 y) { return x.bits == y.bits; });
}

HostProblem small_problem() {
  return make_problem({.layout = Layout::kV4,
                       .batch = 4,
                       .num_heads = 3,
                       .seq_lens = {5, 0, 16, 17},
                       .page_size = 16,
                       .with_sinks = true});
}

TEST(Problem, SizesFollowTheSpec) {
  const HostProblem problem = small_problem();
  EXPECT_EQ(problem.max_pages_per_seq, 2);  // ceil(17 / 16)
  EXPECT_GE(problem.num_pages, 1 + 0 + 1 + 2);
  EXPECT_EQ(problem.q.size(), 4u * 3 * 512);
  EXPECT_EQ(problem.kv_cache.size(), static_cast<std::size_t>(problem.num_pages) * 16 * 512);
  EXPECT_EQ(problem.page_table.size(), 4u * 2);
  EXPECT_EQ(problem.sinks.size(), 3u);
  EXPECT_EQ(problem.max_seq_len(), 17);

  const HostProblem empty = make_problem({.batch = 2, .seq_lens = {0, 0}});
  EXPECT_EQ(empty.max_pages_per_seq, 1);
  EXPECT_GE(empty.num_pages, 1);
}

TEST(Problem, EveryRowOutsideTheSequencesIsNaN) {
  const HostProblem problem = small_problem();
  std::set<const bf16*> sequence_rows;
  for (int b = 0; b < 4; ++b) {
    for (int token = 0; token < problem.seq_lens[b]; ++token) {
      sequence_rows.insert(problem.kv_row(b, token));
    }
  }
  EXPECT_EQ(sequence_rows.size(), 5u + 16 + 17) << "tokens must not share rows";
  const int d_qk = problem.dims.d_qk;
  for (std::size_t row = 0; row < problem.kv_cache.size() / d_qk; ++row) {
    const bf16* start = &problem.kv_cache[row * d_qk];
    const bool in_sequence = sequence_rows.contains(start);
    ASSERT_EQ(std::all_of(start, start + d_qk, is_nan), !in_sequence) << "row " << row;
    ASSERT_EQ(std::none_of(start, start + d_qk, is_nan), in_sequence) << "row " << row;
  }
}

TEST(Problem, TableEntriesPastTheLastPagePointOutsideTheCache) {
  const HostProblem problem = small_problem();
  std::set<int> used_pages;
  for (int b = 0; b < 4; ++b) {
    const int pages = (problem.seq_lens[b] + 15) / 16;
    for (int page = 0; page < problem.max_pages_per_seq; ++page) {
      const int entry = problem.page_table[b * problem.max_pages_per_seq + page];
      if (page < pages) {
        EXPECT_TRUE(entry >= 0 && entry < problem.num_pages) << b << "," << page;
        EXPECT_TRUE(used_pages.insert(entry).second) << "page " << entry << " used twice";
      } else {
        EXPECT_TRUE(entry < 0 || entry >= problem.num_pages) << b << "," << page;
      }
    }
  }
}

TEST(Problem, InputsAreNeverZeroAndTakeBothSigns) {
  const HostProblem problem = small_problem();
  const auto check = [](const bf16* begin, const bf16* end) {
    for (const bf16* value = begin; value != end; ++value) {
      const float x = to_float(*value);
      ASSERT_GE(std::abs(x), 0.04f);
      ASSERT_LE(std::abs(x), 1.0f);
    }
    EXPECT_TRUE(std::any_of(begin, end, [](bf16 v) { return to_float(v) < 0; }));
    EXPECT_TRUE(std::any_of(begin, end, [](bf16 v) { return to_float(v) > 0; }));
  };
  check(problem.q.data(), problem.q.data() + problem.q.size());
  const bf16* row = problem.kv_row(3, 16);
  check(row, row + problem.dims.d_qk);
  for (const float sink : problem.sinks) EXPECT_TRUE(std::isfinite(sink));
}

TEST(Problem, ScoresSpreadWithoutBeingOneHot) {
  // One head over 2000 tokens: the softmax must be far from uniform and from one-hot.
  const HostProblem problem = make_problem({.batch = 1, .num_heads = 1, .seq_lens = {2000}});
  std::vector<double> scores;
  for (int token = 0; token < 2000; ++token) {
    double dot = 0.0;
    const bf16* k = problem.kv_row(0, token);
    for (int d = 0; d < problem.dims.d_qk; ++d) dot += to_float(problem.q[d]) * to_float(k[d]);
    scores.push_back(dot * problem.spec.softmax_scale);
  }
  const auto [low, high] = std::minmax_element(scores.begin(), scores.end());
  double sum = 0.0;
  for (const double score : scores) sum += std::exp(score - *high);
  EXPECT_GT(*high - *low, 2.0) << "weights should differ by large factors";
  EXPECT_LT(1.0 / sum, 0.05) << "the largest weight should not dominate";
}

TEST(Problem, OutputsStartPoisoned) {
  HostProblem problem = small_problem();
  EXPECT_TRUE(
      std::all_of(problem.out.begin(), problem.out.end(), [](bf16 v) { return is_poison(v); }));
  EXPECT_TRUE(
      std::all_of(problem.lse.begin(), problem.lse.end(), [](float v) { return is_poison(v); }));
  problem.out[7] = to_bf16(1.0f);
  problem.lse[2] = 0.0f;
  EXPECT_FALSE(is_poison(problem.out[7]));
  EXPECT_FALSE(is_poison(problem.lse[2]));
  EXPECT_FALSE(is_poison(to_bf16(std::nanf(""))));  // a computed NaN is not the poison
  problem.poison_outputs();
  EXPECT_TRUE(is_poison(problem.out[7]));
  EXPECT_TRUE(is_poison(problem.lse[2]));
}

TEST(Problem, PermutationFollowsTheSpecAndTheSeed) {
  const ProblemSpec spec{.batch = 2, .num_heads = 1, .seq_lens = {300, 300}, .page_size = 16};
  const HostProblem permuted = make_problem(spec);
  const HostProblem again = make_problem(spec);
  EXPECT_TRUE(same_values(again.kv_cache, permuted.kv_cache)) << "same seed, same problem";
  EXPECT_TRUE(same_values(again.q, permuted.q));
  EXPECT_EQ(again.page_table, permuted.page_table);
  ProblemSpec other_seed = spec;
  other_seed.seed = 2;
  EXPECT_NE(make_problem(other_seed).page_table, permuted.page_table);

  ProblemSpec in_order = spec;
  in_order.permute_pages = false;
  const HostProblem sequential = make_problem(in_order);
  for (int page = 0; page < sequential.max_pages_per_seq; ++page) {
    EXPECT_EQ(sequential.page_table[page], page);
  }
  EXPECT_FALSE(std::is_sorted(permuted.page_table.begin(),
                              permuted.page_table.begin() + permuted.max_pages_per_seq));
}

TEST(Problem, RejectsSpecsItCannotBuild) {
  EXPECT_THROW(make_problem({.batch = 2, .seq_lens = {1}}), std::invalid_argument);
  EXPECT_THROW(make_problem({.batch = 1, .seq_lens = {-1}}), std::invalid_argument);
  EXPECT_THROW(make_problem({.batch = 1, .num_heads = 0, .seq_lens = {1}}), std::invalid_argument);
  EXPECT_THROW(make_problem({.batch = 1, .seq_lens = {1}, .page_size = 0}), std::invalid_argument);
  const HostProblem problem = small_problem();
  EXPECT_THROW(problem.kv_row(0, 5), std::out_of_range) << "token 5 of a 5-token sequence";
}

TEST(Lengths, MixedIncludesTheEdgesAndStaysInRange) {
  const std::vector<int> lengths = mixed_lengths(20, 1000, 3);
  ASSERT_EQ(lengths.size(), 20u);
  for (const int edge : {0, 1, 1000}) {
    EXPECT_NE(std::find(lengths.begin(), lengths.end(), edge), lengths.end()) << edge;
  }
  for (const int len : lengths) EXPECT_TRUE(len >= 0 && len <= 1000);
  EXPECT_EQ(mixed_lengths(20, 1000, 3), lengths);
  EXPECT_NE(mixed_lengths(20, 1000, 4), lengths);
  EXPECT_EQ(mixed_lengths(1, 77, 1), std::vector<int>{77});
  EXPECT_EQ(uniform_lengths(3, 9), (std::vector<int>{9, 9, 9}));
}

TEST(Problem, DefaultScaleIsDeepSeeks) {
  EXPECT_FLOAT_EQ(kDeepSeekSoftmaxScale, static_cast<float>(1.0 / std::sqrt(192.0)));
}

}  // namespace
}  // namespace mlalab::bench
