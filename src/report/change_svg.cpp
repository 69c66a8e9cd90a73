#include "report/change_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "report/format.h"
#include "report/record_view.h"
#include "report/svg_plot.h"

namespace mlalab::report {
namespace {

// Heights on the canvas (svg_plot.h has the layout across), in SVG user units.
constexpr double kPanelTitleHeight = 24;  // the variant's name and verdict above its panel
constexpr double kPanelGap = 10;
// The panels share this much height, each at least kMinPanelHeight tall: one panel gets all of
// it, three to five stack at the minimum, which still shows a 1 % difference at ±20 %.
constexpr double kStackHeight = 330;
constexpr double kMinPanelHeight = 110;
constexpr double kBottomMargin = 56;    // the concurrency labels and the axis title
constexpr double kEmptyPlotHeight = 200;  // the frame that says there is nothing to plot
// An interval widens the scale up to this many times the furthest estimate, threshold or
// prediction: further, one short point's wide interval would flatten every other.
constexpr double kIntervalReach = 2;
constexpr double kMarkerSize = 5;    // circumradius of the markers
constexpr double kCapHalfWidth = 4;  // of an error bar's end caps

constexpr std::string_view kAxisColor = "#333333";
constexpr std::string_view kBandColor = "#9a9a9a";
constexpr double kBandOpacity = 0.3;  // light enough for the grid to show through

struct VerdictStyle {
  ab::PointVerdict verdict;
  std::string_view css_class;
  std::string_view color;
  bool hollow;  // undecided: an open marker
};

// Shape and colour both carry the verdict, so that it reads in grey print and with colour
// blindness; the colours are Okabe and Ito's (and black).
constexpr VerdictStyle kVerdictStyles[] = {
    {ab::PointVerdict::kFaster, "faster", "#009E73", false},
    {ab::PointVerdict::kSlower, "slower", "#D55E00", false},
    {ab::PointVerdict::kWithinNoise, "within_noise", "#666666", false},
    {ab::PointVerdict::kSmallChange, "small_change", "#0072B2", false},
    {ab::PointVerdict::kAmbiguous, "ambiguous", "#E69F00", true},
    {ab::PointVerdict::kWithheld, "withheld", "#000000", false},
};

const VerdictStyle& style_of(ab::PointVerdict verdict) {
  for (const VerdictStyle& style : kVerdictStyles) {
    if (style.verdict == verdict) return style;
  }
  return kVerdictStyles[std::size(kVerdictStyles) - 1];
}

// ▲ FASTER, ▼ SLOWER, ● WITHIN_NOISE, ■ SMALL_CHANGE, ◇ AMBIGUOUS (open), ✕ WITHHELD,
// centred on (x, y).
void write_marker(std::ostream& out, ab::PointVerdict verdict, double x, double y) {
  const VerdictStyle& style = style_of(verdict);
  const std::string paint = fmt::format(
      "fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"", style.hollow ? "#ffffff" : style.color,
      style.color, style.hollow ? 1.8 : 1);
  const double r = kMarkerSize;
  const double half_base = r * std::sqrt(3.0) / 2;  // an equilateral triangle in the circle
  switch (verdict) {
    case ab::PointVerdict::kFaster:
      out << fmt::format("<path class=\"marker\" d=\"M{} {}L{} {}L{} {}Z\" {}/>\n", svg::px(x),
                         svg::px(y - r), svg::px(x + half_base), svg::px(y + r / 2),
                         svg::px(x - half_base), svg::px(y + r / 2), paint);
      return;
    case ab::PointVerdict::kSlower:
      out << fmt::format("<path class=\"marker\" d=\"M{} {}L{} {}L{} {}Z\" {}/>\n", svg::px(x),
                         svg::px(y + r), svg::px(x + half_base), svg::px(y - r / 2),
                         svg::px(x - half_base), svg::px(y - r / 2), paint);
      return;
    case ab::PointVerdict::kAmbiguous:
      out << fmt::format("<path class=\"marker\" d=\"M{} {}L{} {}L{} {}L{} {}Z\" {}/>\n",
                         svg::px(x), svg::px(y - r), svg::px(x + r), svg::px(y), svg::px(x),
                         svg::px(y + r), svg::px(x - r), svg::px(y), paint);
      return;
    case ab::PointVerdict::kWithinNoise:
      out << fmt::format("<circle class=\"marker\" cx=\"{}\" cy=\"{}\" r=\"{}\" {}/>\n",
                         svg::px(x), svg::px(y), svg::px(r * 0.8), paint);
      return;
    case ab::PointVerdict::kSmallChange: {
      const double half = r * 0.7;  // a square of about the circle's area
      out << fmt::format(
          "<rect class=\"marker\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {}/>\n",
          svg::px(x - half), svg::px(y - half), svg::px(2 * half), svg::px(2 * half), paint);
      return;
    }
    case ab::PointVerdict::kWithheld: {
      // A cross: the point's verdicts are struck out. Drawn with a stroke alone, a white halo
      // first so that it stays legible over its own error bar.
      const double half = r * 0.75;
      const std::string cross =
          fmt::format("M{} {}L{} {}M{} {}L{} {}", svg::px(x - half), svg::px(y - half),
                      svg::px(x + half), svg::px(y + half), svg::px(x - half), svg::px(y + half),
                      svg::px(x + half), svg::px(y - half));
      out << fmt::format(
          "<path d=\"{0}\" fill=\"none\" stroke=\"#ffffff\" stroke-width=\"4.5\"/><path "
          "class=\"marker\" d=\"{0}\" fill=\"none\" stroke=\"{1}\" stroke-width=\"2\"/>\n",
          cross, style.color);
      return;
    }
  }
}

bool measured(const ab::PointResult& point) {
  return std::isfinite(point.evidence.change.change_pct);
}

// One panel: a variant with its analysis.
struct Panel {
  const ab::ArmRecord* arm;
  const ab::VariantResult* result;
  std::string_view color;  // the variant's colour in throughput.svg
};

// The % scale that every panel shares: zero, the threshold, every estimate and prediction, and
// the intervals as far as kIntervalReach allows.
svg::ValueScale change_scale(const std::vector<Panel>& panels, double threshold_pct) {
  double furthest = threshold_pct;
  for (const Panel& panel : panels) {
    for (const ab::PointResult& point : panel.result->points) {
      if (!measured(point)) continue;
      furthest = std::max(furthest, std::abs(point.evidence.change.change_pct));
    }
    if (panel.arm->arm.prediction_pct) {
      furthest = std::max(furthest, std::abs(*panel.arm->arm.prediction_pct));
    }
  }
  const double reach = furthest > 0 ? kIntervalReach * furthest : 1;
  double lo = -furthest;
  double hi = furthest;
  for (const Panel& panel : panels) {
    for (const ab::PointResult& point : panel.result->points) {
      if (!measured(point)) continue;
      const ab::Interval& interval = point.evidence.change.interval_pct;
      lo = std::min(lo, std::max(interval.lower, -reach));
      hi = std::max(hi, std::min(interval.upper, reach));
    }
  }
  return svg::nice_scale(lo, hi, false);
}

std::string percent_tick(const svg::Tick& tick) {
  return signed_percent(tick.value, decimals_for(tick.resolution));
}

// Where the prediction's label goes across: the middle of the widest stretch between measured
// points (or a point and the frame), so that no error bar or marker crosses it.
double prediction_label_x(const svg::Plot& plot, const ab::VariantResult& result) {
  std::vector<double> edges{plot.area().left};
  for (const ab::PointResult& point : result.points) {
    if (measured(point)) edges.push_back(plot.x(point.concurrency));
  }
  edges.push_back(plot.area().right);
  std::size_t widest = 0;
  for (std::size_t i = 1; i + 1 < edges.size(); ++i) {
    if (edges[i + 1] - edges[i] > edges[widest + 1] - edges[widest]) widest = i;
  }
  return (edges[widest] + edges[widest + 1]) / 2;
}

void write_panel(std::ostream& out, const Panel& panel, const svg::Plot& plot,
                 double threshold_pct, bool with_concurrency_labels) {
  const svg::Area& area = plot.area();
  const ab::ArmRecord& arm = *panel.arm;
  const std::optional<double>& prediction = arm.arm.prediction_pct;
  out << fmt::format("<g class=\"panel\" data-variant=\"{}\">\n", xml_escape(arm.name));

  // The title: a sample of the variant's line in throughput.svg, its name and its verdict.
  const double title_y = area.top - 8;
  out << fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"/>\n",
      svg::px(area.left), svg::px(title_y - 4), svg::px(area.left + 18), svg::px(title_y - 4),
      panel.color);
  out << fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"{}\"><tspan font-weight=\"bold\">{}"
      "</tspan>: {} · {}</text>\n",
      svg::px(area.left + 24), svg::px(title_y), svg::kTextColor,
      xml_escape(svg::truncated(arm.name, svg::kLegendNameChars)),
      ab::to_string(panel.result->verdict),
      prediction ? "predicted " + short_percent(*prediction) : std::string("no prediction"));

