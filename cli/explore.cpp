// scaletwin explore: the fastest or cheapest way to a target, searched over the candidates of a space file.
//
//   scaletwin explore SPACE.json [--json FILE] [--html FILE] [--write-frontier DIR] [--checkpoint FILE]
//                                [--exhaustive] [--np N] [--quiet]
//   mpirun -np N scaletwin explore SPACE.json ...
//
// SPACE.json ("scaletwin-space/1", docs/reference/explore.md; cli/explore_space.hpp): every combination of its
// clusters, GPU counts, schemes, batches per GPU and precisions is a candidate scenario, predicted exactly as
// `predict` predicts it at that GPU count (fast fidelity, the device's shipped calibration).
//
// Before a candidate is simulated it is pruned when it cannot count: more GPUs than max_gpus, a batch that does not
// fit the device's memory, or (unless --exhaustive) a best case that an evaluated candidate already beats in both
// time and cost. The best case of a data-parallel all-reduce candidate is its GPUs at one GPU's rate with no
// communication or evaluation time (Evaluator::least_time_s); a candidate beaten even there is beaten for real, so
// pruning it changes neither the frontier nor the best. Candidates are handed out by their best case (the most
// promising first, so that pruning bites early); the candidates without a bound (parameter servers, hybrid) first.
//
// Under mpirun (or --np N, which launches it and turns a dead rank into exit 3) the candidates are spread over the
// ranks with dynamic load balancing (cli/work_pool.hpp); rank 0 prunes, collects, checkpoints and writes. Every
// candidate's result is the same whichever rank evaluated it, so 1 rank and N give the same frontier and best
// (which dominated candidates were skipped may differ). --checkpoint FILE appends each result as it arrives (one
// JSON line with its checksum); run again with the same FILE and the candidates there are not evaluated again.
//
// Output: every simulated candidate's time to target, cost and 90% interval, the Pareto frontier of time against
// cost, and the best candidate under the caps; --json "scaletwin-explore/1"; --html a page with the Pareto chart;
// --write-frontier DIR each frontier candidate as a scenario file `predict` and `run` read.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "cli/command.hpp"
#include "cli/explore_space.hpp"
#include "cli/launch.hpp"
#include "cli/work_pool.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_reader.hpp"
#include "core/progress.hpp"
#include "core/staged_directory.hpp"
#include "exec/comm/mpi_check.hpp"

namespace scaletwin::cli {

namespace {

struct ExploreArgs {
  std::string space;
  std::string json;
  std::string html;
  std::string frontier_dir;
  std::string checkpoint;
  int np = 0;
  bool quiet = false;
  bool exhaustive = false;
};

// The checkpoint: a header line naming the space (its hash and candidate count), then one line per evaluated
// candidate, {"i": index, "result": {...}, "check": "fnv1a64:HEX"} (the checksum of the line's "i" and "result"),
// appended and written through as each result arrives.
class Checkpoint {
 public:
  Checkpoint(const std::string& path, const Space& s, size_t candidates, std::map<size_t, Json>& loaded)
      : path_(path) {
    const Json header = {{"format", "scaletwin-explore-checkpoint/1"}, {"space", s.name},
                         {"space_hash", hex64(s.hash)}, {"candidates", candidates}};
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) > 0) {
      load(header, loaded);
    }
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw InputError("", "--checkpoint", fmt::format("a file it can write ({}: {})", path, std::strerror(errno)));
    if (loaded.empty() && !resumed_) write_line(header.dump());
  }
  ~Checkpoint() {
    if (fd_ >= 0) ::close(fd_);
  }
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  void append(size_t i, const Json& result) {
    const Json record = {{"i", i}, {"result", result}};
    Json line = record;
    line["check"] = "fnv1a64:" + hex64(fnv1a64(record.dump()));
    write_line(line.dump());
  }
  bool resumed() const { return resumed_; }
  size_t dropped_tail() const { return dropped_tail_; }

