#pragma once
// "Did you mean ...?": the word a misspelt one most likely meant, for the hints of the
// experiment-file parser (misspelt keys) and the command line (misspelt subcommands).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlalab {

// The typos between two words: insertions, deletions, replacements and swaps of two
// neighbouring letters ("bnech" is one swap from "bench").
int typo_distance(std::string_view a, std::string_view b);

// The candidate that `word` is most likely a typo of, or nullopt when none is close enough:
// at most 2 typos, and at most half the candidate's letters ("ba" is taken for "ab", "xy" is
// not). The first of equally close candidates wins.
std::optional<std::string> nearest_word(std::string_view word,
                                        const std::vector<std::string>& candidates);

}  // namespace mlalab