  plot.write_grid(out);
  // ±T, the same at every point: one band across the panel.
  const double band_top = plot.y(threshold_pct);
  out << fmt::format(
      "<rect class=\"threshold-band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
      "fill=\"{}\" fill-opacity=\"{}\" stroke=\"none\" shape-rendering=\"crispEdges\"/>\n",
      svg::px(area.left), svg::px(band_top), svg::px(area.right - area.left),
      svg::px(plot.y(-threshold_pct) - band_top), kBandColor, kBandOpacity);
  plot.write_tick_labels(out, percent_tick, with_concurrency_labels);
  plot.write_axis_lines(out);
  out << fmt::format(
      "<line class=\"zero\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
      "stroke-width=\"1\"/>\n",
      svg::px(area.left), svg::px(plot.y(0)), svg::px(area.right), kAxisColor);
  if (prediction) {
    const double y = plot.y(*prediction);
    out << fmt::format(
        "<line class=\"prediction\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
        "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
        svg::px(area.left), svg::px(y), svg::px(area.right), kAxisColor);
    // Above the line, or below it when it runs along the top; a white halo keeps it legible
    // over the band and the grid.
    const double label_y = y - 4 < area.top + 12 ? y + 13 : y - 4;
    out << fmt::format(
        "<text class=\"prediction-label\" x=\"{}\" y=\"{}\" font-size=\"11\" "
        "text-anchor=\"middle\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"3\" "
        "paint-order=\"stroke\">predicted {}</text>\n",
        svg::px(prediction_label_x(plot, *panel.result)), svg::px(label_y), svg::kTextColor,
        short_percent(*prediction));
  }

