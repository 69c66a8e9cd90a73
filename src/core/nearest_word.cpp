#include "core/nearest_word.h"

#include <algorithm>

namespace mlalab {

int typo_distance(std::string_view a, std::string_view b) {
  // distance[i][j]: the typos between the first i letters of a and the first j of b (the
  // optimal-string-alignment form of Damerau-Levenshtein).
  std::vector<std::vector<int>> distance(a.size() + 1, std::vector<int>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) distance[i][0] = static_cast<int>(i);
  for (std::size_t j = 0; j <= b.size(); ++j) distance[0][j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const int replace = a[i - 1] == b[j - 1] ? 0 : 1;
      distance[i][j] = std::min({distance[i - 1][j] + 1, distance[i][j - 1] + 1,
                                 distance[i - 1][j - 1] + replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        distance[i][j] = std::min(distance[i][j], distance[i - 2][j - 2] + 1);
      }
    }
  }
  return distance[a.size()][b.size()];
}

std::optional<std::string> nearest_word(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  constexpr int kMaxTypos = 2;
  std::optional<std::string> nearest;
  int nearest_distance = kMaxTypos + 1;
  for (const std::string& candidate : candidates) {
    const int distance = typo_distance(word, candidate);
    const bool close = 2 * distance <= static_cast<int>(candidate.size());
    if (close && distance < nearest_distance) {
      nearest = candidate;
      nearest_distance = distance;
    }
  }
  return nearest;
}

}  // namespace mlalab
