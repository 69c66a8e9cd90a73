#include "core/number_text.h"

#include <gtest/gtest.h>

namespace mlalab {
namespace {

TEST(GroupThousands, InsertsCommas) {
  EXPECT_EQ(group_thousands(0), "0");
  EXPECT_EQ(group_thousands(999), "999");
  EXPECT_EQ(group_thousands(1000), "1,000");
  EXPECT_EQ(group_thousands(101376), "101,376");
  EXPECT_EQ(group_thousands(1048576), "1,048,576");
}

TEST(GroupThousands, SignsNegativesWithTheGivenMinus) {
  EXPECT_EQ(group_thousands(-2048), "-2,048");
  EXPECT_EQ(group_thousands(-1000, "−"), "−1,000");
  EXPECT_EQ(group_thousands(-999, "−"), "−999");
}

TEST(Counted, PluralButForOne) {
  EXPECT_EQ(counted(1, "arm"), "1 arm");
  EXPECT_EQ(counted(0, "arm"), "0 arms");
  EXPECT_EQ(counted(3, "usable CPU"), "3 usable CPUs");
}

}  // namespace
}  // namespace mlalab
