// Generic SVG charts for the HTML report: escaping, nice axis ranges, the data-to-pixel scale, axes with grid
// lines, a legend that wraps into rows, point labels placed so that they do not overlap, line charts and stacked
// bar charts. Only fmt; the output is plain SVG 1.1 markup with inline styles.
#include "report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace scaletwin::report::svg {

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// Round axis maxima as mantissas of a power of ten, each with the number of tick intervals that gives round steps.
constexpr std::pair<double, int> kNiceSteps[] = {{1.0, 5}, {1.5, 3}, {2.0, 4}, {2.5, 5}, {3.0, 6}, {4.0, 4},
                                                 {5.0, 5}, {6.0, 6}, {8.0, 4}, {10.0, 5}};

std::pair<double, int> nice_step(double value) {
  if (!(value > 0.0) || !std::isfinite(value)) return {1.0, 5};
  const double power = std::pow(10.0, std::floor(std::log10(value)));
  for (const auto& [m, intervals] : kNiceSteps)
    if (m * power >= value * (1.0 - 1e-12)) return {m * power, intervals};
  return {10.0 * power, 5};
}

}  // namespace

double nice_max(double value) { return nice_step(value).first; }

std::string num(double value) { return fmt::format("{:.2f}", value); }

Axis linear_axis(const std::string& label, double max_value, const std::string& format) {
  Axis a;
  a.label = label;
  const auto [max, intervals] = nice_step(max_value);
  a.max = max;
  for (int i = 0; i <= intervals; ++i) {
    const double v = a.max * i / intervals;
    a.ticks.push_back({v, fmt::format(fmt::runtime(format), v)});
  }
  return a;
}

Axis log_axis(const std::string& label, double lo, double hi, const std::string& prefix) {
  ST_ASSERT(lo > 0.0 && hi >= lo, "log axis over positive values");
  Axis a;
  a.label = label;
  a.log2 = true;
  a.min = std::pow(10.0, std::floor(std::log10(lo)));
  a.max = std::pow(10.0, std::ceil(std::log10(hi)));
  if (a.max <= a.min) a.max = a.min * 10.0;
  const int decades = static_cast<int>(std::lround(std::log10(a.max / a.min)));
  const std::vector<double> mantissas = decades > 2 ? std::vector<double>{1.0} : std::vector<double>{1.0, 2.0, 5.0};
  for (double p = a.min; p <= a.max * 1.0001; p *= 10.0)
    for (const double m : mantissas)
      if (p * m <= a.max * 1.0001) a.ticks.push_back({p * m, prefix + fmt::format("{:g}", p * m)});
  return a;
}

Axis value_axis(const std::string& label, double lo, double hi, double decades) {
  if (lo > 0.0 && hi / lo > std::pow(10.0, decades)) return log_axis(label + " (log scale)", lo, hi);
  return linear_axis(label, hi);
}

namespace {

double along(const Axis& a, double v) {
  if (!a.log2) return (v - a.min) / (a.max - a.min);
  ST_ASSERT(a.min > 0.0 && a.max > 0.0 && v > 0.0, "log2 axis with a value <= 0");
  return (std::log2(v) - std::log2(a.min)) / (std::log2(a.max) - std::log2(a.min));
}

std::string open_svg(const std::string& id, const std::string& title, const Frame& f) {
  return fmt::format(
      "<svg class=\"chart\" data-chart=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<text x=\"{}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
      escape(id), num(f.width), num(f.height), num(f.width), num(f.height), num(f.left), escape(title));
}

// Grid lines, tick labels, the plot border and both axis labels. x ticks may be empty (categorical axes).
std::string axes(const Scale& s, const Axis& x, const Axis& y) {
  const Frame& f = s.frame();
  const double x0 = f.left, x1 = f.left + f.plot_width(), y0 = f.top, y1 = f.top + f.plot_height();
  std::string out = "<g class=\"axes\" stroke-width=\"1\">\n";
  for (const Tick& t : y.ticks) {
    const double py = s.py(t.value);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e3e3e3\"/>", num(x0), num(py), num(x1),
                       num(py));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{}</text>\n", num(x0 - 6),
                       num(py + 4), escape(t.label));
  }
  for (const Tick& t : x.ticks) {
    const double px = s.px(t.value);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e3e3e3\"/>", num(px), num(y0), num(px),
                       num(y1));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n", num(px),
                       num(y1 + 16), escape(t.label));
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>\n", num(x0),
                     num(y0), num(f.plot_width()), num(f.plot_height()));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#222\">{}</text>\n", num((x0 + x1) / 2),
                     num(f.height - 10), escape(x.label));
  out += fmt::format(
      "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\" fill=\"#222\">{}</text>\n",
      num((y0 + y1) / 2), escape(y.label));
  return out + "</g>\n";
}

