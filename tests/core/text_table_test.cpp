#include "core/text_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace mlalab {
namespace {

TEST(TextTable, DisplayWidthCountsCharactersNotBytes) {
  EXPECT_EQ(display_width("A′ − A ±"), 8u);
  EXPECT_EQ(display_width("µs"), 2u);
  EXPECT_EQ(display_width(""), 0u);
}

TEST(TextTable, MarkdownAlignsNumbersRightAndTextLeft) {
  std::ostringstream out;
  print_markdown_table(out, {{"variant", false}, {"µs", true}},
                       {{"h16_t16_w4_s2", "12.3"}, {"cpu", "1,234.5"}});
  EXPECT_EQ(out.str(),
            "| variant       |      µs |\n"
            "| :------------ | ------: |\n"
            "| h16_t16_w4_s2 |    12.3 |\n"
            "| cpu           | 1,234.5 |\n");
}

TEST(TextTable, MarkdownColumnsAreAtLeastThreeWide) {
  std::ostringstream out;
  print_markdown_table(out, {{"B", true}}, {{"1"}});
  EXPECT_EQ(out.str(), "|   B |\n| --: |\n|   1 |\n");
}

TEST(TextTable, PlainLeavesTheLastColumnUnpaddedAndNoTrailingSpaces) {
  std::ostringstream out;
  print_plain_table(out, {{"variant", false}, {"regs", true}, {"reason", false}},
                    {{"h16_t16_w4_s2", "96", ""}, {"h64_t64_w8_s4", "-", "needs 402,176 B"}});
  EXPECT_EQ(out.str(),
            "variant        regs  reason\n"
            "h16_t16_w4_s2    96\n"
            "h64_t64_w8_s4     -  needs 402,176 B\n");
}

}  // namespace
}  // namespace mlalab