 private:
  void write_line(const std::string& text) {
    const std::string line = text + "\n";
    size_t at = 0;
    while (at < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + at, line.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw SystemError(fmt::format("{}: writing the checkpoint failed: {}", path_, std::strerror(errno)));
      at += static_cast<size_t>(n);
    }
  }

  void load(const Json& header, std::map<size_t, Json>& loaded) {
    const std::string text = read_input_file(path_, "checkpoint");
    std::istringstream in(text);
    std::string line;
    size_t number = 0;
    const bool ends_whole = !text.empty() && text.back() == '\n';
    while (std::getline(in, line)) {
      ++number;
      const bool last = in.peek() == std::char_traits<char>::eof();
      const std::string where = fmt::format("line {}", number);
      Json j;
      try {
        j = Json::parse(line);
      } catch (const Json::exception&) {
        if (last && !ends_whole && number > 1) {  // the line being written when the run stopped: evaluated again
          ++dropped_tail_;
          break;
        }
        throw InputError(path_, where, "a JSON line of an explore checkpoint");
      }
      if (number == 1) {
        if (j.value("format", "") != "scaletwin-explore-checkpoint/1")
          throw InputError(path_, where, "the header of an explore checkpoint (\"scaletwin-explore-checkpoint/1\")");
        if (j != header)
          throw InputError(path_, where,
                           fmt::format("a checkpoint of this space ({} candidates, space hash {}; the file has {} "
                                       "candidates, space hash {}): the space changed, or the file is another's",
                                       header["candidates"].get<size_t>(), header["space_hash"].get<std::string>(),
                                       j.value("candidates", Json()).dump(), j.value("space_hash", Json()).dump()));
        resumed_ = true;
        continue;
      }
      if (!j.is_object() || !j.contains("i") || !j.contains("result") || !j.contains("check") ||
          !j["i"].is_number_unsigned() || j["i"].get<size_t>() >= header["candidates"].get<size_t>())
        throw InputError(path_, where, "a record {\"i\": candidate index, \"result\": ..., \"check\": ...}");
      const Json record = {{"i", j["i"]}, {"result", j["result"]}};
      if (j["check"] != "fnv1a64:" + hex64(fnv1a64(record.dump())))
        throw InputError(path_, where, "a record whose checksum matches its content (the file is damaged)");
      loaded[j["i"].get<size_t>()] = j["result"];
    }
  }

  std::string path_;
  int fd_ = -1;
  bool resumed_ = false;
  size_t dropped_tail_ = 0;
};

// The evaluated candidates that no other beats in both time and cost, kept as a staircase: sorted by time, each
// cheaper than the one before. A point (t, c) is dominated when one of them is at least as fast and as cheap and
// better in one.
class Staircase {
 public:
  // An evaluated candidate that dominates (t, c), or null.
  const Candidate* dominator(double t, double c) const {
    for (const Point& p : points_)
      if (beats(p.t, p.c, t, c)) return p.x;
    return nullptr;
  }
  void add(const Candidate& x) {
    if (dominator(x.time_s, x.cost) != nullptr) return;
    std::erase_if(points_, [&](const Point& p) { return beats(x.time_s, x.cost, p.t, p.c); });
    points_.push_back({x.time_s, x.cost, &x});
  }

 private:
  struct Point {
    double t, c;
    const Candidate* x;
  };
  // (t1, c1) is at least as fast and as cheap as (t2, c2), and better in one.
  static bool beats(double t1, double c1, double t2, double c2) {
    return t1 <= t2 && c1 <= c2 && (t1 < t2 || c1 < c2);
  }
  std::vector<Point> points_;
};