// How a legend entry is drawn: a thick line (solid series, bar segments), a dashed line, or a marker.
enum class Key { kSolid, kDashed, kMarker };

constexpr double kLegendRow_px = 16.0;
double legend_entry_width(const std::string& name) { return 7.0 * static_cast<double>(name.size()) + 34.0; }

// Rows the legend needs: entries flow leftwards from the plot's right edge and wrap before the frame's left edge.
int legend_rows(const Frame& f, const std::vector<std::pair<std::string, std::string>>& entries) {
  int rows = 1;
  double x = f.left + f.plot_width();
  for (size_t i = entries.size(); i-- > 0;) {
    const double w = legend_entry_width(entries[i].first);
    if (x - w < 10.0 && x < f.left + f.plot_width()) ++rows, x = f.left + f.plot_width();
    x -= w;
  }
  return rows;
}

// The frame grown at the top by the legend's rows beyond the first (the plot keeps its size, lower down).
Frame with_legend_room(const Frame& f, const std::vector<std::pair<std::string, std::string>>& entries) {
  Frame out = f;
  const double extra_px = kLegendRow_px * (legend_rows(f, entries) - 1);
  out.top += extra_px;
  out.height += extra_px;
  return out;
}

// The legend above the plot, right-aligned: the last entries on the row just above the plot, earlier ones on the
// rows above it when they do not fit on one (the caller makes room for legend_rows rows).
std::string legend(const Frame& f, const std::vector<std::pair<std::string, std::string>>& entries,
                   const std::vector<Key>& keys) {
  std::string out = "<g class=\"legend\">\n";
  double x = f.left + f.plot_width(), y = f.top - 14;
  for (size_t i = entries.size(); i-- > 0;) {
    const auto& [name, color] = entries[i];
    const double w = legend_entry_width(name);
    if (x - w < 10.0 && x < f.left + f.plot_width()) x = f.left + f.plot_width(), y -= kLegendRow_px;
    x -= w;
    if (keys[i] == Key::kMarker)
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>", num(x + 9), num(y), escape(color));
    else
      out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>", num(x),
                         num(y), num(x + 18), num(y), escape(color), keys[i] == Key::kDashed ? 2 : 8,
                         keys[i] == Key::kDashed ? " stroke-dasharray=\"5 3\"" : "");
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#222\">{}</text>\n", num(x + 22), num(y + 4), escape(name));
  }
  return out + "</g>\n";
}

// The markers of one series.
std::string markers(const Scale& s, const Series& ser) {
  std::string out;
  const bool hollow = ser.dashed && !ser.markers_only;
  for (size_t i = 0; i < ser.x.size(); ++i)
    out += fmt::format(
        "<circle class=\"marker\" data-series=\"{}\" cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"{}><title>{}: {:g}"
        "</title></circle>\n",
        escape(ser.name), num(s.px(ser.x[i])), num(s.py(ser.y[i])), hollow ? "#fff" : escape(ser.color),
        hollow ? fmt::format(" stroke=\"{}\" stroke-width=\"1.5\"", escape(ser.color)) : "", escape(ser.name),
        ser.y[i]);
  return out;
}

// Point labels (font size 11): each wants the spot 6 px right of and above its marker (left of it where the text
// would leave the chart). Labels are placed in order of their marker's height; one whose box (about 7 px per
// character wide, kLabelLine_px high) would meet a label already placed moves to a column kLabelColumn_px beside
// its marker and, there, to the free height nearest its marker (downwards first, so a stack keeps the markers'
// order), and gets a thin leader line to its marker.
constexpr double kLabelLine_px = 13.0;
constexpr double kLabelColumn_px = 22.0;

