#include "report/throughput_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <string_view>
#include <vector>

#include "report/format.h"
#include "report/record_view.h"
#include "report/svg_plot.h"

namespace mlalab::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Heights on the canvas (svg_plot.h has the layout across), in SVG user units.
constexpr int kHeight = 500;
constexpr double kPlotTop = svg::kHeadingHeight;
constexpr double kPlotBottom = 432;  // room for the tick labels and the axis title
constexpr double kBandClampFactor = 1.6;  // a band reaching further than this × the data is cut

constexpr std::string_view kBaselineColor = "#222222";
constexpr std::string_view kRepeatColor = "#8a8a8a";
constexpr std::string_view kInvalidColor = "#999999";

struct SeriesPoint {
  int concurrency = 0;
  double median = kNaN;
  double band_low = kNaN;  // NaN: no band at this point
  double band_high = kNaN;
};

struct Series {
  std::string name;
  std::string_view color;
  bool dashed = false;
  double stroke_width = 2;
  bool invalid = false;
  std::vector<SeriesPoint> points;  // ascending concurrency; median NaN where no sample
};

// The metric value `pct` % away from `baseline` in the comparison's sense: throughputs scale
// by (1 + pct/100); latencies, compared as their inverses, divide by it.
double at_change(double baseline, double pct, ab::Direction direction) {
  const double factor = 1 + pct / 100;
  if (direction == ab::Direction::kHigherIsBetter) return baseline * factor;
  return factor > 0 ? baseline / factor : std::numeric_limits<double>::infinity();
}

void set_band(SeriesPoint& point, double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b)) return;
  point.band_low = std::min(a, b);
  point.band_high = std::max(a, b);
}

std::vector<Series> collect_series(const ab::RunRecord& record) {
  const ab::Direction direction = metric_direction(record);
  std::vector<Series> all;
  std::size_t variant_count = 0;
  for (std::size_t a = 0; a < record.arms.size(); ++a) {
    const ab::ArmRecord& arm = record.arms[a];
    Series series{.name = arm.name, .color = kBaselineColor, .invalid = !arm.valid, .points = {}};
    if (arm.role == ab::ArmRole::kBaselineRepeat) {
      series.color = kRepeatColor;
      series.dashed = true;
      series.stroke_width = 1.5;
    } else if (arm.role == ab::ArmRole::kVariant) {
      series.color = svg::variant_color(variant_count++);
    } else {
      series.stroke_width = 2.5;
    }
    const ab::VariantResult* result =
        arm.role == ab::ArmRole::kVariant ? variant_result(record, arm.name) : nullptr;
    for (std::size_t p = 0; p < record.points.size(); ++p) {
      const int concurrency = record.points[p].concurrency;
      SeriesPoint point{.concurrency = concurrency,
                        .median = arm_median(record, static_cast<int>(p), static_cast<int>(a))};
      const ab::PointNoise* noise = point_noise(record, concurrency);
      if (arm.role == ab::ArmRole::kBaseline && noise && std::isfinite(point.median)) {
        set_band(point, at_change(point.median, -noise->band_pct, direction),
                 at_change(point.median, noise->band_pct, direction));
      }
      const ab::PointResult* compared = result ? point_result(*result, concurrency) : nullptr;
      if (compared && noise && std::isfinite(noise->baseline_median)) {
        const ab::Interval& interval = compared->evidence.change.interval_pct;
        set_band(point, at_change(noise->baseline_median, interval.lower, direction),
                 at_change(noise->baseline_median, interval.upper, direction));
      }
      series.points.push_back(point);
    }
    std::sort(series.points.begin(), series.points.end(),
              [](const SeriesPoint& x, const SeriesPoint& y) {
                return x.concurrency < y.concurrency;
              });
    all.push_back(std::move(series));
  }
  return all;
}

}  // namespace

