// The fork pool of point_pool.hpp. The parent is single-threaded and closes each pipe's write end right after
// forking, so a child never holds another child's write end (EOF arrives when the child that owns the pipe exits).
#include "sim/point_pool.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "sim/predict.hpp"

namespace scaletwin::sim {

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

[[noreturn]] void child_main(int fd, const PointJob& job, const RunOptions& options) {
  Json reply;
  try {
    const report::PointResult point = simulate_point(job.scenario, job.gpus, job.calibration, options, job.fidelity);
    reply = {{"point", report::point_to_json(point, options.trace)}};
  } catch (const InputError& e) {
    reply = {{"error", "input"}, {"message", e.what()}, {"file", e.file()}, {"path", e.json_path()}};
  } catch (const SystemError& e) {
    reply = {{"error", "system"}, {"message", e.what()}};
  } catch (const std::exception& e) {
    reply = {{"error", "internal"}, {"message", e.what()}};
  }
  write_all(fd, reply.dump());
  ::close(fd);
  ::_exit(0);
}

Child start_child(size_t index, const PointJob& job, const RunOptions& options) {
  int fds[2];
  if (::pipe(fds) != 0) throw SystemError(fmt::format("simulate: pipe: {}", std::strerror(errno)));
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw SystemError(fmt::format("simulate: fork: {}", std::strerror(errno)));
  }
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

// Reaps a finished child and decodes its reply; a child's error is thrown as the type it had in the child.
report::PointResult finish(Child& c, const PointJob& job) {
  ::close(c.fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string what = fmt::format("{} on {} GPUs", job.scenario.name, job.gpus);
  if (!WIFEXITED(status) || c.text.empty())
    throw SystemError(fmt::format("the simulation of {} died (status {})", what, status));
  const Json reply = Json::parse(c.text);
  if (reply.contains("point")) return report::point_from_json(reply["point"]);
  const std::string kind = reply.at("error"), message = reply.at("message");
  if (kind == "input")
    throw InputError::with_message(message, reply.value("file", std::string()), reply.value("path", std::string()));
  if (kind == "system") throw SystemError(fmt::format("{}: {}", what, message));
  throw InternalError(fmt::format("{}: {}", what, message));
}

}  // namespace

std::vector<report::PointResult> simulate_points_forked(const std::vector<PointJob>& jobs, int parallel,
                                                        const RunOptions& options, const std::function<void()>& on_done) {
  std::vector<std::optional<report::PointResult>> results(jobs.size());
  std::vector<Child> running;
  std::exception_ptr error;
  size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    while (!error && next < jobs.size() && static_cast<int>(running.size()) < std::max(1, parallel)) {
      try {
        running.push_back(start_child(next, jobs[next], options));
      } catch (...) {
        error = std::current_exception();
      }
      ++next;
    }
    if (running.empty()) break;
    std::vector<pollfd> fds;
    for (const Child& c : running) fds.push_back(pollfd{c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
      throw SystemError(fmt::format("simulate: poll: {}", std::strerror(errno)));
    for (size_t i = running.size(); i-- > 0;) {
      if (fds[i].revents == 0 || !drain(running[i])) continue;
      try {
        results[running[i].job] = finish(running[i], jobs[running[i].job]);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      if (on_done) on_done();
    }
  }
  if (error) std::rethrow_exception(error);
  std::vector<report::PointResult> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

}  // namespace scaletwin::sim