  // The points on top: error bar, then marker, grouped with a tooltip.
  for (const ab::PointResult& point : panel.result->points) {
    if (!measured(point)) continue;
    const ab::Change& change = point.evidence.change;
    const VerdictStyle& style = style_of(point.judgement.verdict);
    const double x = plot.x(point.concurrency);
    out << fmt::format(
        "<g class=\"point {}\" data-concurrency=\"{}\"><title>{}</title>\n", style.css_class,
        point.concurrency,
        xml_escape(fmt::format("{}, {}: {} {}, {} (threshold ±{:g}%)", arm.name,
                               point_label(point.concurrency), signed_percent(change.change_pct),
                               interval_text(change.interval_pct),
                               ab::to_string(point.judgement.verdict), threshold_pct)));
    // An end beyond the scale runs to the frame and has no cap: the interval goes on.
    const bool upper_shown = change.interval_pct.upper <= plot.value().hi;
    const bool lower_shown = change.interval_pct.lower >= plot.value().lo;
    const double upper = upper_shown ? plot.y(change.interval_pct.upper) : area.top;
    const double lower = lower_shown ? plot.y(change.interval_pct.lower) : area.bottom;
    out << fmt::format(
        "<line class=\"interval\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" "
        "stroke-width=\"1.5\"/>\n",
        svg::px(x), svg::px(upper), svg::px(lower), style.color);
    for (const auto& [shown, y] : {std::pair{upper_shown, upper}, std::pair{lower_shown, lower}}) {
      if (!shown) continue;
      out << fmt::format(
          "<line class=\"cap\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
          "stroke-width=\"1.5\"/>\n",
          svg::px(x - kCapHalfWidth), svg::px(y), svg::px(x + kCapHalfWidth), svg::px(y),
          style.color);
    }
    write_marker(out, point.judgement.verdict, x, plot.y(change.change_pct));
    out << "</g>\n";
  }
  out << "</g>\n";
}

