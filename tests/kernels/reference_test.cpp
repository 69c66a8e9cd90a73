#include "kernels/reference/reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "bench/problem.h"

namespace mlalab::kernels {
namespace {

using bench::HostProblem;
using bench::make_problem;
using bench::ProblemSpec;

constexpr double kExact = 1e-12;  // relative slack for fp64 rounding in "exact" results

void fill(bf16* values, int count, float value) {
  std::fill(values, values + count, to_bf16(value));
}

bf16* q_row(HostProblem& problem, int b, int h) {
  return &problem.q[(static_cast<std::size_t>(b) * problem.spec.num_heads + h) * problem.dims.d_qk];
}

double out_at(const HostProblem& problem, const ReferenceResult& ref, int b, int h, int d) {
  return ref.out[(static_cast<std::size_t>(b) * problem.spec.num_heads + h) * problem.dims.d_v + d];
}

double lse_at(const HostProblem& problem, const ReferenceResult& ref, int b, int h) {
  return ref.lse[static_cast<std::size_t>(b) * problem.spec.num_heads + h];
}

TEST(Reference, OneTokenGivesItsValueRowAndItsScore) {
  for (const Layout layout : {Layout::kV3, Layout::kV4}) {
    HostProblem problem = make_problem(
        {.layout = layout, .batch = 1, .num_heads = 2, .seq_lens = {1}, .with_sinks = false});
    const LayoutDims dims = problem.dims;
    // q is 0.5 on the rope part and 0 on the latent part, the row's rope part is 0.25: the score
    // is d_rope · 0.125 · scale whatever the (random) latent part, which is V.
    bf16* row = problem.kv_row(0, 0);
    fill(row + dims.d_latent, dims.d_rope, 0.25f);
    for (int h = 0; h < 2; ++h) {
      fill(q_row(problem, 0, h), dims.d_latent, 0.0f);
      fill(q_row(problem, 0, h) + dims.d_latent, dims.d_rope, 0.5f);
    }
    const ReferenceResult ref = reference_decode(problem.params());
    const double score = dims.d_rope * 0.125 * problem.spec.softmax_scale;
    for (int h = 0; h < 2; ++h) {
      EXPECT_DOUBLE_EQ(lse_at(problem, ref, 0, h), score);
      for (int d = 0; d < dims.d_v; ++d) {
        ASSERT_EQ(out_at(problem, ref, 0, h, d), to_float(row[d])) << "d=" << d;
      }
    }
  }
}

TEST(Reference, TwoTokensWithKnownScores) {
  HostProblem problem = make_problem(
      {.batch = 1, .num_heads = 1, .seq_lens = {2}, .page_size = 1, .softmax_scale = 1.0f});
  // q = e_0, so each score is its row's first element: 1 and 2.
  bf16* q = q_row(problem, 0, 0);
  fill(q, problem.dims.d_qk, 0.0f);
  q[0] = to_bf16(1.0f);
  bf16* first = problem.kv_row(0, 0);
  bf16* second = problem.kv_row(0, 1);
  first[0] = to_bf16(1.0f);
  second[0] = to_bf16(2.0f);

  const ReferenceResult ref = reference_decode(problem.params());
  const double e1 = std::exp(1.0);
  const double e2 = std::exp(2.0);
  EXPECT_NEAR(lse_at(problem, ref, 0, 0), std::log(e1 + e2), kExact);
  for (int d = 0; d < problem.dims.d_v; ++d) {
    const double expected = (e1 * to_float(first[d]) + e2 * to_float(second[d])) / (e1 + e2);
    ASSERT_NEAR(out_at(problem, ref, 0, 0, d), expected, kExact) << "d=" << d;
  }
}

TEST(Reference, IdenticalRowsAverageToThatRow) {
  // Entry 0 holds one token, entry 1 a hundred copies of it, with the same q: the outputs
  // match and lse grows by ln(100).
  constexpr int kCopies = 100;
  HostProblem problem =
      make_problem({.batch = 2, .num_heads = 3, .seq_lens = {1, kCopies}, .page_size = 16});
  const int d_qk = problem.dims.d_qk;
  for (int h = 0; h < 3; ++h) std::copy_n(q_row(problem, 0, h), d_qk, q_row(problem, 1, h));
  for (int token = 0; token < kCopies; ++token) {
    std::copy_n(problem.kv_row(0, 0), d_qk, problem.kv_row(1, token));
  }
  const ReferenceResult ref = reference_decode(problem.params());
  for (int h = 0; h < 3; ++h) {
    EXPECT_NEAR(lse_at(problem, ref, 1, h), lse_at(problem, ref, 0, h) + std::log(kCopies), kExact);
    for (int d = 0; d < problem.dims.d_v; ++d) {
      const double single = out_at(problem, ref, 0, h, d);
      ASSERT_NEAR(out_at(problem, ref, 1, h, d), single, kExact * std::abs(single)) << "d=" << d;
    }
  }
}

TEST(Reference, SinkShrinksOutByItsShareOfTheDenominator) {
  HostProblem problem = make_problem(
      {.batch = 3, .num_heads = 4, .seq_lens = {1, 40, 130}, .page_size = 64, .with_sinks = true});
  const ReferenceResult with_sink = reference_decode(problem.params());
  DecodeParams no_sink_params = problem.params();
  no_sink_params.sink_logits = nullptr;
  const ReferenceResult without_sink = reference_decode(no_sink_params);

  for (int b = 0; b < 3; ++b) {
    for (int h = 0; h < 4; ++h) {
      // Σ exp(s) = exp(lse), so the sink's factor is exp(lse) / (exp(lse) + exp(sink)).
      const double lse = lse_at(problem, without_sink, b, h);
      const double factor = 1.0 / (1.0 + std::exp(problem.sinks[h] - lse));
      EXPECT_LT(factor, 0.99) << "the test sinks should matter";
      EXPECT_EQ(lse_at(problem, with_sink, b, h), lse) << "lse covers the scores alone";
      for (int d = 0; d < problem.dims.d_v; ++d) {
        const double expected = out_at(problem, without_sink, b, h, d) * factor;
        ASSERT_NEAR(out_at(problem, with_sink, b, h, d), expected, kExact * std::abs(expected));
      }
    }
  }
}

TEST(Reference, SinkEqualToTheOnlyScoreHalvesOut) {
  HostProblem problem =
      make_problem({.batch = 1, .num_heads = 2, .seq_lens = {1}, .with_sinks = true});
  const ReferenceResult no_sink = [&] {
    DecodeParams params = problem.params();
    params.sink_logits = nullptr;
    return reference_decode(params);
  }();
  // lse of a single token is its score; a sink equal to it takes half the weight. The sink is
  // fp32, so compare against the score as rounded to fp32.
  for (int h = 0; h < 2; ++h) problem.sinks[h] = static_cast<float>(lse_at(problem, no_sink, 0, h));
  const ReferenceResult with_sink = reference_decode(problem.params());
  for (int h = 0; h < 2; ++h) {
    const double rounding = problem.sinks[h] - lse_at(problem, no_sink, 0, h);
    const double factor = 1.0 / (1.0 + std::exp(rounding));
    EXPECT_NEAR(factor, 0.5, 1e-7);
    for (int d = 0; d < problem.dims.d_v; ++d) {
      ASSERT_NEAR(out_at(problem, with_sink, 0, h, d), out_at(problem, no_sink, 0, h, d) * factor,
                  kExact);
    }
  }
}

TEST(Reference, EmptySequenceGivesZeroAndMinusInfinity) {
  HostProblem problem =
      make_problem({.batch = 2, .num_heads = 2, .seq_lens = {0, 5}, .with_sinks = true});
  const ReferenceResult ref = reference_decode(problem.params());
  for (int h = 0; h < 2; ++h) {
    EXPECT_EQ(lse_at(problem, ref, 0, h), -std::numeric_limits<double>::infinity());
    EXPECT_TRUE(std::isfinite(lse_at(problem, ref, 1, h)));
    for (int d = 0; d < problem.dims.d_v; ++d) {
      ASSERT_EQ(out_at(problem, ref, 0, h, d), 0.0);
    }
  }
}

TEST(Reference, NeverReadsPastASequenceEnd) {
  // Rows past each end are NaN and table entries past the last page point outside the cache.
  HostProblem problem =
      make_problem({.batch = 4, .num_heads = 2, .seq_lens = {1, 63, 65, 0}, .page_size = 64});
  const ReferenceResult ref = reference_decode(problem.params());
  for (const double value : ref.out) ASSERT_TRUE(std::isfinite(value));
}

TEST(Reference, PagingDoesNotChangeTheResult) {
  // The same logical data under pages of 64 (in order) and pages of 1 (permuted).
  const std::vector<int> lengths = {70, 3, 0, 129};
  HostProblem paged = make_problem({.layout = Layout::kV4,
                                    .batch = 4,
                                    .num_heads = 5,
                                    .seq_lens = lengths,
                                    .page_size = 64,
                                    .with_sinks = true,
                                    .permute_pages = false});
  HostProblem single_rows = make_problem({.layout = Layout::kV4,
                                          .batch = 4,
                                          .num_heads = 5,
                                          .seq_lens = lengths,
                                          .page_size = 1,
                                          .with_sinks = true,
                                          .seed = 7});
  single_rows.q = paged.q;
  single_rows.sinks = paged.sinks;
  for (int b = 0; b < 4; ++b) {
    for (int token = 0; token < lengths[b]; ++token) {
      std::copy_n(paged.kv_row(b, token), paged.dims.d_qk, single_rows.kv_row(b, token));
    }
  }
  const ReferenceResult expected = reference_decode(paged.params());
  const ReferenceResult actual = reference_decode(single_rows.params());
  EXPECT_EQ(actual.out, expected.out);
  EXPECT_EQ(actual.lse, expected.lse);
}

TEST(Reference, BatchIndicesComputeOnlyThoseEntries) {
  HostProblem problem = make_problem({.batch = 4, .num_heads = 3, .seq_lens = {5, 9, 1, 30}});
  const ReferenceResult full = reference_decode(problem.params());
  const std::vector<int> sample = {2, 0, 2};
  const ReferenceResult partial = reference_decode(problem.params(), sample);
  const std::size_t row_elems = 3 * static_cast<std::size_t>(problem.dims.d_v);
  for (int b = 0; b < 4; ++b) {
    const bool sampled = b == 0 || b == 2;
    for (std::size_t i = b * row_elems; i < (b + 1) * row_elems; ++i) {
      if (sampled) {
        ASSERT_EQ(partial.out[i], full.out[i]);
      } else {
        ASSERT_TRUE(std::isnan(partial.out[i]));
      }
    }
    for (int h = 0; h < 3; ++h) {
      if (sampled) {
        EXPECT_EQ(lse_at(problem, partial, b, h), lse_at(problem, full, b, h));
      } else {
        EXPECT_TRUE(std::isnan(lse_at(problem, partial, b, h)));
      }
    }
  }
}

TEST(Reference, RejectsInvalidInput) {
  HostProblem problem = make_problem({.batch = 2, .num_heads = 1, .seq_lens = {3, 4}});
  const std::vector<int> outside = {2};
  EXPECT_THROW(reference_decode(problem.params(), outside), std::out_of_range);
  problem.seq_lens[1] = problem.max_pages_per_seq * problem.spec.page_size + 1;
  EXPECT_THROW(reference_decode(problem.params()), std::invalid_argument);
}

}  // namespace
}  // namespace mlalab::kernels
