#pragma once
// What `mlalab bnech` says: the word it did not know, the subcommand it was most likely a typo
// of, and the subcommands there are.
#include <string>
#include <string_view>
#include <vector>

namespace mlalab::cli {

// "mlalab: unknown subcommand 'bnech'; did you mean 'bench'?" and a line listing the
// subcommands, each line ending in a newline.
std::string unknown_subcommand_message(std::string_view word,
                                       const std::vector<std::string>& subcommands);

}  // namespace mlalab::cli
