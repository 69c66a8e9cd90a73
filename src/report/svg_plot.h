#pragma once
// What the report's two pictures (throughput.svg, change.svg) share: hand-written SVG 1.1 with
// concurrency across and a value up. The horizontal layout is common to both, so that their
// concurrency axes line up one above the other in report.md; the value axis gets "nice" ticks
// (1, 2 or 5 × 10^k apart, 4 to 7 of them) that always cover the data.
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "ab/run_record.h"

namespace mlalab::report::svg {

// The canvas's width and where things go across it, in SVG user units (pixels at 100 %).
inline constexpr int kWidth = 800;
inline constexpr double kPlotLeft = 78;    // room for the tick labels and the rotated axis label
inline constexpr double kPlotRight = 592;  // the legend takes the rest of the width
inline constexpr double kHeadingHeight = 66;  // the title and subtitle above the plots
inline constexpr double kLegendLeft = 608;
inline constexpr double kLegendTop = 74;
inline constexpr double kLegendRow = 20;
inline constexpr std::size_t kLegendNameChars = 22;  // at 12 px, what fits beside a sample
inline constexpr std::size_t kNoteChars = 30;        // at 11 px, what fits in the legend's width
// A ratio max/min from which an axis goes logarithmic, so that equal ratios look equal.
inline constexpr double kLogSpanFrom = 4;

inline constexpr std::string_view kTextColor = "#111111";
inline constexpr std::string_view kNoteColor = "#555555";

// The colour of the `ordinal`-th variant arm (counted in record.arms): the same in both
// pictures. Okabe and Ito's palette, which stays distinguishable with the common
// colour-vision deficiencies; the yellow is left out, it vanishes on white.
std::string_view variant_color(std::size_t ordinal);

// A coordinate or length as written into the SVG: one decimal.
std::string px(double value);

// `text` cut to `chars` characters, the last of them an ellipsis when it was cut.
std::string truncated(const std::string& text, std::size_t chars);

// `text` broken at spaces into lines of at most `chars` characters (a longer word stays whole).
std::vector<std::string> wrapped(const std::string& text, std::size_t chars);

// A rectangle on the canvas.
struct Area {
  double left = 0;
  double top = 0;
  double right = 0;
  double bottom = 0;
};

// A value → pixel map, linear or logarithmic.
class Axis {
 public:
  Axis(double lo, double hi, bool log, double pixel_lo, double pixel_hi);
  double pixel(double value) const;

 private:
  double lo_, hi_;
  bool log_;
  double pixel_lo_, pixel_hi_;
};

struct Tick {
  double value = 0;
  double resolution = 1;  // the smallest digit its label must show (the step on a linear axis)
};

// A value axis: its ticks and its domain, which reaches a little beyond the outermost ticks so
// that no tick label or point sits on the frame.
struct ValueScale {
  bool log = false;
  double lo = 0;
  double hi = 1;
  std::vector<Tick> ticks;  // ascending; empty when there is no data to label
};

// The scale for data spanning [lo, hi], ticks from the largest at or below lo to the smallest
// at or above hi. Linear: steps of 1, 2 or 5 × 10^k, the smallest that gives at most 7 ticks
// (which always gives at least 4). Logarithmic (lo > 0): 1, 2 and 5 per decade; 1, 2, 3 and 5
// when that gives fewer than 4 (a span of 4 to 5); powers of ten, every first, second, fifth …
// of them, when it gives more than 7. Without data to span (an end not finite, lo > hi, or
// lo ≤ 0 on a log axis): [0, 1], linear, without ticks.
ValueScale nice_scale(double lo, double hi, bool log);

// The concurrency axis: every sweep point, measured or not; logarithmic (base 2 spacing) when
// it spans a factor of kLogSpanFrom or more.
struct ConcurrencyScale {
  std::vector<int> values;  // ascending, distinct
  bool log = false;
  double lo = 0;  // the domain, padded around the outermost points
  double hi = 1;
};

ConcurrencyScale concurrency_scale(const ab::RunRecord& record);

// One plot: an area with concurrency across and a value scale up, and its furniture.
class Plot {
 public:
  Plot(Area area, const ConcurrencyScale& concurrency, const ValueScale& value);

  const Area& area() const { return area_; }
  const ConcurrencyScale& concurrency() const { return concurrency_; }
  const ValueScale& value() const { return value_; }
  double x(double concurrency) const { return x_.pixel(concurrency); }
  double y(double value) const { return y_.pixel(value); }

  // <clipPath id="`id`"> of the area, for clip-path="url(#id)" on what may reach past it.
  void write_clip(std::ostream& out, const std::string& id) const;
  // Light grid lines at every value tick and every concurrency; under the data.
  void write_grid(std::ostream& out) const;
  // The value ticks' labels at the left, each as `label` writes it, and, when
  // `with_concurrency_labels`, the concurrencies below (every other one when they would crowd).
  void write_tick_labels(std::ostream& out, const std::function<std::string(const Tick&)>& label,
                         bool with_concurrency_labels) const;
  // The two axis lines, left and bottom.
  void write_axis_lines(std::ostream& out) const;

 private:
  Area area_;
  ConcurrencyScale concurrency_;
  ValueScale value_;
  Axis x_;
  Axis y_;
};

// The XML declaration, <svg> of kWidth × `height` with the font, a <title> and a white
// background. close_document ends it.
void open_document(std::ostream& out, int height, const std::string& title);
void close_document(std::ostream& out);

// The bold title "<experiment>: `what`" (marked partial) and the subtitle below it: GPU, commit,
// start time, and PARTIAL RUN when the run was cut short.
void write_heading(std::ostream& out, const ab::RunRecord& record, const std::string& what);

// "concurrency (requests per batch)[, log scale]", centred below `area` at `y`.
void write_concurrency_title(std::ostream& out, const Area& area, bool log, double y);

// A value axis's title, rotated, centred on [top, bottom] along the left edge.
void write_value_title(std::ostream& out, double top, double bottom, const std::string& text);

// Centred grey text inside `area`, for a plot with nothing to show.
void write_placeholder(std::ostream& out, const Area& area, const std::string& text);

// Legend pieces, at kLegendLeft. A line sample (dashed or not) beside its label at row `y`;
// a label alone; a note wrapped to the legend's width, starting at `y` and returning the y
// below its last line.
void write_legend_line(std::ostream& out, double y, std::string_view color, double width,
                       bool dashed);
void write_legend_label(std::ostream& out, double y, const std::string& text,
                        std::string_view color = kTextColor);
double write_legend_note(std::ostream& out, double y, const std::string& text);

}  // namespace mlalab::report::svg