void ThroughputSvg::write(const ab::RunRecord& record, std::ostream& out) const {
  const std::vector<Series> series = collect_series(record);
  const bool throughput = metric_direction(record) == ab::Direction::kHigherIsBetter;
  const svg::ConcurrencyScale concurrency = svg::concurrency_scale(record);

  // The y domain: every median, widened by the bands as far as kBandClampFactor allows, so
  // that one wide interval of a short point cannot squash every curve.
  double data_lo = std::numeric_limits<double>::infinity();
  double data_hi = -data_lo;
  for (const Series& arm : series) {
    for (const SeriesPoint& point : arm.points) {
      if (!std::isfinite(point.median)) continue;
      data_lo = std::min(data_lo, point.median);
      data_hi = std::max(data_hi, point.median);
    }
  }
  const bool has_data = std::isfinite(data_lo) && !concurrency.values.empty();
  double y_lo = data_lo;
  double y_hi = data_hi;
  for (const Series& arm : series) {
    for (const SeriesPoint& point : arm.points) {
      if (!has_data || !std::isfinite(point.band_low)) continue;
      y_lo = std::min(y_lo, std::max(point.band_low, data_lo / kBandClampFactor));
      y_hi = std::max(y_hi, std::min(point.band_high, data_hi * kBandClampFactor));
    }
  }
  const bool y_log = has_data && y_lo > 0 && y_hi > svg::kLogSpanFrom * y_lo;
  // Without data, nice_scale has no scale to label.
  const svg::Plot plot({.left = svg::kPlotLeft,
                        .top = kPlotTop,
                        .right = svg::kPlotRight,
                        .bottom = kPlotBottom},
                       concurrency, svg::nice_scale(y_lo, y_hi, y_log));

  const std::string unit = metric_unit(record);
  const std::string metric = throughput ? "throughput" : "metric";
  const std::string what = metric + " against concurrency";
  svg::open_document(out, kHeight, record.experiment.name + ": " + what);
  plot.write_clip(out, "plot-area");
  svg::write_heading(out, record, what);
  plot.write_grid(out);
  plot.write_tick_labels(
      out, [](const svg::Tick& tick) { return si_text(tick.value, tick.resolution); }, true);
  plot.write_axis_lines(out);
  svg::write_concurrency_title(out, plot.area(), concurrency.log, kPlotBottom + 38);
  svg::write_value_title(out, kPlotTop, kPlotBottom,
                         fmt::format("{} ({}{}{})", metric, unit,
                                     throughput ? "" : ", lower is better",
                                     y_log ? ", log scale" : ""));
  if (!has_data) svg::write_placeholder(out, plot.area(), "no samples yet");

  // Bands first, so that every line stays visible above them. A run of consecutive points
  // with a band is one polygon; a lone point gets a bar.
  // On a log axis an interval reaching down to zero throughput ends below the frame.
  const auto band_pixel = [&](double value) {
    return y_log && value <= 0 ? kPlotBottom + 50 : plot.y(value);
  };
  out << "<g clip-path=\"url(#plot-area)\" stroke=\"none\">\n";
  for (const Series& arm : series) {
    std::vector<const SeriesPoint*> run;
    const auto flush = [&]() {
      if (run.size() == 1) {
        const double x = plot.x(run[0]->concurrency);
        out << fmt::format(
            "<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"8\" height=\"{}\" fill=\"{}\" "
            "fill-opacity=\"0.18\"/>\n",
            svg::px(x - 4), svg::px(band_pixel(run[0]->band_high)),
            svg::px(band_pixel(run[0]->band_low) - band_pixel(run[0]->band_high)), arm.color);
      } else if (run.size() > 1) {
        std::string points;
        for (const SeriesPoint* point : run) {
          points += svg::px(plot.x(point->concurrency)) + "," +
                    svg::px(band_pixel(point->band_high)) + " ";
        }
        for (auto it = run.rbegin(); it != run.rend(); ++it) {
          points += svg::px(plot.x((*it)->concurrency)) + "," +
                    svg::px(band_pixel((*it)->band_low)) + " ";
        }
        points.pop_back();
        out << fmt::format(
            "<polygon class=\"band\" points=\"{}\" fill=\"{}\" fill-opacity=\"0.16\"/>\n", points,
            arm.color);
      }
      run.clear();
    };
    for (const SeriesPoint& point : arm.points) {
      if (std::isfinite(point.band_low) && (!y_log || point.band_high > 0)) {
        run.push_back(&point);
      } else {
        flush();
      }
    }
    flush();
  }
  out << "</g>\n";

  // One polyline per arm with samples, then its markers with the values as tooltips.
  // Drawn in reverse, so that the baseline, the reference, lies on top.
  out << "<g clip-path=\"url(#plot-area)\" fill=\"none\" stroke-linejoin=\"round\">\n";
  for (auto arm_it = series.rbegin(); arm_it != series.rend(); ++arm_it) {
    const Series& arm = *arm_it;
    std::string points;
    for (const SeriesPoint& point : arm.points) {
      if (!std::isfinite(point.median)) continue;
      points += svg::px(plot.x(point.concurrency)) + "," + svg::px(plot.y(point.median)) + " ";
    }
    if (points.empty()) continue;
    points.pop_back();
    out << fmt::format(
        "<polyline class=\"arm\" data-arm=\"{}\" points=\"{}\" stroke=\"{}\" "
        "stroke-width=\"{}\"{}/>\n",
        xml_escape(arm.name), points, arm.color, arm.stroke_width,
        arm.dashed ? " stroke-dasharray=\"6 4\"" : "");
  }
  out << "</g>\n<g>\n";
  for (auto arm_it = series.rbegin(); arm_it != series.rend(); ++arm_it) {
    const Series& arm = *arm_it;
    for (const SeriesPoint& point : arm.points) {
      if (!std::isfinite(point.median)) continue;
      out << fmt::format(
          "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"1.2\">"
          "<title>{}</title></circle>\n",
          svg::px(plot.x(point.concurrency)), svg::px(plot.y(point.median)),
          arm.dashed ? "2.5" : "3.2", arm.dashed ? "#ffffff" : std::string(arm.color), arm.color,
          xml_escape(fmt::format("{}, {}: {} {}", arm.name, point_label(point.concurrency),
                                 quantity_text(point.median), unit)));
    }
  }
  out << "</g>\n";

  // The legend: a line sample and the name per arm, then what the shading means.
  out << "<g font-size=\"12\" fill=\"#111111\">\n";
  double y = svg::kLegendTop;
  for (const Series& arm : series) {
    if (arm.invalid) {
      // Never timed: no line to show, only the name, greyed.
      svg::write_legend_label(
          out, y, svg::truncated(arm.name, svg::kLegendNameChars - 10) + " (INVALID)",
          kInvalidColor);
    } else {
      svg::write_legend_line(out, y, arm.color, arm.stroke_width, arm.dashed);
      svg::write_legend_label(out, y, arm.name);
    }
    y += svg::kLegendRow;
  }
  y = svg::write_legend_note(
      out, y + 6,
      fmt::format("Shaded: the A/A noise band around the baseline; around each variant its {:g}% "
                  "interval against the baseline.",
                  confidence_pct(record)));
  // Where A′ strayed from A, the dashed line shows it; say what it cost.
  std::vector<int> flagged;
  if (record.analysis) {
    for (const ab::PointNoise& noise : record.analysis->noise) {
      if (noise.flagged) flagged.push_back(noise.concurrency);
    }
  }
  if (!flagged.empty()) {
    svg::write_legend_note(out, y + 6,
                           fmt::format("A/A check FLAGGED at {}: verdicts withheld there.",
                                       point_list(flagged)));
  }
  out << "</g>\n";
  svg::close_document(out);
}

}  // namespace mlalab::report
