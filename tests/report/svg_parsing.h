#pragma once
// Reading back what the SVG writers wrote, for their tests: the text, whether the tags balance,
// the elements of a kind with their attributes, and the value axis's ticks as (value, pixel)
// pairs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "ab/run_record.h"
#include "report/report_writer.h"

namespace mlalab::report::testing {

// The file `writer` writes for `record`, as a string.
inline std::string written_by(const ReportWriter& writer, const ab::RunRecord& record) {
  std::ostringstream out;
  writer.write(record, out);
  return out.str();
}

// Checks that every tag closes in order; returns the first problem, or "" when well-formed.
inline std::string tag_balance_problem(const std::string& svg) {
  static const std::regex kTag(R"(<(/?)([A-Za-z][A-Za-z0-9:-]*)([^<>]*?)(/?)>)");
  std::vector<std::string> open;
  std::size_t tags = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), kTag); it != std::sregex_iterator();
       ++it) {
    const std::smatch& tag = *it;
    ++tags;
    if (tag[4].length() > 0) continue;  // <empty/>
    if (tag[1].length() == 0) {
      open.push_back(tag[2]);
    } else if (open.empty() || open.back() != tag[2]) {
      return "unexpected </" + tag[2].str() + ">";
    } else {
      open.pop_back();
    }
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  if (tags == 0) return "no tags";
  return "";
}

inline int count(const std::string& text, const std::string& what) {
  int found = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++found;
  }
  return found;
}

struct Element {
  std::map<std::string, std::string> attributes;
  std::string text;  // up to the closing tag; empty for <empty/>

  double number(const std::string& name) const { return std::stod(attributes.at(name)); }
};

// Every <`tag` …> in `svg`, in order, whose class attribute is `class_name` (any when empty).
inline std::vector<Element> elements(const std::string& svg, const std::string& tag,
                                     const std::string& class_name = "") {
  static const std::regex kAttribute(R"re(([A-Za-z][A-Za-z0-9:-]*)="([^"]*)")re");
  const std::regex start("<" + tag + R"((\s[^<>]*?)?(/?)>)");
  std::vector<Element> found;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), start); it != std::sregex_iterator();
       ++it) {
    Element element;
    const std::string attributes = (*it)[1];
    for (auto a = std::sregex_iterator(attributes.begin(), attributes.end(), kAttribute);
         a != std::sregex_iterator(); ++a) {
      element.attributes[(*a)[1]] = (*a)[2];
    }
    if ((*it)[2].length() == 0) {
      const std::size_t from = static_cast<std::size_t>(it->position() + it->length());
      element.text = svg.substr(from, svg.find("</" + tag + ">", from) - from);
    }
    const auto css = element.attributes.find("class");
    if (class_name.empty() || (css != element.attributes.end() && css->second == class_name)) {
      found.push_back(std::move(element));
    }
  }
  return found;
}

struct AxisTick {
  double value = 0;
  double pixel = 0;
};

// The value axis's ticks: each grid line's y (class grid-y) with its label (class tick-y, same
// order) read by `parse`.
inline std::vector<AxisTick> value_ticks(const std::string& svg,
                                         const std::function<double(std::string)>& parse) {
  const std::vector<Element> lines = elements(svg, "line", "grid-y");
  const std::vector<Element> labels = elements(svg, "text", "tick-y");
  EXPECT_EQ(lines.size(), labels.size());
  std::vector<AxisTick> ticks;
  for (std::size_t i = 0; i < std::min(lines.size(), labels.size()); ++i) {
    ticks.push_back({.value = parse(labels[i].text), .pixel = lines[i].number("y1")});
  }
  return ticks;
}

// "−12.5%", "+5%", "0%" → −12.5, 5, 0.
inline double parse_percent(std::string text) {
  const std::string minus = "\u2212";
  if (text.rfind(minus, 0) == 0) text.replace(0, minus.size(), "-");
  return std::stod(text.substr(0, text.find('%')));
}

// "500", "1.5k", "20k", "2M" → 500, 1500, 20000, 2e6.
inline double parse_si(const std::string& text) {
  std::size_t digits = 0;
  const double mantissa = std::stod(text, &digits);
  const std::string suffix = text.substr(digits);
  if (suffix == "k") return mantissa * 1e3;
  if (suffix == "M") return mantissa * 1e6;
  if (suffix == "G") return mantissa * 1e9;
  EXPECT_EQ(suffix, "") << text;
  return mantissa;
}

// Whether `step` is 1, 2 or 5 × 10^k.
inline bool is_nice_step(double step) {
  const double mantissa = step / std::pow(10, std::floor(std::log10(step) + 1e-9));
  for (const double nice : {1.0, 2.0, 5.0}) {
    if (std::abs(mantissa - nice) < 1e-6) return true;
  }
  return false;
}

}  // namespace mlalab::report::testing