// The Pareto frontier of time against cost over the simulated candidates: no other is at least as fast and as cheap
// and better in one. Without prices (every cost 0), the fastest alone.
void mark_frontier(std::vector<Candidate>& all) {
  std::vector<Candidate*> simulated;
  for (Candidate& a : all)
    if (a.simulated() && a.time_s > 0.0) simulated.push_back(&a);
  std::sort(simulated.begin(), simulated.end(), [](const Candidate* a, const Candidate* b) {
    return a->time_s != b->time_s ? a->time_s < b->time_s : a->cost < b->cost;
  });
  double cheapest_before = std::numeric_limits<double>::infinity();  // over strictly faster candidates
  for (size_t i = 0; i < simulated.size();) {
    size_t j = i;
    while (j < simulated.size() && simulated[j]->time_s == simulated[i]->time_s) ++j;
    const double group_cheapest = simulated[i]->cost;  // sorted by cost within equal times
    for (size_t k = i; k < j; ++k)
      simulated[k]->frontier = simulated[k]->cost < cheapest_before && simulated[k]->cost == group_cheapest;
    cheapest_before = std::min(cheapest_before, group_cheapest);
    i = j;
  }
}

const Candidate* best_of(const Space& s, const std::vector<Candidate>& all) {
  const Candidate* best = nullptr;
  for (const Candidate& x : all) {
    if (!x.simulated() || x.time_s <= 0.0 || !x.within_caps) continue;
    const double key = s.objective == "cost" ? x.cost : x.time_s;
    if (!best || key < (s.objective == "cost" ? best->cost : best->time_s)) best = &x;
  }
  return best;
}

Json candidate_json(const Candidate& x) {
  Json j = {{"label", x.label}, {"cluster", x.cluster}, {"gpus", x.gpus}, {"scheme", x.scheme},
            {"batch_per_gpu", x.batch_per_gpu}, {"precision", x.precision}};
  if (x.least_time_s > 0.0) j["least_time_to_target_s"] = x.least_time_s;
  if (!x.simulated()) {
    j["pruned"] = x.pruned;
    return j;
  }
  j["images_per_sec"] = x.images_per_sec;
  j["time_to_target_s"] = x.time_s;
  j["time_to_target_s_interval"] = Json::array({x.time_low_s, x.time_high_s});
  if (x.epochs > 0.0) j["epochs_to_target"] = x.epochs;
  if (x.price_per_gpu_hour > 0.0) {
    j["cost"] = x.cost;
    j["cost_interval"] = Json::array({x.cost_low, x.cost_high});
  }
  j["frontier"] = x.frontier;
  j["within_caps"] = x.within_caps;
  if (x.from_checkpoint) j["from_checkpoint"] = true;
  j["scenario"] = x.scenario;
  return j;
}

// How many candidates went which way.
Json counts_of(const std::vector<Candidate>& all, int ranks) {
  size_t simulated = 0, from_checkpoint = 0, unfit = 0, dominated = 0, cannot = 0;
  for (const Candidate& x : all) {
    switch (x.pruned_as) {
      case Candidate::Pruned::kNo:
        ++simulated;
        if (x.from_checkpoint) ++from_checkpoint;
        break;
      case Candidate::Pruned::kDominated: ++dominated; break;
      case Candidate::Pruned::kCannotRun: ++cannot; break;
      case Candidate::Pruned::kCannotFit: ++unfit; break;
    }
  }
  return {{"candidates", all.size()}, {"simulated", simulated}, {"from_checkpoint", from_checkpoint},
          {"pruned_cannot_fit", unfit}, {"pruned_dominated", dominated}, {"cannot_run", cannot}, {"ranks", ranks}};
}

