// Progress on stderr: the text of the bar and of the plain lines, the ETA, and the throttling of plain lines,
// with an injected clock (no waiting) and a string stream for stderr.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "core/progress.hpp"

using namespace scaletwin;

namespace {

size_t count_lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

}  // namespace

TEST_CASE("durations read as seconds minutes and hours", "[progress]") {
  CHECK(format_duration(0.42) == "0.4s");
  CHECK(format_duration(45.2) == "45s");
  CHECK(format_duration(125.0) == "2m05s");
  CHECK(format_duration(3725.0) == "1h02m");
  CHECK(format_duration(-3.0) == "0.0s");
}

TEST_CASE("the ETA extrapolates the mean time per item over what is left", "[progress]") {
  CHECK(format_eta(0, 8, 3.0) == "ETA --");       // nothing done yet: no estimate
  CHECK(format_eta(2, 8, 20.0) == "ETA 1m00s");   // 10 s per item, 6 left
  CHECK(format_eta(3, 4, 90.0) == "ETA 30s");
  CHECK(format_eta(4, 4, 90.0) == "ETA 0.0s");
  CHECK(format_eta(5, 0, 90.0) == "ETA --");      // unknown total
}

TEST_CASE("a bar shows the fraction done and a plain line the same figures", "[progress]") {
  const std::string bar = format_progress(ProgressStyle::kBar, "predict", 4, 8, 65.0);
  CHECK(bar == "predict [##########..........] 4/8  50%  1m05s elapsed  ETA 1m05s");
  const std::string line = format_progress(ProgressStyle::kLines, "predict", 4, 8, 65.0);
  CHECK(line == "predict: 4/8 (50%), 1m05s elapsed, ETA 1m05s");
  CHECK(format_progress(ProgressStyle::kLines, "calibrate", 37, 0, 12.0) == "calibrate: 37 done, 12s elapsed");
  CHECK(format_progress(ProgressStyle::kQuiet, "predict", 4, 8, 65.0).empty());
}

TEST_CASE("plain lines come at most once per interval and a last line closes them", "[progress]") {
  std::ostringstream err;
  double now_s = 100.0;
  {
    Progress p("validate", 10, ProgressStyle::kLines, err, [&] { return now_s; });
    p.tick();  // at 0 s: nothing yet
    now_s += 2.0;
    p.tick();  // 2 s: below the interval
    CHECK(err.str().empty());
    now_s += Progress::kLineInterval_s;
    p.tick();  // 7 s: one line
    CHECK(count_lines(err.str()) == 1);
    CHECK(err.str() == "validate: 3/10 (30%), 7.0s elapsed, ETA 16s\n");
    now_s += 1.0;
    p.tick();
    p.tick();  // within the interval of the last line
    CHECK(count_lines(err.str()) == 1);
    now_s += Progress::kLineInterval_s;
    p.tick();
    CHECK(count_lines(err.str()) == 2);
    p.tick();  // within the interval: shown only by the final line
  }  // the destructor finishes: a final line since lines were written and the last one showed 6
  CHECK(count_lines(err.str()) == 3);
  CHECK(err.str().find("validate: 7/10 (70%), 13s elapsed") != std::string::npos);
}

TEST_CASE("a plain line that already shows the end is not repeated", "[progress]") {
  std::ostringstream err;
  double now_s = 0.0;
  Progress p("predict", 2, ProgressStyle::kLines, err, [&] { return now_s; });
  now_s = 1.0;
  p.tick();
  now_s = 11.0;
  p.tick();  // the last tick after the interval: "2/2" printed
  p.finish();
  CHECK(err.str() == "predict: 2/2 (100%), 11s elapsed, ETA 0.0s\n");
}

TEST_CASE("short work in plain-line mode writes nothing and quiet never writes", "[progress]") {
  std::ostringstream err;
  double now_s = 0.0;
  {
    Progress p("predict", 3, ProgressStyle::kLines, err, [&] { return now_s; });
    for (int i = 0; i < 3; ++i) {
      now_s += 1.0;
      p.tick();
    }
  }
  CHECK(err.str().empty());
  {
    Progress q("predict", 3, ProgressStyle::kQuiet, err, [&] { return now_s; });
    now_s += 100.0;
    q.tick(3);
    q.finish();
    CHECK(q.done() == 3);
  }
  CHECK(err.str().empty());
}

TEST_CASE("the bar redraws in place and ends with a newline", "[progress]") {
  std::ostringstream err;
  double now_s = 0.0;
  Progress p("predict", 2, ProgressStyle::kBar, err, [&] { return now_s; });
  now_s = 1.0;
  p.tick();
  now_s = 2.0;
  p.tick();
  p.finish();
  p.finish();  // idempotent
  const std::string text = err.str();
  CHECK(count_lines(text) == 1);
  CHECK(text.back() == '\n');
  CHECK(std::count(text.begin(), text.end(), '\r') == 4);  // start, two ticks, finish
  CHECK(text.find("2/2 100%") != std::string::npos);
}

TEST_CASE("ticks reach the current progress of a scope and nothing outside one", "[progress]") {
  std::ostringstream err;
  Progress outer("calibrate", 0, ProgressStyle::kQuiet, err, [] { return 0.0; });
  tick_current_progress();  // no scope: ignored
  CHECK(outer.done() == 0);
  {
    ProgressScope scope(outer);
    tick_current_progress(3);
    {
      Progress inner("inner", 0, ProgressStyle::kQuiet, err, [] { return 0.0; });
      ProgressScope nested(inner);
      tick_current_progress();
      CHECK(inner.done() == 1);
    }
    tick_current_progress();  // back to the outer one
  }
  tick_current_progress();
  CHECK(outer.done() == 4);
}

TEST_CASE("a long command's phase shows in its next line", "[progress]") {
  std::ostringstream err;
  double now_s = 0.0;
  {
    Progress p("calibrate: linearise 1/4", 0, ProgressStyle::kLines, err, [&] { return now_s; });
    ProgressScope scope(p);
    now_s = 6.0;
    tick_current_progress(10);
    label_current_progress("calibrate: fit 1/3");
    now_s = 12.0;
    tick_current_progress(5);
  }
  label_current_progress("outside a scope: ignored");
  const std::string out = err.str();
  CHECK(out.find("calibrate: linearise 1/4: 10 done") != std::string::npos);
  CHECK(out.find("calibrate: fit 1/3: 15 done") != std::string::npos);
}
