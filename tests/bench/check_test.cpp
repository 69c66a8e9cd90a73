#include "bench/check.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "bench/problem.h"
#include "kernels/reference/reference.h"

namespace mlalab::bench {
namespace {

// A problem whose outputs hold the reference rounded as a backend would write it (bf16 out,
// fp32 lse), so each test can break one thing and see the check catch it.
class CheckTest : public ::testing::Test {
 protected:
  CheckTest()
      : problem_(make_problem({.batch = 3,
                               .num_heads = 2,
                               .seq_lens = {0, 7, 40},
                               .page_size = 16,
                               .with_sinks = true})),
        ref_(kernels::reference_decode(problem_.params())) {
    for (std::size_t i = 0; i < ref_.out.size(); ++i)
      problem_.out[i] = to_bf16(static_cast<float>(ref_.out[i]));
    for (std::size_t i = 0; i < ref_.lse.size(); ++i)
      problem_.lse[i] = static_cast<float>(ref_.lse[i]);
  }

  CheckResult check(std::span<const int> batch_indices = {}) const {
    return check_against_reference(problem_, problem_.out, problem_.lse, ref_, batch_indices);
  }

  std::size_t out_index(int b, int h, int d) const {
    return (static_cast<std::size_t>(b) * 2 + h) * problem_.dims.d_v + d;
  }

  HostProblem problem_;
  kernels::ReferenceResult ref_;
};

TEST_F(CheckTest, RoundedReferencePasses) {
  const CheckResult result = check();
  EXPECT_TRUE(result.passed) << result.first_failure;
  EXPECT_TRUE(result.first_failure.empty());
  EXPECT_GT(result.max_rel_err_out, 0.0) << "bf16 rounding is an error, if a small one";
  EXPECT_LT(result.max_rel_err_out, 4e-3);  // half a bf16 ulp relative to the row maximum
  EXPECT_LT(result.max_rel_err_lse, 1e-6);
}

TEST_F(CheckTest, ErrorAboveToleranceFails) {
  const std::size_t i = out_index(2, 1, 100);
  problem_.out[i] = to_bf16(to_float(problem_.out[i]) + 0.05f);
  const CheckResult result = check();
  EXPECT_FALSE(result.passed);
  EXPECT_GT(result.max_rel_err_out, kDefaultOutTolerance);
  EXPECT_NE(result.first_failure.find("b=2 h=1"), std::string::npos) << result.first_failure;
  EXPECT_NE(result.first_failure.find("out[100]"), std::string::npos) << result.first_failure;
}

TEST_F(CheckTest, LseErrorFails) {
  problem_.lse[3] += 0.01f;  // b=1 h=1; lse is of order 1, so the error is about 1e-2
  const CheckResult result = check();
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.first_failure.find("lse"), std::string::npos) << result.first_failure;
}

TEST_F(CheckTest, EmptySequenceMustBeExactlyZeroAndMinusInfinity) {
  problem_.out[out_index(0, 0, 3)] = to_bf16(1e-30f);  // tiny, but not zero
  CheckResult result = check();
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.first_failure.find("exactly 0"), std::string::npos) << result.first_failure;

  problem_.out[out_index(0, 0, 3)] = to_bf16(-0.0f);  // negative zero is zero
  EXPECT_TRUE(check().passed);

  problem_.lse[1] = -1e30f;  // b=0 h=1: finite, however small
  result = check();
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.first_failure.find("-inf"), std::string::npos) << result.first_failure;
}

TEST_F(CheckTest, NanAndUnwrittenAreCountedApart) {
  problem_.out[out_index(1, 0, 5)] = to_bf16(std::numeric_limits<float>::quiet_NaN());
  problem_.out[out_index(2, 0, 9)] = kPoisonBf16;
  problem_.out[out_index(2, 0, 10)] = kPoisonBf16;
  problem_.lse[5] = std::bit_cast<float>(0xffffffffu);
  const CheckResult result = check();
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.nan_count, 1);
  EXPECT_EQ(result.unwritten_count, 3);
  EXPECT_NE(result.first_failure.find("NaN"), std::string::npos) << result.first_failure;
}

TEST_F(CheckTest, ChecksOnlyTheSampledEntries) {
  problem_.out[out_index(1, 1, 0)] = kPoisonBf16;
  const std::vector<int> sample = {0, 2};
  EXPECT_TRUE(check(sample).passed);
  const std::vector<int> with_broken = {1};
  EXPECT_FALSE(check(with_broken).passed);
  const std::vector<int> outside = {3};
  EXPECT_THROW(check(outside), std::out_of_range);
}

TEST_F(CheckTest, RejectsMismatchedSizes) {
  const std::span<const bf16> short_out(problem_.out.data(), problem_.out.size() - 1);
  EXPECT_THROW(check_against_reference(problem_, short_out, problem_.lse, ref_),
               std::invalid_argument);
}

TEST_F(CheckTest, RowsTheReferenceDidNotComputeFail) {
  const std::vector<int> only_first = {0};
  const kernels::ReferenceResult partial = kernels::reference_decode(problem_.params(), only_first);
  const CheckResult result = check_against_reference(problem_, problem_.out, problem_.lse, partial);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.first_failure.find("b=1"), std::string::npos) << result.first_failure;
  EXPECT_NE(result.first_failure.find("reference is NaN"), std::string::npos);
}

}  // namespace
}  // namespace mlalab::bench