std::string table(const Space& s, const std::vector<Candidate>& all, const Candidate* best, const Json& counts) {
  std::ostringstream out;
  out << fmt::format(
      "space {}: {} candidates on {} rank(s): {} simulated ({} of them read from the checkpoint), {} pruned before "
      "simulation as unable to fit, {} as dominated, {} that cannot run; objective: {}\n",
      s.name, all.size(), counts["ranks"].get<int>(), counts["simulated"].get<size_t>(),
      counts["from_checkpoint"].get<size_t>(), counts["pruned_cannot_fit"].get<size_t>(),
      counts["pruned_dominated"].get<size_t>(), counts["cannot_run"].get<size_t>(), s.objective);
  std::vector<const Candidate*> order;
  for (const Candidate& x : all)
    if (x.simulated() && x.time_s > 0.0) order.push_back(&x);
  std::sort(order.begin(), order.end(), [](const Candidate* a, const Candidate* b) { return a->time_s < b->time_s; });
  // Many candidates: the frontier alone (--json has them all).
  const bool frontier_only = order.size() > 60;
  out << fmt::format("{:<52} {:>12} {:>10} {:>21} {:>10} {:>21}\n",
                     frontier_only ? "frontier candidate" : "candidate (frontier *)", "images/s", "time",
                     "90% interval", "cost $", "90% interval");
  for (const Candidate* x : order) {
    if (frontier_only && !x->frontier) continue;
    out << fmt::format("{:<52} {:>12.1f} {:>10} {:>21} {:>10} {:>21}\n",
                       (x->frontier ? "* " : "  ") + x->label, x->images_per_sec, format_duration(x->time_s),
                       format_duration(x->time_low_s) + "-" + format_duration(x->time_high_s),
                       x->price_per_gpu_hour > 0.0 ? fmt::format("{:.2f}", x->cost) : std::string("-"),
                       x->price_per_gpu_hour > 0.0 ? fmt::format("{:.2f}-{:.2f}", x->cost_low, x->cost_high)
                                                   : std::string("-"));
  }
  size_t listed = 0;
  for (const Candidate& x : all)
    if (x.pruned_as != Candidate::Pruned::kNo && x.pruned_as != Candidate::Pruned::kDominated && listed++ < 20)
      out << fmt::format("  pruned {}: {}\n", x.label, x.pruned);
  if (listed > 20) out << fmt::format("  ... and {} more pruned (--json lists every one)\n", listed - 20);
  if (best)
    out << fmt::format("best for {}{}: {} ({} to target{})\n", s.objective,
                       s.max_cost > 0 || s.max_time_s > 0 ? " within the caps" : "", best->label,
                       format_duration(best->time_s),
                       best->price_per_gpu_hour > 0.0 ? fmt::format(", ${:.2f}", best->cost) : std::string());
  else
    out << "best: none (no candidate was simulated within the caps)\n";
  for (const ClusterChoice& c : s.clusters)
    if (c.price_per_gpu_hour > 0.0)
      out << fmt::format("price of {}: ${}/GPU-hour{}\n", c.cluster, c.price_per_gpu_hour,
                         c.price_source.empty() ? std::string(" (no source given)") : " (" + c.price_source + ")");
  return out.str();
}

std::vector<std::string> rank_arguments(const ExploreArgs& a) {
  std::vector<std::string> args{"explore", a.space};
  if (!a.json.empty()) args.insert(args.end(), {"--json", a.json});
  if (!a.html.empty()) args.insert(args.end(), {"--html", a.html});
  if (!a.frontier_dir.empty()) args.insert(args.end(), {"--write-frontier", a.frontier_dir});
  if (!a.checkpoint.empty()) args.insert(args.end(), {"--checkpoint", a.checkpoint});
  if (a.exhaustive) args.emplace_back("--exhaustive");
  if (a.quiet) args.emplace_back("--quiet");
  return args;
}

// A candidate still to evaluate, with its best case (Evaluator::least_time_s) where it has one.
struct Pending {
  size_t i;
  std::optional<double> least_time_s;
  double least_cost = 0.0;
};

// What cannot count is pruned now (ticking the progress); the rest are ordered by their best case, those without one
// first, cheapest (objective cost) or fastest (time) first.
std::vector<Pending> pending_of(const ExploreArgs& a, const Space& s, std::vector<Candidate>& all,
                                const std::map<size_t, Json>& loaded, Evaluator& evaluator, Progress& progress) {
  std::vector<Pending> pending;
  for (size_t i = 0; i < all.size(); ++i) {
    if (loaded.count(i)) continue;
    Candidate& x = all[i];
    x.pruned = evaluator.cannot_fit(x);
    if (!x.pruned.empty()) {
      x.pruned_as = Candidate::Pruned::kCannotFit;
      progress.tick();
      continue;
    }
    Pending p{i, a.exhaustive ? std::nullopt : evaluator.least_time_s(x), 0.0};
    if (p.least_time_s) {
      p.least_cost = *p.least_time_s * x.price_per_gpu_hour * x.gpus / 3600.0;
      x.least_time_s = *p.least_time_s;
    }
    pending.push_back(p);
  }
  const bool by_cost = s.objective == "cost";
  std::stable_sort(pending.begin(), pending.end(), [&](const Pending& p, const Pending& q) {
    if (p.least_time_s.has_value() != q.least_time_s.has_value()) return !p.least_time_s.has_value();
    if (!p.least_time_s) return false;
    return by_cost ? p.least_cost < q.least_cost : *p.least_time_s < *q.least_time_s;
  });
  return pending;
}