// The legend, from kLegendTop; returns the y below it.
double write_legend(std::ostream& out, const ab::RunRecord& record,
                    const std::vector<std::string>& not_plotted) {
  out << "<g class=\"legend\" font-size=\"12\" fill=\"#111111\">\n";
  double y = svg::write_legend_note(out, svg::kLegendTop, "Verdict at each point:") + 2;
  const double sample_x = svg::kLegendLeft + 13;
  for (const VerdictStyle& style : kVerdictStyles) {
    out << fmt::format("<g class=\"legend-entry {}\">\n", style.css_class);
    write_marker(out, style.verdict, sample_x, y);
    svg::write_legend_label(out, y, std::string(ab::to_string(style.verdict)));
    out << "</g>\n";
    y += svg::kLegendRow;
  }
  out << fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1.5\"/>"
      "<line x1=\"{4}\" y1=\"{1}\" x2=\"{5}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"1.5\"/>"
      "<line x1=\"{4}\" y1=\"{2}\" x2=\"{5}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1.5\"/>\n",
      svg::px(sample_x), svg::px(y - 7), svg::px(y + 7), kAxisColor,
      svg::px(sample_x - kCapHalfWidth), svg::px(sample_x + kCapHalfWidth));
  svg::write_legend_label(out, y, fmt::format("{:g}% interval", confidence_pct(record)));
  y += svg::kLegendRow;
  out << fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"26\" height=\"12\" fill=\"{}\" fill-opacity=\"{}\"/>\n",
      svg::px(svg::kLegendLeft), svg::px(y - 6), kBandColor, kBandOpacity);
  svg::write_legend_label(out, y, "±threshold");
  y += svg::kLegendRow;
  svg::write_legend_line(out, y, kAxisColor, 1.5, true);
  svg::write_legend_label(out, y, "prediction");
  y += svg::kLegendRow + 6;
  y = svg::write_legend_note(
      out, y,
      fmt::format("Threshold: ±{:g}% (min_effect_pct) at every point. FASTER or SLOWER: beyond "
                  "it by the test corrected for looks and points; WITHIN_NOISE: the interval "
                  "inside it and around 0; SMALL_CHANGE: inside it, away from 0; WITHHELD: the "
                  "A/A check failed.",
                  record.experiment.stats.min_effect_pct));
  if (metric_direction(record) == ab::Direction::kLowerIsBetter) {
    y = svg::write_legend_note(
        out, y + 6,
        "The metric is a latency: changes are of its inverse, so + is faster, as in report.md.");
  }
  if (!not_plotted.empty()) {
    std::string names;
    for (const std::string& name : not_plotted) names += (names.empty() ? "" : ", ") + name;
    y = svg::write_legend_note(out, y + 6, "Not plotted: " + names + ".");
  }
  out << "</g>\n";
  return y;
}

}  // namespace

void ChangeSvg::write(const ab::RunRecord& record, std::ostream& out) const {
  std::vector<Panel> panels;
  std::vector<std::string> not_plotted;
  std::size_t variant_ordinal = 0;
  for (const ab::ArmRecord& arm : record.arms) {
    if (arm.role != ab::ArmRole::kVariant) continue;
    const std::string_view color = svg::variant_color(variant_ordinal++);
    const ab::VariantResult* result = variant_result(record, arm.name);
    if (result) {
      panels.push_back({.arm = &arm, .result = result, .color = color});
    } else {
      not_plotted.push_back(arm.name + (arm.valid ? " (no analysis)" : " (INVALID)"));
    }
  }

  const std::string what = "change against the baseline";
  const svg::ConcurrencyScale concurrency = svg::concurrency_scale(record);
  if (panels.empty()) {
    const svg::Area area{.left = svg::kPlotLeft,
                         .top = svg::kHeadingHeight,
                         .right = svg::kPlotRight,
                         .bottom = svg::kHeadingHeight + kEmptyPlotHeight};
    svg::open_document(out, static_cast<int>(area.bottom + kBottomMargin),
                       record.experiment.name + ": " + what);
    svg::write_heading(out, record, what);
    const svg::Plot plot(area, concurrency, svg::ValueScale{});
    plot.write_axis_lines(out);
    svg::write_placeholder(out, area,
                           record.analysis ? "nothing to plot: no variant was analysed"
                                           : "nothing to plot: no analysis yet");
    svg::close_document(out);
    return;
  }

  const double threshold_pct = record.experiment.stats.min_effect_pct;
  const svg::ValueScale scale = change_scale(panels, threshold_pct);
  const double plot_height =
      std::max(kMinPanelHeight, kStackHeight / static_cast<double>(panels.size()));
  std::vector<svg::Plot> plots;
  double top = svg::kHeadingHeight + kPanelTitleHeight;
  for (std::size_t i = 0; i < panels.size(); ++i) {
    plots.emplace_back(svg::Area{.left = svg::kPlotLeft,
                                 .top = top,
                                 .right = svg::kPlotRight,
                                 .bottom = top + plot_height},
                       concurrency, scale);
    top += plot_height + kPanelGap + kPanelTitleHeight;
  }
  const svg::Area& first = plots.front().area();
  const svg::Area& last = plots.back().area();

  // The legend first into a buffer: its length decides the canvas's height with the panels.
  std::ostringstream legend;
  const double legend_bottom = write_legend(legend, record, not_plotted);
  const double height = std::max(last.bottom + kBottomMargin, legend_bottom + 16);

  svg::open_document(out, static_cast<int>(std::ceil(height)),
                     record.experiment.name + ": " + what);
  svg::write_heading(out, record, what);
  for (std::size_t i = 0; i < panels.size(); ++i) {
    write_panel(out, panels[i], plots[i], threshold_pct, i + 1 == panels.size());
  }
  svg::write_concurrency_title(out, last, concurrency.log, last.bottom + 38);
  svg::write_value_title(out, first.top, last.bottom, "change vs baseline, % (+ = faster)");
  out << legend.str();
  svg::close_document(out);
}

}  // namespace mlalab::report