struct PointLabel {
  std::string series, color, text;
  double marker_x = 0.0, marker_y = 0.0;
  double x = 0.0, y = 0.0;  // text anchor and baseline
  bool end_anchor = false, moved = false;
};

struct Box {
  double x0, y0, x1, y1;
  bool meets(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

Box box_of(const PointLabel& l) {
  const double w = 7.0 * static_cast<double>(l.text.size());
  const double x0 = l.end_anchor ? l.x - w : l.x;
  return {x0, l.y - 10.0, x0 + w, l.y - 10.0 + kLabelLine_px};
}

void place_labels(const Frame& f, std::vector<PointLabel>& labels) {
  std::vector<size_t> order(labels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return labels[a].marker_y < labels[b].marker_y; });
  std::vector<Box> placed;
  auto free = [&](const PointLabel& l) {
    const Box b = box_of(l);
    return std::none_of(placed.begin(), placed.end(), [&](const Box& p) { return b.meets(p); });
  };
  for (size_t i : order) {
    PointLabel& l = labels[i];
    l.end_anchor = l.marker_x + 6.0 + 7.0 * static_cast<double>(l.text.size()) > f.width;
    const double side = l.end_anchor ? -1.0 : 1.0;
    l.x = l.marker_x + side * 6.0;
    l.y = l.marker_y - 6.0;
    if (!free(l)) {
      l.moved = true;
      l.x = l.marker_x + side * kLabelColumn_px;
      // Within the plot, centred on the marker's height where that is free.
      const double highest = f.top + 10.0, lowest = f.top + f.plot_height() - 3.0, wanted = l.marker_y + 4.0;
      bool found = false;
      for (double y = wanted; !found && y <= lowest; y += 1.0) l.y = y, found = free(l);
      for (double y = wanted - 1.0; !found && y >= highest; y -= 1.0) l.y = y, found = free(l);
      if (!found) l.y = wanted;  // no room anywhere: overlap rather than lose the label
    }
    placed.push_back(box_of(l));
  }
}

std::string label_text(const std::vector<PointLabel>& labels) {
  std::string out;
  for (const PointLabel& l : labels) {
    if (l.moved)  // from the marker's edge to the middle of the label's near side
      out += fmt::format("<line class=\"leader\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
                         "stroke-width=\"0.75\"/>\n",
                         num(l.marker_x + (l.end_anchor ? -4.0 : 4.0)), num(l.marker_y),
                         num(l.x + (l.end_anchor ? 2.0 : -2.0)), num(l.y - 4.0), escape(l.color));
    out += fmt::format(
        "<text class=\"point-label\" data-series=\"{}\" x=\"{}\" y=\"{}\"{} font-size=\"11\" fill=\"{}\">{}</text>\n",
        escape(l.series), num(l.x), num(l.y), l.end_anchor ? " text-anchor=\"end\"" : "", escape(l.color),
        escape(l.text));
  }
  return out;
}

}  // namespace

double Scale::px(double x) const { return frame_.left + along(x_, x) * frame_.plot_width(); }
double Scale::py(double y) const { return frame_.top + (1.0 - along(y_, y)) * frame_.plot_height(); }

