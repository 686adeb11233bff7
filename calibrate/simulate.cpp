// A small fork pool over sim::simulate_point (see simulate.hpp). The parent is single-threaded and closes each
// pipe's write end right after forking, so a child never holds another child's write end (EOF arrives when the
// child that owns the pipe exits). Each finished simulation ticks the command's current progress, if any.
#include "calibrate/simulate.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "plan/iteration_plan.hpp"
#include "sim/predict.hpp"

namespace scaletwin::calibrate {

namespace {

struct Child {
  size_t job = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string text;
};

void write_all(int fd, const std::string& text) {
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

[[noreturn]] void child_main(int fd, const SimJob& job, const sim::RunOptions& options) {
  Json reply;
  try {
    // simulate_point applies the calibration's per-model factors to the scenario's model.
    const sim::PointResult point = sim::simulate_point(job.scenario, job.gpus, job.calibration, options);
    reply = {{"point", sim::point_to_json(point, false)}};
  } catch (const InputError& e) {
    reply = {{"error", "input"}, {"message", e.what()}};
  } catch (const SystemError& e) {
    reply = {{"error", "system"}, {"message", e.what()}};
  } catch (const std::exception& e) {
    reply = {{"error", "internal"}, {"message", e.what()}};
  }
  write_all(fd, reply.dump());
  ::close(fd);
  ::_exit(0);
}

Child start_child(size_t index, const SimJob& job, const sim::RunOptions& options) {
  int fds[2];
  if (::pipe(fds) != 0) throw SystemError(fmt::format("calibrate: pipe: {}", std::strerror(errno)));
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw SystemError(fmt::format("calibrate: fork: {}", std::strerror(errno)));
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], job, options);
  }
  ::close(fds[1]);
  return Child{index, pid, fds[0], {}};
}

// Reads what is available; true once the child closed its end.
bool drain(Child& c) {
  char buf[65536];
  const ssize_t n = ::read(c.fd, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return false;
  if (n > 0) {
    c.text.append(buf, static_cast<size_t>(n));
    return false;
  }
  return true;
}

// Reaps a finished child and decodes its reply; an error becomes the message to rethrow.
std::optional<sim::PointResult> finish(Child& c, const SimJob& job, std::string& error_kind, std::string& error) {
  ::close(c.fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || c.text.empty()) {
    error_kind = "system";
    error = fmt::format("the simulation of {} ({} GPUs) died (status {})", job.scenario.name, job.gpus, status);
    return std::nullopt;
  }
  const Json reply = Json::parse(c.text);
  if (reply.contains("point")) return sim::point_from_json(reply["point"]);
  error_kind = reply.at("error").get<std::string>();
  error = fmt::format("{}: {}", job.scenario.name, reply.at("message").get<std::string>());
  return std::nullopt;
}

}  // namespace

std::vector<sim::PointResult> simulate_all(const std::vector<SimJob>& jobs, int parallel,
                                           const sim::RunOptions& options) {
  std::vector<std::optional<sim::PointResult>> results(jobs.size());
  std::vector<Child> running;
  std::string error_kind, error;
  size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    while (error.empty() && next < jobs.size() && static_cast<int>(running.size()) < std::max(1, parallel)) {
      running.push_back(start_child(next, jobs[next], options));
      ++next;
    }
    if (!error.empty() && running.empty()) break;
    std::vector<pollfd> fds;
    for (const Child& c : running) fds.push_back(pollfd{c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
      throw SystemError(fmt::format("calibrate: poll: {}", std::strerror(errno)));
    for (size_t i = running.size(); i-- > 0;) {
      if (fds[i].revents == 0 || !drain(running[i])) continue;
      std::string kind, message;
      results[running[i].job] = finish(running[i], jobs[running[i].job], kind, message);
      if (!message.empty() && error.empty()) error_kind = kind, error = message;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      tick_current_progress();  // the command's progress, if it set one (core/progress.hpp)
    }
  }
  if (!error.empty()) {
    if (error_kind == "input") throw InputError(error);
    if (error_kind == "system") throw SystemError(error);
    throw InternalError(error);
  }
  std::vector<sim::PointResult> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

}  // namespace scaletwin::calibrate
