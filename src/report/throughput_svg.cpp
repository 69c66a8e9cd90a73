#include "report/throughput_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <set>
#include <string_view>
#include <vector>

#include "report/format.h"
#include "report/record_view.h"

namespace mlalab::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The canvas and where things go on it, in SVG user units (pixels at 100 %).
constexpr int kWidth = 800;
constexpr int kHeight = 500;
constexpr double kPlotLeft = 78;     // room for the tick labels and the rotated axis label
constexpr double kPlotRight = 592;   // the legend takes the rest of the width
constexpr double kPlotTop = 66;      // below the title and subtitle
constexpr double kPlotBottom = 432;  // room for the tick labels and the axis label
constexpr double kLegendLeft = 608;
constexpr double kLegendTop = 74;
constexpr double kLegendRow = 20;
constexpr std::size_t kLegendNameChars = 22;  // at 12 px, what fits beside the line sample
constexpr std::size_t kNoteChars = 30;        // at 11 px, what fits in the legend's width
constexpr std::size_t kTitleChars = 80;       // at 17 px bold, what fits across the canvas
constexpr double kEdgeFraction = 0.04;        // space between the outermost points and the frame
constexpr double kLogSpanFrom = 4;            // a ratio max/min from which an axis goes log
constexpr int kTargetLinearTicks = 6;
constexpr double kBandClampFactor = 1.6;  // a band reaching further than this × the data is cut

constexpr std::string_view kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";
constexpr std::string_view kBaselineColor = "#222222";
constexpr std::string_view kRepeatColor = "#8a8a8a";
// Okabe and Ito's palette, which stays distinguishable with the common colour-vision
// deficiencies; the yellow is left out, it vanishes on white.
constexpr std::string_view kVariantColors[] = {"#0072B2", "#D55E00", "#009E73",
                                               "#CC79A7", "#E69F00", "#56B4E9"};

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
      series.color = kVariantColors[variant_count++ % std::size(kVariantColors)];
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

// One axis: a value → pixel map, linear or logarithmic, with its ticks.
class Axis {
 public:
  Axis(double lo, double hi, bool log, double pixel_lo, double pixel_hi)
      : lo_(lo), hi_(hi), log_(log), pixel_lo_(pixel_lo), pixel_hi_(pixel_hi) {}

  double pixel(double value) const {
    const double t = log_ ? (std::log(value) - std::log(lo_)) / (std::log(hi_) - std::log(lo_))
                          : (value - lo_) / (hi_ - lo_);
    return pixel_lo_ + t * (pixel_hi_ - pixel_lo_);
  }
 private:
  double lo_, hi_;
  bool log_;
  double pixel_lo_, pixel_hi_;
};

// The domain [lo, hi] widened by a margin on each side, in the axis's own scale.
std::pair<double, double> padded(double lo, double hi, bool log, double fraction) {
  if (log) {
    if (lo == hi) return {lo / 2, hi * 2};
    const double span = std::log(hi / lo);
    return {lo * std::exp(-fraction * span), hi * std::exp(fraction * span)};
  }
  if (lo == hi) {
    const double half = lo == 0 ? 1 : std::abs(lo) * 0.1;
    return {lo - half, hi + half};
  }
  const double margin = (hi - lo) * fraction;
  return {lo - margin, hi + margin};
}

// Ticks of a linear axis: multiples of 1, 2 or 5 × 10^k, about kTargetLinearTicks of them.
std::vector<double> linear_ticks(double lo, double hi) {
  const double raw = (hi - lo) / kTargetLinearTicks;
  const double decade = std::pow(10, std::floor(std::log10(raw)));
  double step = decade;
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * decade;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double tick = std::ceil(lo / step) * step; tick <= hi + step * 1e-9; tick += step) {
    ticks.push_back(std::abs(tick) < step * 1e-9 ? 0 : tick);
  }
  return ticks;
}

// Ticks of a log axis: 1, 2 and 5 × 10^k inside [lo, hi]; only the powers of ten when that
// gives too many.
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  const int first = static_cast<int>(std::floor(std::log10(lo)));
  const int last = static_cast<int>(std::ceil(std::log10(hi)));
  for (const bool decades_only : {false, true}) {
    ticks.clear();
    for (int k = first; k <= last; ++k) {
      for (const double mantissa : {1.0, 2.0, 5.0}) {
        if (decades_only && mantissa != 1.0) continue;
        const double tick = mantissa * std::pow(10, k);
        if (tick >= lo && tick <= hi) ticks.push_back(tick);
      }
    }
    if (ticks.size() <= 9) break;
  }
  return ticks;
}

std::string number(double value) { return fmt::format("{:.1f}", value); }

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

}  // namespace

