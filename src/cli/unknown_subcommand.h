#pragma once
// What `mlalab bnech` and `mlalab bench --hedas 4` say: the word mlalab did not know, the
// subcommand or option it was most likely a typo of, and where to see the rest.
#include <string>
#include <string_view>
#include <vector>

namespace mlalab::cli {

// "mlalab: unknown subcommand 'bnech'; did you mean 'bench'?" and a line listing the
// subcommands, each line ending in a newline.
std::string unknown_subcommand_message(std::string_view word,
                                       const std::vector<std::string>& subcommands);

// "mlalab bench: unknown option '--hedas' (did you mean '--heads'?); see 'mlalab bench --help'"
// and a newline; `options` are the subcommand's long options, dashes included. A word given as
// --name=value is named without its value.
std::string unknown_option_message(std::string_view subcommand, std::string_view word,
                                   const std::vector<std::string>& options);

}  // namespace mlalab::cli
