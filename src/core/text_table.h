#pragma once
// Tables of text, for terminals and Markdown: `mlalab bench`'s table, the A/B report's tables
// and `mlalab configs` print through these, so every table of the tool is laid out one way.
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace mlalab {

struct TextColumn {
  std::string header;
  bool numeric = false;  // right-aligned (numbers); otherwise left-aligned
};

using TextRow = std::vector<std::string>;  // one cell per column

// Terminal columns a UTF-8 string takes (µ is two bytes, one column).
std::size_t display_width(std::string_view text);

// A Markdown table padded to aligned columns, so that it reads in a terminal as well as
// rendered: the header row, the alignment row, a row per entry; a numeric column's header and
// cells are right-aligned.
void print_markdown_table(std::ostream& out, const std::vector<TextColumn>& columns,
                          const std::vector<TextRow>& rows);

// A plain table for the terminal: the header row, a row per entry, columns two spaces apart,
// the last one unpadded (a free-text reason, say), no trailing spaces.
void print_plain_table(std::ostream& out, const std::vector<TextColumn>& columns,
                       const std::vector<TextRow>& rows);

}  // namespace mlalab