std::string line_chart(const std::string& id, const std::string& title, const Axis& x, const Axis& y,
                       const std::vector<Series>& series, const Frame& frame_in) {
  std::vector<std::pair<std::string, std::string>> entries;
  std::vector<Key> keys;
  for (const Series& ser : series) {
    entries.emplace_back(ser.name, ser.color);
    keys.push_back(ser.markers_only ? Key::kMarker : ser.dashed ? Key::kDashed : Key::kSolid);
  }
  const Frame frame = with_legend_room(frame_in, entries);
  const Scale s(frame, x, y);
  std::string out = open_svg(id, title, frame) + axes(s, x, y);
  std::vector<PointLabel> labels;
  for (const Series& ser : series) {  // bands first, under every line
    if (ser.low.empty()) continue;
    ST_ASSERT(ser.low.size() == ser.x.size() && ser.high.size() == ser.x.size(), "a band with an interval per point");
    std::string points;
    for (size_t i = 0; i < ser.x.size(); ++i)
      points += fmt::format("{}{},{}", i ? " " : "", num(s.px(ser.x[i])), num(s.py(ser.high[i])));
    for (size_t i = ser.x.size(); i-- > 0;) points += fmt::format(" {},{}", num(s.px(ser.x[i])), num(s.py(ser.low[i])));
    out += fmt::format("<polygon class=\"band\" data-series=\"{}\" fill=\"{}\" fill-opacity=\"0.18\" stroke=\"none\" "
                       "points=\"{}\"><title>{}: 90% interval</title></polygon>\n",
                       escape(ser.name), escape(ser.color), points, escape(ser.name));
  }
  for (const Series& ser : series) {
    ST_ASSERT(ser.x.size() == ser.y.size(), "series with unequal x and y");
    ST_ASSERT(ser.labels.empty() || ser.labels.size() == ser.x.size(), "series with a label per point or none");
    std::string points;
    for (size_t i = 0; i < ser.x.size(); ++i)
      points += fmt::format("{}{},{}", i ? " " : "", num(s.px(ser.x[i])), num(s.py(ser.y[i])));
    if (!ser.markers_only)
      out += fmt::format(
          "<polyline class=\"series\" data-series=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{} "
          "points=\"{}\"/>\n",
          escape(ser.name), escape(ser.color), ser.dashed ? "1.5" : "2.5",
          ser.dashed ? " stroke-dasharray=\"6 4\"" : "", points);
    if (!ser.dashed || ser.markers_only || !ser.labels.empty()) out += markers(s, ser);
    for (size_t i = 0; i < ser.labels.size(); ++i)
      labels.push_back({ser.name, ser.color, ser.labels[i], s.px(ser.x[i]), s.py(ser.y[i]), 0.0, 0.0, false, false});
  }
  place_labels(frame, labels);
  return out + label_text(labels) + legend(frame, entries, keys) + "</svg>\n";
}

std::string stacked_bar_chart(const std::string& id, const std::string& title, const std::string& x_label,
                              const Axis& y, const std::vector<Segment>& segments, const std::vector<Bar>& bars,
                              const Frame& frame_in) {
  Axis x;
  x.label = x_label;
  x.max = std::max<double>(1.0, static_cast<double>(bars.size()));
  std::vector<std::pair<std::string, std::string>> entries;
  for (const Segment& seg : segments) entries.emplace_back(seg.name, seg.color);
  const Frame frame = with_legend_room(frame_in, entries);
  const Scale s(frame, x, y);
  std::string out = open_svg(id, title, frame) + axes(s, x, y);
  const double band = frame.plot_width() / x.max;
  const double bar_width = std::min(60.0, band * 0.7);
  for (size_t b = 0; b < bars.size(); ++b) {
    const Bar& bar = bars[b];
    ST_ASSERT(bar.values.size() == segments.size(), "bar with a value per segment");
    const double cx = s.px(static_cast<double>(b) + 0.5);
    out += fmt::format("<g class=\"bar\" data-bar=\"{}\">\n", escape(bar.label));
    double base = 0.0;
    for (size_t k = 0; k < segments.size(); ++k) {
      const double top = base + bar.values[k];
      out += fmt::format(
          "<rect class=\"segment\" data-segment=\"{}\" data-value=\"{:.9g}\" x=\"{}\" y=\"{}\" width=\"{}\" "
          "height=\"{}\" fill=\"{}\"><title>{} {}: {:g}</title></rect>\n",
          escape(segments[k].name), bar.values[k], num(cx - bar_width / 2), num(s.py(top)), num(bar_width),
          num(s.py(base) - s.py(top)), escape(segments[k].color), escape(bar.label), escape(segments[k].name),
          bar.values[k]);
      base = top;
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n</g>\n", num(cx),
                       num(frame.top + frame.plot_height() + 16), escape(bar.label));
  }
  return out + legend(frame, entries, std::vector<Key>(segments.size(), Key::kSolid)) + "</svg>\n";
}

}  // namespace scaletwin::report::svg