void ThroughputSvg::write(const ab::RunRecord& record, std::ostream& out) const {
  const std::vector<Series> series = collect_series(record);
  const ab::Direction direction = metric_direction(record);
  const bool throughput = direction == ab::Direction::kHigherIsBetter;

  // The x domain: every sweep point, measured or not.
  std::set<int> concurrencies;
  for (const ab::PointRecord& point : record.points) concurrencies.insert(point.concurrency);
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
  const bool has_data = std::isfinite(data_lo) && !concurrencies.empty();
  double y_lo = data_lo;
  double y_hi = data_hi;
  if (has_data) {
    for (const Series& arm : series) {
      for (const SeriesPoint& point : arm.points) {
        if (!std::isfinite(point.band_low)) continue;
        y_lo = std::min(y_lo, std::max(point.band_low, data_lo / kBandClampFactor));
        y_hi = std::max(y_hi, std::min(point.band_high, data_hi * kBandClampFactor));
      }
    }
  } else {
    y_lo = 0;
    y_hi = 1;
  }
  const int c_lo = concurrencies.empty() ? 1 : *concurrencies.begin();
  const int c_hi = concurrencies.empty() ? 1 : *concurrencies.rbegin();
  const bool x_log = c_lo > 0 && c_hi >= kLogSpanFrom * c_lo;
  const bool y_log = has_data && y_lo > 0 && y_hi > kLogSpanFrom * y_lo;
  const auto [x_min, x_max] = padded(c_lo, c_hi, x_log, kEdgeFraction);
  const auto [y_min, y_max] = padded(y_lo, y_hi, y_log, kEdgeFraction);
  // Without data there is no scale to label.
  const std::vector<double> y_ticks = !has_data ? std::vector<double>{}
                                      : y_log   ? log_ticks(y_min, y_max)
                                                : linear_ticks(y_min, y_max);
  const Axis x_axis(x_min, x_max, x_log, kPlotLeft, kPlotRight);
  const Axis y_axis(y_min, y_max, y_log, kPlotBottom, kPlotTop);

  // Header, background, title.
  out << fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"{2}\">\n",
      kWidth, kHeight, kFont);
  const std::string unit = metric_unit(record);
  const std::string metric = throughput ? "throughput" : "metric";
  out << fmt::format("<title>{}</title>\n",
                     xml_escape(record.experiment.name + ": " + metric + " against concurrency"));
  out << "<defs><clipPath id=\"plot-area\"><rect x=\"" << number(kPlotLeft) << "\" y=\""
      << number(kPlotTop) << "\" width=\"" << number(kPlotRight - kPlotLeft) << "\" height=\""
      << number(kPlotBottom - kPlotTop) << "\"/></clipPath></defs>\n";
  out << fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
                     kWidth, kHeight);
  out << fmt::format(
      "<text x=\"{}\" y=\"26\" font-size=\"17\" font-weight=\"bold\" fill=\"#111111\">{}</text>\n",
      number(kPlotLeft - 60),
      xml_escape(truncated(record.experiment.name + ": " + metric + " against concurrency" +
                               (record.partial ? " (partial)" : ""),
                           kTitleChars)));
  std::string subtitle = record.environment.gpu.empty() ? "" : record.environment.gpu;
  if (!record.environment.commit.empty()) {
    subtitle += (subtitle.empty() ? "" : " · ") + std::string("commit ") +
                record.environment.commit;
  }
  if (!record.started_utc.empty()) subtitle += (subtitle.empty() ? "" : " · ") + record.started_utc;
  if (record.partial) subtitle += (subtitle.empty() ? "" : " · ") + std::string("PARTIAL RUN");
  out << fmt::format("<text x=\"{}\" y=\"46\" font-size=\"12\" fill=\"#555555\">{}</text>\n",
                     number(kPlotLeft - 60), xml_escape(truncated(subtitle, 2 * kTitleChars - 20)));

  // Grid and tick labels.
  out << "<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
  for (const double tick : y_ticks) {
    const double y = y_axis.pixel(tick);
    out << fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", number(kPlotLeft),
                       number(y), number(kPlotRight), number(y));
  }
  for (const int c : concurrencies) {
    const double x = x_axis.pixel(c);
    out << fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", number(x),
                       number(kPlotTop), number(x), number(kPlotBottom));
  }
  out << "</g>\n";
  out << "<g font-size=\"11\" fill=\"#333333\">\n";
  for (const double tick : y_ticks) {
    out << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                       number(kPlotLeft - 6), number(y_axis.pixel(tick) + 4), si_text(tick));
  }
  // Concurrency labels; when they would crowd, every other one.
  const std::size_t label_every = concurrencies.size() > 12 ? 2 : 1;
  std::size_t index = 0;
  for (const int c : concurrencies) {
    if (index++ % label_every != 0) continue;
    out << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       number(x_axis.pixel(c)), number(kPlotBottom + 16), c);
  }
  out << "</g>\n";

  // Axes and their labels.
  out << fmt::format(
      "<g stroke=\"#333333\" stroke-width=\"1\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" "
      "y2=\"{1}\"/><line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\"/></g>\n",
      number(kPlotLeft), number(kPlotBottom), number(kPlotRight), number(kPlotTop));
  out << fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#111111\">"
      "concurrency (requests per batch){}</text>\n",
      number((kPlotLeft + kPlotRight) / 2), number(kPlotBottom + 38),
      x_log ? ", log scale" : "");
  const double y_label_x = 18;
  const double y_label_y = (kPlotTop + kPlotBottom) / 2;
  out << fmt::format(
      "<text x=\"{0}\" y=\"{1}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#111111\" "
      "transform=\"rotate(-90 {0} {1})\">{2}</text>\n",
      number(y_label_x), number(y_label_y),
      xml_escape(fmt::format("{} ({}{}{})", metric, unit,
                             throughput ? "" : ", lower is better", y_log ? ", log scale" : "")));

  if (!has_data) {
    out << fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"14\" text-anchor=\"middle\" fill=\"#777777\">"
        "no samples yet</text>\n",
        number((kPlotLeft + kPlotRight) / 2), number((kPlotTop + kPlotBottom) / 2));
  }

  // Bands first, so that every line stays visible above them. A run of consecutive points
  // with a band is one polygon; a lone point gets a bar.
  // On a log axis an interval reaching down to zero throughput ends below the frame.
  const auto band_pixel = [&](double value) {
    return y_log && value <= 0 ? kPlotBottom + 50 : y_axis.pixel(value);
  };
  out << "<g clip-path=\"url(#plot-area)\" stroke=\"none\">\n";
  for (const Series& arm : series) {
    std::vector<const SeriesPoint*> run;
    const auto flush = [&]() {
      if (run.size() == 1) {
        const double x = x_axis.pixel(run[0]->concurrency);
        out << fmt::format(
            "<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"8\" height=\"{}\" fill=\"{}\" "
            "fill-opacity=\"0.18\"/>\n",
            number(x - 4), number(band_pixel(run[0]->band_high)),
            number(band_pixel(run[0]->band_low) - band_pixel(run[0]->band_high)), arm.color);
      } else if (run.size() > 1) {
        std::string points;
        for (const SeriesPoint* point : run) {
          points += number(x_axis.pixel(point->concurrency)) + "," +
                    number(band_pixel(point->band_high)) + " ";
        }
        for (auto it = run.rbegin(); it != run.rend(); ++it) {
          points += number(x_axis.pixel((*it)->concurrency)) + "," +
                    number(band_pixel((*it)->band_low)) + " ";
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
      points += number(x_axis.pixel(point.concurrency)) + "," + number(y_axis.pixel(point.median)) +
                " ";
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
          number(x_axis.pixel(point.concurrency)), number(y_axis.pixel(point.median)),
          arm.dashed ? "2.5" : "3.2", arm.dashed ? "#ffffff" : std::string(arm.color), arm.color,
          xml_escape(fmt::format("{}, {}: {} {}", arm.name, point_label(point.concurrency),
                                 quantity_text(point.median), unit)));
    }
  }
  out << "</g>\n";

  // The legend: a line sample and the name per arm, then what the shading means.
  out << "<g font-size=\"12\" fill=\"#111111\">\n";
  double y = kLegendTop;
  for (const Series& arm : series) {
    if (arm.invalid) {
      // Never timed: no line to show, only the name, greyed.
      out << fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#999999\">{}</text>\n",
                         number(kLegendLeft + 32), number(y + 4),
                         xml_escape(truncated(arm.name, kLegendNameChars - 10) + " (INVALID)"));
    } else {
      out << fmt::format(
          "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
          number(kLegendLeft), number(y), number(kLegendLeft + 26), number(y), arm.color,
          arm.stroke_width, arm.dashed ? " stroke-dasharray=\"6 4\"" : "");
      out << fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", number(kLegendLeft + 32),
                         number(y + 4), xml_escape(truncated(arm.name, kLegendNameChars)));
    }
    y += kLegendRow;
  }
  y += 6;
  const std::string note =
      fmt::format("Shaded: the A/A noise band around the baseline; around each variant its {:g}% "
                  "interval against the baseline.",
                  confidence_pct(record));
  for (const std::string& line : wrapped(note, kNoteChars)) {
    out << fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#555555\">{}</text>\n",
                       number(kLegendLeft), number(y), xml_escape(line));
    y += 14;
  }
  out << "</g>\n</svg>\n";
}

}  // namespace mlalab::report
