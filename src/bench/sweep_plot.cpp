#include "bench/sweep_plot.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "util/html_escape.h"

namespace canrun {
namespace {

constexpr double kPanelWidth = 360, kPanelHeight = 260;
constexpr double kLeft = 64, kBottom = 44, kTop = 40, kRight = 30;

std::string number(double value, const char* format = "%.4g") {
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// Axis labels: whole numbers from 100 up, three significant digits below.
std::string tick(double value) { return number(value, value >= 100 ? "%.0f" : "%.3g"); }

// One panel at horizontal offset `x0`: axes from 0 to 10% past the largest value, four grid
// lines each, the points joined in concurrency order and labelled with it.
std::string panel(const std::vector<SweepPoint>& points, double x0, const std::string& y_label,
                  const std::function<double(const SweepPoint&)>& y_of) {
  double x_max = 0, y_max = 0;
  for (const SweepPoint& point : points) {
    x_max = std::max(x_max, point.output_throughput);
    y_max = std::max(y_max, y_of(point));
  }
  x_max = x_max > 0 ? x_max * 1.1 : 1;
  y_max = y_max > 0 ? y_max * 1.1 : 1;
  const double width = kPanelWidth - kLeft - kRight, height = kPanelHeight - kTop - kBottom;
  const auto sx = [&](double x) { return x0 + kLeft + x / x_max * width; };
  const auto sy = [&](double y) { return kTop + height - y / y_max * height; };
  std::string svg;
  for (int i = 0; i <= 4; ++i) {
    const double x = x_max * i / 4, y = y_max * i / 4;
    svg += "<line x1=\"" + number(sx(x)) + "\" y1=\"" + number(sy(0)) + "\" x2=\"" + number(sx(x)) + "\" y2=\"" +
           number(sy(y_max)) + "\" stroke=\"#d0d7de\"/>";
    svg += "<line x1=\"" + number(sx(0)) + "\" y1=\"" + number(sy(y)) + "\" x2=\"" + number(sx(x_max)) + "\" y2=\"" +
           number(sy(y)) + "\" stroke=\"#d0d7de\"/>";
    svg += "<text x=\"" + number(sx(x)) + "\" y=\"" + number(sy(0) + 16) + "\" text-anchor=\"middle\">" +
           tick(x) + "</text>";
    svg += "<text x=\"" + number(sx(0) - 6) + "\" y=\"" + number(sy(y) + 4) + "\" text-anchor=\"end\">" +
           tick(y * 1000) + "</text>";
  }
  svg += "<text x=\"" + number(sx(x_max / 2)) + "\" y=\"" + number(kPanelHeight - 6) +
         "\" text-anchor=\"middle\">output tokens/s</text>";
  svg += "<text x=\"" + number(x0 + 14) + "\" y=\"" + number(sy(y_max / 2)) + "\" text-anchor=\"middle\" "
         "transform=\"rotate(-90 " + number(x0 + 14) + " " + number(sy(y_max / 2)) + ")\">" + y_label + "</text>";
  std::string line;
  for (const SweepPoint& point : points) {
    line += number(sx(point.output_throughput)) + "," + number(sy(y_of(point))) + " ";
    svg += "<circle cx=\"" + number(sx(point.output_throughput)) + "\" cy=\"" + number(sy(y_of(point))) +
           "\" r=\"3.5\" fill=\"#0969da\"><title>concurrency " + std::to_string(point.concurrency) + ": " +
           number(point.output_throughput) + " tokens/s, " + number(y_of(point) * 1000) + " ms</title></circle>";
    svg += "<text x=\"" + number(sx(point.output_throughput) + 5) + "\" y=\"" + number(sy(y_of(point)) - 6) +
           "\">" + std::to_string(point.concurrency) + "</text>";
  }
  return "<polyline fill=\"none\" stroke=\"#0969da\" stroke-width=\"1.5\" points=\"" + line + "\"/>" + svg;
}

}  // namespace

std::string throughput_latency_svg(const std::vector<SweepPoint>& points, const std::string& title) {
  std::vector<SweepPoint> ordered = points;
  std::sort(ordered.begin(), ordered.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.concurrency < b.concurrency; });
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(2 * kPanelWidth) + "\" height=\"" +
         number(kPanelHeight) + "\" font-family=\"sans-serif\" font-size=\"11\">"
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>"
         "<text x=\"" + number(kPanelWidth) + "\" y=\"18\" text-anchor=\"middle\" font-size=\"13\">" +
         html_escape(title) + " (points labelled with their concurrency)</text>" +
         panel(ordered, 0, "median TTFT (ms)", [](const SweepPoint& p) { return p.ttft_p50_s; }) +
         panel(ordered, kPanelWidth, "median TPOT (ms)", [](const SweepPoint& p) { return p.tpot_p50_s; }) +
         "</svg>\n";
}

}  // namespace canrun
