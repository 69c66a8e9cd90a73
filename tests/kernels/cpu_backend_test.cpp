#include "kernels/cpu/cpu_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "bench/check.h"
#include "bench/problem.h"
#include "kernels/reference/reference.h"

namespace mlalab::kernels {
namespace {

using bench::HostProblem;
using bench::ProblemSpec;

// Runs the CPU backend on a fresh problem and checks it against the reference.
void expect_matches_reference(const ProblemSpec& spec, int num_threads = 0) {
  HostProblem problem = bench::make_problem(spec);
  const auto error = run_cpu_backend(problem.params(), num_threads);
  ASSERT_FALSE(error) << error->message();
  const ReferenceResult ref = reference_decode(problem.params());
  const bench::CheckResult check =
      bench::check_against_reference(problem, problem.out, problem.lse, ref);
  EXPECT_TRUE(check.passed) << check.first_failure;
  EXPECT_LT(check.max_rel_err_out, bench::kDefaultOutTolerance);
  EXPECT_LT(check.max_rel_err_lse, bench::kDefaultLseTolerance);
}

std::string describe(const ProblemSpec& spec) {
  std::string lengths;
  for (const int len : spec.seq_lens) lengths += std::to_string(len) + " ";
  return std::string(name_of(spec.layout)) + " heads " + std::to_string(spec.num_heads) +
         " page_size " + std::to_string(spec.page_size) + (spec.with_sinks ? " sinks" : "") +
         " lengths " + lengths;
}

// Every length of interest in one batch: empty, one token, within one page, exactly one page of
// 64, one past it, and several pages.
const std::vector<int> kGridLengths = {0, 1, 15, 64, 65, 300};

TEST(CpuBackend, MatchesReferenceOverTheGrid) {
  std::uint64_t seed = 1;
  for (const Layout layout : {Layout::kV3, Layout::kV4}) {
    for (const int heads : {1, 16, 17, 128}) {
      for (const int page_size : {1, 16, 64}) {
        for (const bool sinks : {false, true}) {
          const ProblemSpec spec{.layout = layout,
                                 .batch = static_cast<int>(kGridLengths.size()),
                                 .num_heads = heads,
                                 .seq_lens = kGridLengths,
                                 .page_size = page_size,
                                 .with_sinks = sinks,
                                 .seed = seed++};
          SCOPED_TRACE(describe(spec));
          expect_matches_reference(spec);
        }
      }
    }
  }
}

TEST(CpuBackend, MatchesReferenceOnUniformBatches) {
  for (const int len : kGridLengths) {
    for (const Layout layout : {Layout::kV3, Layout::kV4}) {
      const ProblemSpec spec{.layout = layout,
                             .batch = 3,
                             .num_heads = 17,
                             .seq_lens = bench::uniform_lengths(3, len),
                             .page_size = 16,
                             .with_sinks = len % 2 == 1,
                             .seed = static_cast<std::uint64_t>(len)};
      SCOPED_TRACE(describe(spec));
      expect_matches_reference(spec);
    }
  }
}

TEST(CpuBackend, MatchesReferenceOnMixedBatchesAtAnyThreadCount) {
  // Several threads cut long sequences into pieces that are merged at the end; the result must
  // not depend on how many there are.
  for (const int threads : {1, 2, 7}) {
    for (const bool sinks : {false, true}) {
      const ProblemSpec spec{.layout = sinks ? Layout::kV4 : Layout::kV3,
                             .batch = 12,
                             .num_heads = 16,
                             .seq_lens = bench::mixed_lengths(12, 700, threads),
                             .page_size = 16,
                             .with_sinks = sinks,
                             .seed = static_cast<std::uint64_t>(threads)};
      SCOPED_TRACE(describe(spec) + " threads " + std::to_string(threads));
      expect_matches_reference(spec, threads);
    }
  }
}

TEST(CpuBackend, SplitsOneLongSequenceAcrossThreads) {
  const ProblemSpec spec{
      .batch = 1, .num_heads = 17, .seq_lens = {3000}, .page_size = 64, .with_sinks = true};
  SCOPED_TRACE(describe(spec));
  expect_matches_reference(spec, 8);
}

TEST(CpuBackend, NanInputShowsAsFailure) {
  HostProblem problem = bench::make_problem({.batch = 2, .num_heads = 2, .seq_lens = {3, 4}});
  problem.kv_row(1, 2)[0] = to_bf16(std::numeric_limits<float>::quiet_NaN());
  ASSERT_FALSE(run_cpu_backend(problem.params()));
  const ReferenceResult ref = reference_decode(problem.params());
  const bench::CheckResult check =
      bench::check_against_reference(problem, problem.out, problem.lse, ref);
  EXPECT_FALSE(check.passed);
  EXPECT_GT(check.nan_count, 0);
  EXPECT_EQ(check.unwritten_count, 0);
}

TEST(CpuBackend, InvalidInputReturnsTheErrorAndWritesNothing) {
  HostProblem problem =
      bench::make_problem({.batch = 3, .num_heads = 4, .seq_lens = {5, 64, 0}, .page_size = 64});
  problem.seq_lens[1] = problem.max_pages_per_seq * problem.spec.page_size + 1;
  auto error = run_cpu_backend(problem.params());
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field, "seq_lens[1]");

  problem.seq_lens[1] = 64;
  DecodeParams params = problem.params();
  params.num_heads = 129;
  error = run_cpu_backend(params);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field, "num_heads");

  error = run_cpu_backend(problem.params(), -1);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field, "num_threads");

  EXPECT_TRUE(std::all_of(problem.out.begin(), problem.out.end(),
                          [](bf16 value) { return bench::is_poison(value); }));
  EXPECT_TRUE(std::all_of(problem.lse.begin(), problem.lse.end(),
                          [](float value) { return bench::is_poison(value); }));
}

}  // namespace
}  // namespace mlalab::kernels
