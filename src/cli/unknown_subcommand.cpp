#include "cli/unknown_subcommand.h"

#include <fmt/format.h>

#include "core/nearest_word.h"

namespace mlalab::cli {

std::string unknown_subcommand_message(std::string_view word,
                                       const std::vector<std::string>& subcommands) {
  const auto nearest = nearest_word(word, subcommands);
  return fmt::format("mlalab: unknown subcommand '{}'{}\nSubcommands: {}\n", word,
                     nearest ? fmt::format("; did you mean '{}'?", *nearest) : "",
                     fmt::join(subcommands, ", "));
}

std::string unknown_option_message(std::string_view subcommand, std::string_view word,
                                   const std::vector<std::string>& options) {
  const std::string_view name = word.substr(0, word.find('='));
  const auto nearest = nearest_word(name, options);
  return fmt::format("mlalab {}: unknown option '{}'{}; see 'mlalab {} --help'\n", subcommand,
                     name, nearest ? fmt::format(" (did you mean '{}'?)", *nearest) : "",
                     subcommand);
}

}  // namespace mlalab::cli
