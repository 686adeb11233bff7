// Progress of long work on standard error: a bar with the elapsed time and an ETA redrawn in place when stderr is
// a terminal, a plain line every few seconds otherwise (logs, CI), nothing with --quiet.
//
//   terminal:  predict [##########..........]  4/8  50%  1m05s elapsed  ETA 1m05s
//   lines:     predict: 4/8 (50%), 1m05s elapsed, ETA 1m05s
//
// The total may be unknown (0): then the count and the elapsed time are shown, no bar and no ETA. The clock is
// injectable so the formatting and the throttling are testable without waiting.
//
// Work that sits deep in a call chain owned elsewhere (calibrate's simulations, reached through the fit) ticks the
// progress of the command through a ProgressScope: a per-thread "current progress" installed by the command for
// the duration of the work, a no-op when there is none. It is the one piece of mutable state here, deliberately:
// threading a reporter through every signature of the fit would couple the numerics to the terminal.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>

namespace scaletwin {

enum class ProgressStyle { kQuiet, kBar, kLines };

// kQuiet when `quiet`, kBar when standard error is a terminal, kLines otherwise.
ProgressStyle progress_style_for_stderr(bool quiet);

// "0.4s", "45s", "2m05s", "1h02m".
std::string format_duration(double seconds);
// "ETA 1m05s" from the work done so far; "ETA --" before anything is done.
std::string format_eta(size_t done, size_t total, double elapsed_s);
// The text of one report (without "\r" or newline), in the style's form; kQuiet gives "".
std::string format_progress(ProgressStyle style, const std::string& label, size_t done, size_t total,
                            double elapsed_s);

class Progress {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  static constexpr double kLineInterval_s = 5.0;   // kLines: at most one line per interval
  static constexpr double kBarInterval_s = 0.1;    // kBar: redraws at most this often

  Progress(std::string label, size_t total, ProgressStyle style);
  Progress(std::string label, size_t total, ProgressStyle style, std::ostream& out, Clock clock);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void tick(size_t n = 1);
  // Changes what the report says it is doing (a phase of a long command); shown at the next report.
  void set_label(std::string label) { label_ = std::move(label); }
  // Adds the rate so far to every report: "  3.2 UNIT/s" (explore: "candidates").
  void show_rate(std::string unit) { rate_unit_ = std::move(unit); }
  // Ends the report: the bar's final state and a newline; in kLines a last line if lines were written and the last
  // one is not already final. Idempotent.
  void finish();
  size_t done() const { return done_; }

 private:
  void report(bool final);

  std::string label_;
  std::string rate_unit_;
  size_t total_;
  ProgressStyle style_;
  std::ostream& out_;
  Clock clock_;
  double start_s_;
  double last_report_s_;
  size_t done_ = 0;
  size_t reported_done_ = 0;
  bool reported_ = false;
  bool finished_ = false;
};

// Makes `progress` this thread's current progress until the scope ends (the previous one is restored).
class ProgressScope {
 public:
  explicit ProgressScope(Progress& progress);
  ~ProgressScope();
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;

 private:
  Progress* previous_;
};

// Ticks this thread's current progress; does nothing when no ProgressScope is active.
void tick_current_progress(size_t n = 1);
// Sets the label of this thread's current progress (the phase); does nothing when no ProgressScope is active.
void label_current_progress(const std::string& label);

}  // namespace scaletwin
