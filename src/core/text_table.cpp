#include "core/text_table.h"

#include <algorithm>
#include <ostream>

namespace mlalab {
namespace {

// Markdown needs a dash and a colon in each alignment cell; three read as a rule.
constexpr std::size_t kMinMarkdownWidth = 3;

std::vector<std::size_t> column_widths(const std::vector<TextColumn>& columns,
                                       const std::vector<TextRow>& rows, std::size_t minimum) {
  std::vector<std::size_t> widths;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    std::size_t width = std::max(minimum, display_width(columns[c].header));
    for (const TextRow& row : rows) width = std::max(width, display_width(row.at(c)));
    widths.push_back(width);
  }
  return widths;
}

std::string pad(const std::string& text, std::size_t width, bool right_align) {
  const std::string fill(width - std::min(width, display_width(text)), ' ');
  return right_align ? fill + text : text + fill;
}

}  // namespace

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++width;  // not a continuation byte
  }
  return width;
}

void print_markdown_table(std::ostream& out, const std::vector<TextColumn>& columns,
                          const std::vector<TextRow>& rows) {
  const std::vector<std::size_t> widths = column_widths(columns, rows, kMinMarkdownWidth);
  const auto print_row = [&](auto cell_text) {
    std::string line = "|";
    for (std::size_t c = 0; c < columns.size(); ++c) line += " " + cell_text(c) + " |";
    out << line << '\n';
  };
  print_row([&](std::size_t c) { return pad(columns[c].header, widths[c], columns[c].numeric); });
  // ---: right-aligns a column when rendered, :--- left-aligns it.
  print_row([&](std::size_t c) {
    const std::string dashes(widths[c] - 1, '-');
    return columns[c].numeric ? dashes + ":" : ":" + dashes;
  });
  for (const TextRow& row : rows) {
    print_row([&](std::size_t c) { return pad(row[c], widths[c], columns[c].numeric); });
  }
}

void print_plain_table(std::ostream& out, const std::vector<TextColumn>& columns,
                       const std::vector<TextRow>& rows) {
  const std::vector<std::size_t> widths = column_widths(columns, rows, 0);
  const auto print_row = [&](const TextRow& row) {
    std::string line;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) line += "  ";
      line += c + 1 == columns.size() ? row[c] : pad(row[c], widths[c], columns[c].numeric);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  TextRow headers;
  for (const TextColumn& column : columns) headers.push_back(column.header);
  print_row(headers);
  for (const TextRow& row : rows) print_row(row);
}

}  // namespace mlalab
