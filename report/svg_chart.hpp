// Small generic SVG charts for the HTML report (report_html.hpp): one frame (plot area inside margins), a linear
// or log2 axis with labelled ticks and grid lines, a line chart of several series, and a chart of stacked bars.
// Every chart of the report goes through Frame + Axis, so pixel positions follow one rule:
//   px(x) = left + (t(x) - t(min)) / (t(max) - t(min)) * plot_width,   t = identity or log2,
//   py(y) = top + (1 - (y - min) / (max - min)) * plot_height.
// Text is escaped here; callers pass plain strings. No scripts, no fonts: the output renders offline.
#pragma once

#include <string>
#include <vector>

namespace scaletwin::report::svg {

// <, >, &, " and ' as entities.
std::string escape(const std::string& text);
// The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten that is >= value (value <= 0: 1).
double nice_max(double value);
// Coordinates and other numbers as they are written into the SVG: fixed, two decimals.
std::string num(double value);

struct Tick {
  double value = 0.0;
  std::string label;
};

struct Axis {
  std::string label;
  double min = 0.0;
  double max = 1.0;
  bool log2 = false;        // positions by log2(value); min and max must be > 0
  std::vector<Tick> ticks;  // labelled positions (and grid lines)
};

// A linear axis from 0 to nice_max(max_value) with 3 to 6 ticks at round steps, labelled with `format`
// ("{:g}" style fmt spec).
Axis linear_axis(const std::string& label, double max_value, const std::string& format = "{:g}");
// A log axis over the powers of ten around [lo, hi] (lo > 0), ticks at 1, 2 and 5 times each power (the powers
// alone beyond two decades), labelled with `prefix` before the value ("$").
Axis log_axis(const std::string& label, double lo, double hi, const std::string& prefix = "");
// The axis for values in [lo, hi] starting at 0: linear, or log (log_axis) where they span more than `decades`
// decades (hi / lo > 10^decades) and lo > 0, so that small values are not crushed against the bottom.
Axis value_axis(const std::string& label, double lo, double hi, double decades = 1.5);

struct Frame {
  double width = 560.0;
  double height = 352.0;
  double left = 70.0;
  double right = 20.0;
  double top = 52.0;
  double bottom = 50.0;

  double plot_width() const { return width - left - right; }
  double plot_height() const { return height - top - bottom; }
};

// Data to pixels for one frame and its two axes.
class Scale {
 public:
  Scale(const Frame& frame, const Axis& x, const Axis& y) : frame_(frame), x_(x), y_(y) {}
  double px(double x) const;
  double py(double y) const;
  const Frame& frame() const { return frame_; }

 private:
  Frame frame_;
  Axis x_;
  Axis y_;
};

struct Series {
  std::string name;
  std::string color;
  std::vector<double> x;
  std::vector<double> y;
  bool dashed = false;  // dashed and without markers: reference lines (ideal scaling)
  bool markers_only = false;        // no line, a marker per point (scatter plots)
  std::vector<std::string> labels;  // empty, or one text per point drawn beside its marker (e.g. an error "+3.1%");
                                    // a labelled series always has markers, hollow when dashed
  std::vector<double> low = {}, high = {};  // empty, or an interval per point: a shaded <polygon class="band"> under the line
};

// <svg class="chart" data-chart=ID> with title, axes, grid, one <polyline class="series"> per series (points in
// data order, data-series=name; none for markers_only), <circle class="marker" data-series=name> markers on solid,
// labelled or markers_only series, <text class="point-label" data-series=name> per label (series order, then point
// order), and a legend. A label sits 6 px right of and above its marker (left of it at the chart's right edge)
// unless it would meet a label placed before it (in order of marker height): then it moves to a column 22 px beside
// its marker, to the nearest free height within the plot, with a thin <line class="leader"> to its marker. A
// legend too wide for one row wraps into rows above the plot, which moves down (and the chart grows) to make room.
std::string line_chart(const std::string& id, const std::string& title, const Axis& x, const Axis& y,
                       const std::vector<Series>& series, const Frame& frame = {});

struct Segment {
  std::string name;
  std::string color;
};

struct Bar {
  std::string label;            // under the bar
  std::vector<double> values;   // one per segment, stacked bottom-up
};

// Bars at categorical positions (x axis 0..bars, bar i centred on i + 0.5), each a stack of <rect class="segment">
// with data-segment=name and data-value=value; a legend names the segments.
std::string stacked_bar_chart(const std::string& id, const std::string& title, const std::string& x_label,
                              const Axis& y, const std::vector<Segment>& segments, const std::vector<Bar>& bars,
                              const Frame& frame = {});

}  // namespace scaletwin::report::svg
