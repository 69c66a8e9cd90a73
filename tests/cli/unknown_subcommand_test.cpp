#include "cli/unknown_subcommand.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mlalab::cli {
namespace {

const std::vector<std::string> kSubcommands = {"configs", "bench", "verify", "ab"};

TEST(UnknownSubcommandMessage, NamesTheWordTheSuggestionAndTheList) {
  EXPECT_EQ(unknown_subcommand_message("bnech", kSubcommands),
            "mlalab: unknown subcommand 'bnech'; did you mean 'bench'?\n"
            "Subcommands: configs, bench, verify, ab\n");
  EXPECT_EQ(unknown_subcommand_message("run", kSubcommands),
            "mlalab: unknown subcommand 'run'\n"
            "Subcommands: configs, bench, verify, ab\n");
}

}  // namespace
}  // namespace mlalab::cli
