// Progress on standard error (see progress.hpp).
#include "core/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>

namespace scaletwin {

namespace {

constexpr int kBarWidth = 20;

thread_local Progress* current_progress = nullptr;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string percent(size_t done, size_t total) {
  return fmt::format("{}%", static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total)));
}

}  // namespace

ProgressStyle progress_style_for_stderr(bool quiet) {
  if (quiet) return ProgressStyle::kQuiet;
  return ::isatty(STDERR_FILENO) ? ProgressStyle::kBar : ProgressStyle::kLines;
}

std::string format_duration(double seconds) {
  if (!(seconds >= 0.0)) seconds = 0.0;
  if (seconds < 10.0) return fmt::format("{:.1f}s", seconds);
  const long s = std::lround(seconds);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string format_eta(size_t done, size_t total, double elapsed_s) {
  if (done == 0 || total == 0) return "ETA --";
  if (done >= total) return "ETA 0.0s";
  const double per_item_s = elapsed_s / static_cast<double>(done);
  return "ETA " + format_duration(per_item_s * static_cast<double>(total - done));
}

std::string format_progress(ProgressStyle style, const std::string& label, size_t done, size_t total,
                            double elapsed_s) {
  const std::string elapsed = format_duration(elapsed_s) + " elapsed";
  if (style == ProgressStyle::kQuiet) return "";
  if (style == ProgressStyle::kLines) {
    if (total == 0) return fmt::format("{}: {} done, {}", label, done, elapsed);
    return fmt::format("{}: {}/{} ({}), {}, {}", label, done, total, percent(done, total), elapsed,
                       format_eta(done, total, elapsed_s));
  }
  if (total == 0) return fmt::format("{}  {} done  {}", label, done, elapsed);
  const size_t filled = std::min<size_t>(kBarWidth, done * kBarWidth / total);
  const std::string bar = std::string(filled, '#') + std::string(kBarWidth - filled, '.');
  return fmt::format("{} [{}] {}/{} {:>4}  {}  {}", label, bar, done, total, percent(done, total), elapsed,
                     format_eta(done, total, elapsed_s));
}

Progress::Progress(std::string label, size_t total, ProgressStyle style)
    : Progress(std::move(label), total, style, std::cerr, steady_seconds) {}

Progress::Progress(std::string label, size_t total, ProgressStyle style, std::ostream& out, Clock clock)
    : label_(std::move(label)), total_(total), style_(style), out_(out), clock_(std::move(clock)) {
  start_s_ = clock_();
  last_report_s_ = start_s_;
  if (style_ == ProgressStyle::kBar) report(false);
}

Progress::~Progress() {
  try {
    finish();
  } catch (...) {  // a destructor never throws; a failed write to stderr is not worth an exit code
  }
}

void Progress::tick(size_t n) {
  done_ += n;
  if (style_ == ProgressStyle::kQuiet || finished_) return;
  const double now_s = clock_();
  const double interval_s = style_ == ProgressStyle::kBar ? kBarInterval_s : kLineInterval_s;
  if (now_s - last_report_s_ >= interval_s) report(false);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (style_ == ProgressStyle::kBar || (style_ == ProgressStyle::kLines && reported_ && reported_done_ != done_))
    report(true);
}

void Progress::report(bool final) {
  last_report_s_ = clock_();
  const double elapsed_s = last_report_s_ - start_s_;
  std::string text = format_progress(style_, label_, done_, total_, elapsed_s);
  if (!rate_unit_.empty() && elapsed_s > 0.0)
    text += fmt::format("{}{:.1f} {}/s", style_ == ProgressStyle::kBar ? "  " : ", ",
                        static_cast<double>(done_) / elapsed_s, rate_unit_);
  if (style_ == ProgressStyle::kBar)
    out_ << "\r" << text << "\x1b[K" << (final ? "\n" : "");
  else
    out_ << text << "\n";
  out_.flush();
  reported_ = true;
  reported_done_ = done_;
}

ProgressScope::ProgressScope(Progress& progress) : previous_(current_progress) { current_progress = &progress; }

ProgressScope::~ProgressScope() { current_progress = previous_; }

void tick_current_progress(size_t n) {
  if (current_progress != nullptr) current_progress->tick(n);
}

void label_current_progress(const std::string& label) {
  if (current_progress != nullptr) current_progress->set_label(label);
}

}  // namespace scaletwin
