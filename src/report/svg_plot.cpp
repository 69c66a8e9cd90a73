#include "report/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <ostream>
#include <set>
#include <tuple>
#include <utility>

#include "ab/environment.h"
#include "core/text_table.h"
#include "report/format.h"

namespace mlalab::report::svg {
namespace {

constexpr std::string_view kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";
constexpr std::string_view kVariantColors[] = {"#0072B2", "#D55E00", "#009E73",
                                               "#CC79A7", "#E69F00", "#56B4E9"};
constexpr std::size_t kTitleChars = 80;  // at 17 px bold, what fits across the canvas
constexpr double kEdgeFraction = 0.04;   // space between the outermost points and the frame
constexpr int kMinTicks = 4;
constexpr int kMaxTicks = 7;
constexpr std::size_t kMaxConcurrencyLabels = 12;  // beyond this they crowd: every other one
// Rounding slack when a value that should be a multiple of a step is divided by it.
constexpr double kStepSlack = 1e-9;

// The domain [lo, hi] widened by a margin on each side, in the axis's own scale.
std::pair<double, double> padded(double lo, double hi, bool log) {
  if (log) {
    if (lo == hi) return {lo / 2, hi * 2};
    const double span = std::log(hi / lo);
    return {lo * std::exp(-kEdgeFraction * span), hi * std::exp(kEdgeFraction * span)};
  }
  if (lo == hi) {
    const double half = lo == 0 ? 1 : std::abs(lo) * 0.1;
    return {lo - half, hi + half};
  }
  const double margin = (hi - lo) * kEdgeFraction;
  return {lo - margin, hi + margin};
}

std::vector<Tick> linear_ticks(double lo, double hi) {
  // The smallest candidate step leaves about 7 to 70 steps in the span; each next one fewer.
  for (double decade = std::pow(10, std::floor(std::log10((hi - lo) / kMaxTicks)));;
       decade *= 10) {
    for (const double mantissa : {1.0, 2.0, 5.0}) {
      const double step = mantissa * decade;
      const auto first = static_cast<long long>(std::floor(lo / step + kStepSlack));
      const auto last = static_cast<long long>(std::ceil(hi / step - kStepSlack));
      if (last - first + 1 > kMaxTicks) continue;
      std::vector<Tick> ticks;
      for (long long k = first; k <= last; ++k) {
        ticks.push_back({.value = static_cast<double>(k) * step, .resolution = step});
      }
      return ticks;
    }
  }
}

// The ticks m × 10^e for each mantissa m and every `stride`-th exponent e, from the largest
// at or below lo to the smallest at or above hi.
std::vector<Tick> log_sequence(double lo, double hi, std::initializer_list<double> mantissas,
                               int stride) {
  const int first = static_cast<int>(std::floor(std::log10(lo))) - stride;
  const int last = static_cast<int>(std::ceil(std::log10(hi))) + stride;
  std::vector<Tick> all;
  for (int exponent = first; exponent <= last; ++exponent) {
    if (((exponent % stride) + stride) % stride != 0) continue;
    const double decade = std::pow(10, exponent);
    for (const double mantissa : mantissas) {
      all.push_back({.value = mantissa * decade, .resolution = decade});
    }
  }
  std::vector<Tick> ticks;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool after_start = i + 1 == all.size() || all[i + 1].value > lo * (1 + kStepSlack);
    const bool before_end = i == 0 || all[i - 1].value < hi * (1 - kStepSlack);
    if (after_start && before_end) ticks.push_back(all[i]);
  }
  return ticks;
}

std::vector<Tick> log_ticks(double lo, double hi) {
  std::vector<Tick> ticks = log_sequence(lo, hi, {1, 2, 5}, 1);
  if (static_cast<int>(ticks.size()) < kMinTicks) ticks = log_sequence(lo, hi, {1, 2, 3, 5}, 1);
  for (int stride = 1; static_cast<int>(ticks.size()) > kMaxTicks;
       stride = stride == 1 ? 2 : stride == 2 ? 5 : stride * 2) {
    ticks = log_sequence(lo, hi, {1}, stride);
  }
  return ticks;
}

}  // namespace