// The frontier and the best of the evaluated candidates, and every output: the frontier's scenarios, --html,
// --json and the table.
void write_outputs(const ExploreArgs& a, const Space& s, std::vector<Candidate>& all,
                   std::optional<StagedDirectory>& frontier_out, int ranks) {
  // Every candidate that reached the simulator was refused by it: the space itself is wrong, said as an input error.
  const bool any_simulated = std::any_of(all.begin(), all.end(), [](const Candidate& x) { return x.simulated(); });
  if (!any_simulated)
    for (const Candidate& x : all)
      if (x.pruned_as == Candidate::Pruned::kCannotRun)
        throw InputError(fmt::format("{}: no candidate can run; the first, {}: {}", s.file, x.label,
                                     x.pruned.substr(std::string("cannot run: ").size())));
  mark_frontier(all);
  const Candidate* best = best_of(s, all);
  const Json counts = counts_of(all, ranks);
  Json j = {{"format", "scaletwin-explore/1"}, {"space", s.name}, {"objective", s.objective}, {"counts", counts},
            {"candidates", Json::array()}};
  for (const Candidate& x : all) j["candidates"].push_back(candidate_json(x));
  std::vector<const Candidate*> frontier;
  for (const Candidate& x : all)
    if (x.frontier) frontier.push_back(&x);
  std::sort(frontier.begin(), frontier.end(), [](const Candidate* p, const Candidate* q) { return p->time_s < q->time_s; });
  j["frontier"] = Json::array();
  for (const Candidate* x : frontier) j["frontier"].push_back(x->label);
  j["best"] = best ? Json(best->label) : Json(nullptr);
  if (frontier_out) {
    for (const Candidate* x : frontier) frontier_out->write(x->label + ".json", x->scenario.dump(2) + "\n");
    frontier_out->publish();
  }
  if (!a.html.empty()) write_file_atomic(a.html, explore_html(s, all, best, counts));
  if (!a.json.empty()) write_json_output(a.json, j);
  if (a.json != "-") std::cout << table(s, all, best, counts);
}

