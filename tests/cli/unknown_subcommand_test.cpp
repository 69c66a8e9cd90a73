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

TEST(UnknownOptionMessage, NamesTheOptionWithoutItsValueAndTheLikelyOne) {
  const std::vector<std::string> options = {"--heads", "--batch", "--context", "--help"};
  EXPECT_EQ(unknown_option_message("bench", "--hedas", options),
            "mlalab bench: unknown option '--hedas' (did you mean '--heads'?); see 'mlalab bench "
            "--help'\n");
  EXPECT_EQ(unknown_option_message("bench", "--contxt=4096", options),
            "mlalab bench: unknown option '--contxt' (did you mean '--context'?); see 'mlalab "
            "bench --help'\n");
  EXPECT_EQ(unknown_option_message("bench", "--frobnicate", options),
            "mlalab bench: unknown option '--frobnicate'; see 'mlalab bench --help'\n");
}

}  // namespace
}  // namespace mlalab::cli