std::string_view variant_color(std::size_t ordinal) {
  return kVariantColors[ordinal % std::size(kVariantColors)];
}

std::string px(double value) { return fmt::format("{:.1f}", value); }

std::string truncated(const std::string& text, std::size_t chars) {
  if (display_width(text) <= chars) return text;
  std::string cut;
  std::size_t width = 0;
  for (const char c : text) {
    const bool starts_character = (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (starts_character && ++width > chars - 1) break;
    cut += c;
  }
  return cut + "…";
}

std::vector<std::string> wrapped(const std::string& text, std::size_t chars) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && display_width(line) + 1 + display_width(word) > chars) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

Axis::Axis(double lo, double hi, bool log, double pixel_lo, double pixel_hi)
    : lo_(lo), hi_(hi), log_(log), pixel_lo_(pixel_lo), pixel_hi_(pixel_hi) {}

double Axis::pixel(double value) const {
  const double t = log_ ? (std::log(value) - std::log(lo_)) / (std::log(hi_) - std::log(lo_))
                        : (value - lo_) / (hi_ - lo_);
  return pixel_lo_ + t * (pixel_hi_ - pixel_lo_);
}

ValueScale nice_scale(double lo, double hi, bool log) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi || (log && lo <= 0)) return {};
  // A single value gets some room around it to place ticks in.
  const auto [from, to] = lo == hi ? padded(lo, hi, log) : std::pair{lo, hi};
  ValueScale scale{.log = log, .lo = 0, .hi = 1,
                   .ticks = log ? log_ticks(from, to) : linear_ticks(from, to)};
  std::tie(scale.lo, scale.hi) = padded(scale.ticks.front().value, scale.ticks.back().value, log);
  return scale;
}

ConcurrencyScale concurrency_scale(const ab::RunRecord& record) {
  std::set<int> distinct;
  for (const ab::PointRecord& point : record.points) distinct.insert(point.concurrency);
  ConcurrencyScale scale{.values = {distinct.begin(), distinct.end()}, .log = false};
  const int lo = scale.values.empty() ? 1 : scale.values.front();
  const int hi = scale.values.empty() ? 1 : scale.values.back();
  scale.log = lo > 0 && hi >= kLogSpanFrom * lo;
  std::tie(scale.lo, scale.hi) = padded(lo, hi, scale.log);
  return scale;
}

Plot::Plot(Area area, const ConcurrencyScale& concurrency, const ValueScale& value)
    : area_(area),
      concurrency_(concurrency),
      value_(value),
      x_(concurrency.lo, concurrency.hi, concurrency.log, area.left, area.right),
      y_(value.lo, value.hi, value.log, area.bottom, area.top) {}

void Plot::write_clip(std::ostream& out, const std::string& id) const {
  out << fmt::format(
      "<defs><clipPath id=\"{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
      "</clipPath></defs>\n",
      id, px(area_.left), px(area_.top), px(area_.right - area_.left),
      px(area_.bottom - area_.top));
}

void Plot::write_grid(std::ostream& out) const {
  out << "<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
  for (const Tick& tick : value_.ticks) {
    const double y = y_.pixel(tick.value);
    out << fmt::format("<line class=\"grid-y\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n",
                       px(area_.left), px(y), px(area_.right), px(y));
  }
  for (const int c : concurrency_.values) {
    const double x = x_.pixel(c);
    out << fmt::format("<line class=\"grid-x\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n",
                       px(x), px(area_.top), px(x), px(area_.bottom));
  }
  out << "</g>\n";
}