// The whole search on this rank (rank 0 of `ranks`, or a worker). comm: MPI_COMM_NULL when not under mpirun.
int explore_on(const ExploreArgs& a, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  if (comm != MPI_COMM_NULL) {
    ST_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    ST_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  }
  const Space s = read_space(a.space);
  std::vector<Candidate> all = candidates_of(s);
  Evaluator evaluator(s);
  WorkPool pool;
  pool.evaluate = [&](size_t i) { return evaluator.evaluate(all[i]); };
  if (rank != 0) {
    run_work_pool(comm, pool);
    return kExitOk;
  }
  // Rank 0: outputs checked first (nothing is evaluated for a directory that cannot be written).
  std::optional<StagedDirectory> frontier_out;
  if (!a.frontier_dir.empty()) frontier_out.emplace(a.frontier_dir, "--write-frontier");
  std::map<size_t, Json> loaded;
  std::optional<Checkpoint> checkpoint;
  if (!a.checkpoint.empty()) checkpoint.emplace(a.checkpoint, s, all.size(), loaded);
  if (checkpoint && checkpoint->dropped_tail() > 0)
    std::cerr << fmt::format("explore: {}: its last line was cut short (the run stopped while writing it); that "
                             "candidate is evaluated again\n", a.checkpoint);
  Progress progress("explore", all.size(), progress_style_for_stderr(a.quiet));
  progress.show_rate("candidates");
  Staircase staircase;
  const auto record = [&](size_t i, const Json& result) {
    apply_result(s, result, all[i]);
    if (all[i].simulated() && all[i].time_s > 0.0) staircase.add(all[i]);
    progress.tick();
  };
  // The candidates read from the checkpoint count as evaluated.
  for (const auto& [i, result] : loaded) {
    all[i].from_checkpoint = true;
    record(i, result);
  }
  std::vector<Pending> pending = pending_of(a, s, all, loaded, evaluator, progress);
  size_t cursor = 0;
  pool.next = [&]() -> std::optional<size_t> {
    while (cursor < pending.size()) {
      const Pending& p = pending[cursor++];
      Candidate& x = all[p.i];
      if (p.least_time_s) {
        if (const Candidate* by = staircase.dominator(*p.least_time_s, p.least_cost)) {
          x.pruned_as = Candidate::Pruned::kDominated;
          x.pruned = fmt::format("dominated: at best {} and ${:.2f}, {} is at least as fast and as cheap",
                                 format_duration(*p.least_time_s), p.least_cost, by->label);
          progress.tick();
          continue;
        }
      }
      return p.i;
    }
    return std::nullopt;
  };
  pool.done = [&](size_t i, const Json& result) {
    if (checkpoint) checkpoint->append(i, result);
    record(i, result);
  };
  if (comm != MPI_COMM_NULL) {
    run_work_pool(comm, pool);
  } else {
    while (const std::optional<size_t> i = pool.next()) pool.done(*i, pool.evaluate(*i));
  }
  progress.finish();
  write_outputs(a, s, all, frontier_out, ranks);
  return kExitOk;
}

int run_explore(const ExploreArgs& a) {
  if (a.np > 0) {
    read_space(a.space);  // a malformed space is said once, here, not by every rank
    return launch_under_mpirun("explore", a.np, rank_arguments(a));
  }
  // Under mpirun (its environment says so) with more than one rank: the pool over MPI; else this process alone.
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (world == nullptr || std::atoi(world) <= 1) return explore_on(a, MPI_COMM_NULL);
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);  // rank 0 evaluates on a second thread
  if (provided < MPI_THREAD_FUNNELED)
    throw SystemError("explore: this MPI library does not let a second thread compute beside MPI (MPI_THREAD_FUNNELED)");
  exec::set_errors_return(MPI_COMM_WORLD);
  const int rc = exec::run_or_abort(MPI_COMM_WORLD, [&] { return explore_on(a, MPI_COMM_WORLD); });
  MPI_Finalize();
  return rc;
}

}  // namespace

void add_explore_command(CLI::App& root, Action& action) {
  auto args = std::make_shared<ExploreArgs>();
  auto* sub = root.add_subcommand(
      "explore", "search the candidates of a space file for the fastest or cheapest way to a training target");
  sub->add_option("space", args->space, "space file (scaletwin-space/1: docs/reference/explore.md)")->required();
  sub->add_option("--json", args->json, "write every candidate, the frontier and the best as JSON ('-' = stdout)");
  sub->add_option("--html", args->html, "write a page with the Pareto chart and the frontier to FILE");
  sub->add_option("--write-frontier", args->frontier_dir, "write each frontier candidate as a scenario file into DIR");
  sub->add_option("--checkpoint", args->checkpoint,
                  "append each evaluated candidate to FILE; a run with the same FILE skips what it holds");
  sub->add_flag("--exhaustive", args->exhaustive, "simulate every candidate that fits, dominated or not");
  sub->add_option("--np", args->np, "launch mpirun with N ranks sharing the candidates")->check(CLI::Range(1, 1 << 12));
  sub->add_flag("-q,--quiet", args->quiet, "no progress on standard error");
  sub->callback([&action, args] { action = [args] { return run_explore(*args); }; });
}

}  // namespace scaletwin::cli
