#include "core/median.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace mlalab {
namespace {

TEST(Median, OddCountsTakeTheMiddleAndEvenCountsTheMeanOfTheTwo) {
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(median({7.0}), 7.0);
  EXPECT_EQ(median({1.0, 1.0, 100.0}), 1.0);  // one slow sample does not move it
}

TEST(Median, OfNoSamplesIsAnError) { EXPECT_THROW(median({}), std::invalid_argument); }

}  // namespace
}  // namespace mlalab