void Plot::write_tick_labels(std::ostream& out,
                             const std::function<std::string(const Tick&)>& label,
                             bool with_concurrency_labels) const {
  out << "<g font-size=\"11\" fill=\"#333333\">\n";
  for (const Tick& tick : value_.ticks) {
    out << fmt::format("<text class=\"tick-y\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                       px(area_.left - 6), px(y_.pixel(tick.value) + 4), xml_escape(label(tick)));
  }
  if (with_concurrency_labels) {
    const std::size_t label_every = concurrency_.values.size() > kMaxConcurrencyLabels ? 2 : 1;
    for (std::size_t i = 0; i < concurrency_.values.size(); i += label_every) {
      const int c = concurrency_.values[i];
      out << fmt::format(
          "<text class=\"tick-x\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
          px(x_.pixel(c)), px(area_.bottom + 16), c);
    }
  }
  out << "</g>\n";
}

void Plot::write_axis_lines(std::ostream& out) const {
  out << fmt::format(
      "<g stroke=\"#333333\" stroke-width=\"1\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" "
      "y2=\"{1}\"/><line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\"/></g>\n",
      px(area_.left), px(area_.bottom), px(area_.right), px(area_.top));
}

void open_document(std::ostream& out, int height, const std::string& title) {
  out << fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"{2}\">\n",
      kWidth, height, kFont);
  out << fmt::format("<title>{}</title>\n", xml_escape(title));
  out << fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
                     kWidth, height);
}

void close_document(std::ostream& out) { out << "</svg>\n"; }

void write_heading(std::ostream& out, const ab::RunRecord& record, const std::string& what) {
  const double left = kPlotLeft - 60;
  out << fmt::format(
      "<text x=\"{}\" y=\"26\" font-size=\"17\" font-weight=\"bold\" fill=\"{}\">{}</text>\n",
      px(left), kTextColor,
      xml_escape(truncated(
          record.experiment.name + ": " + what + (record.partial ? " (partial)" : ""),
          kTitleChars)));
  std::vector<std::string> parts;
  // What ran the arms: the GPU, or the host for the CPU backend and command arms.
  if (record.environment.backend) parts.push_back(ab::ran_on_text(record.environment));
  if (!record.environment.commit.empty()) parts.push_back("commit " + record.environment.commit);
  if (!record.started_utc.empty()) parts.push_back(record.started_utc);
  if (record.partial) parts.push_back("PARTIAL RUN");
  std::string subtitle;
  for (const std::string& part : parts) subtitle += (subtitle.empty() ? "" : " · ") + part;
  out << fmt::format("<text x=\"{}\" y=\"46\" font-size=\"12\" fill=\"{}\">{}</text>\n", px(left),
                     kNoteColor, xml_escape(truncated(subtitle, 2 * kTitleChars - 20)));
}

void write_concurrency_title(std::ostream& out, const Area& area, bool log, double y) {
  out << fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"{}\">"
      "concurrency (requests per batch){}</text>\n",
      px((area.left + area.right) / 2), px(y), kTextColor, log ? ", log scale" : "");
}

void write_value_title(std::ostream& out, double top, double bottom, const std::string& text) {
  constexpr double kX = 18;
  const double y = (top + bottom) / 2;
  out << fmt::format(
      "<text x=\"{0}\" y=\"{1}\" font-size=\"12\" text-anchor=\"middle\" fill=\"{2}\" "
      "transform=\"rotate(-90 {0} {1})\">{3}</text>\n",
      px(kX), px(y), kTextColor, xml_escape(text));
}

void write_placeholder(std::ostream& out, const Area& area, const std::string& text) {
  out << fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"14\" text-anchor=\"middle\" fill=\"#777777\">{}"
      "</text>\n",
      px((area.left + area.right) / 2), px((area.top + area.bottom) / 2), xml_escape(text));
}

void write_legend_line(std::ostream& out, double y, std::string_view color, double width,
                       bool dashed) {
  out << fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
      px(kLegendLeft), px(y), px(kLegendLeft + 26), px(y), color, width,
      dashed ? " stroke-dasharray=\"6 4\"" : "");
}

void write_legend_label(std::ostream& out, double y, const std::string& text,
                        std::string_view color) {
  out << fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n", px(kLegendLeft + 32),
                     px(y + 4), color, xml_escape(truncated(text, kLegendNameChars)));
}

double write_legend_note(std::ostream& out, double y, const std::string& text) {
  for (const std::string& line : wrapped(text, kNoteChars)) {
    out << fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{}\">{}</text>\n",
                       px(kLegendLeft), px(y), kNoteColor, xml_escape(line));
    y += 14;
  }
  return y;
}

}  // namespace mlalab::report::svg
