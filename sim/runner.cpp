// The iteration runner (see runner.hpp): endpoint actors, serving actors for on-demand collectives, bookkeeping
// of iteration times, phases, collectives, staleness and trace events.
#include "sim/runner.hpp"

#include <fmt/format.h>
#include <simgrid/Exception.hpp>

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "core/error.hpp"
#include "core/files.hpp"
#include "sim/compute_model.hpp"
#include "sim/faults.hpp"
#include "sim/interpreter.hpp"
#include "sim/platform.hpp"
#include "sim/sync_window.hpp"

namespace scaletwin::sim {

namespace {

constexpr int kPhases = 6;

struct IterationRecord {
  double start_s = 0.0;
  double end_s = -1.0;
  std::array<double, kPhases> phase_s{};
  std::map<int, double> collective_s;  // collective index -> launch-to-completion seconds
};

struct Request {
  int collective = -1;
  long run_id = 0;
  int initiator = -1;  // endpoint
  int rank = -1;       // the rank the server plays
};

struct ServerQueue {
  std::deque<Request> queue;
  sg4::SemaphorePtr pending = sg4::Semaphore::create(0);
};

class Simulation {
 public:
  Simulation(const plan::IterationPlan& plan, const topology::Cluster& cluster, const Calibration& calibration,
             const RunOptions& options);
  report::PointResult run();

 private:
  void run_endpoint(int e);
  void run_iteration(int e, IterationRecord& rec, bool record);
  long collective_run_id(int e, const plan::Item& item, int rank);
  void serve(int e);
  void drive(RankPart& part, InFlight& in_flight) const;
  StepCosts step_costs(int e) const;
  report::PointResult collect() const;
  void add_trace(int e, std::string name, std::string category, double start_s, int layer = -1) {
    if (options_.trace)
      trace_.push_back({e, std::move(name), std::move(category), start_s, sg4::Engine::get_clock(), layer});
  }

  const plan::IterationPlan& plan_;
  const topology::Cluster& cluster_;
  ComputeModel model_;
  RunOptions options_;
  std::unique_ptr<sg4::Engine> engine_;
  std::unique_ptr<ClusterPlatform> platform_;
  AppliedFaults faults_;
  std::vector<int> vertex_;
  std::vector<Processor> processor_;
  std::vector<ScheduleIndex> index_;
  std::vector<std::vector<std::vector<int>>> dependents_;  // [program][item]
  std::vector<std::vector<int>> ranks_;                     // [endpoint][item]: the rank it plays (plan::item_ranks)
  std::vector<std::vector<IterationRecord>> records_;      // [endpoint][iteration]
  std::map<int, ServerQueue> queues_;
  long next_run_id_ = 0;
  int measuring_ = 0;     // async: workers that have not finished their measured iterations
  int stop_after_ = -1;   // async: last iteration every worker runs, once known
  int max_started_ = -1;  // async: highest iteration started by any worker
  // Staleness: updates applied per (server, parameter slice = the layers a collective carries), and the version
  // of that slice each on-demand collective (one worker's stream for one bucket) last pulled.
  std::map<std::pair<int, std::vector<int>>, int64_t> version_;
  std::map<std::pair<int, int>, int64_t> pulled_;  // (server, collective) -> version
  std::vector<double> staleness_;
  std::vector<report::TraceEvent> trace_;
};

Simulation::Simulation(const plan::IterationPlan& plan, const topology::Cluster& cluster,
                       const Calibration& calibration, const RunOptions& options)
    : plan_(plan), cluster_(cluster), model_(calibration, options.real_data), options_(options) {
  ST_ASSERT(options.iterations >= 1 && options.warmup >= 0, "runner: at least one measured iteration");
  ST_ASSERT(plan.program_of.size() == plan.endpoints.size(), "plan: a program per endpoint");
  engine_ = make_engine();
  for (const plan::Endpoint& ep : plan.endpoints) {
    const bool gpu = ep.device >= 0;
    vertex_.push_back(gpu ? cluster.device_vertex(ep.node, ep.device) : cluster.cpu_vertex(ep.node));
    processor_.push_back(endpoint_processor(ep, cluster, options.arithmetic));
  }
  note_co_runners(processor_, plan);
  note_upload_links(processor_, plan, cluster);
  std::set<std::pair<int, int>> pairs;
  for (const plan::CollectiveInstance& ci : plan.collectives) {
    const plan::Schedule& s = plan.schedules.at(static_cast<size_t>(ci.schedule));
    ST_ASSERT(static_cast<int>(ci.participants.size()) == s.ranks, "collective " + ci.label + ": participants");
    for (int r = 0; r < s.ranks; ++r)
      for (const plan::Step& st : s.programs[static_cast<size_t>(r)].steps)
        if (st.op == plan::OpKind::kSend)
          pairs.insert({vertex_[static_cast<size_t>(ci.participants[static_cast<size_t>(r)])],
                        vertex_[static_cast<size_t>(ci.participants[static_cast<size_t>(st.peer)])]});
    if (ci.on_demand)
      for (size_t r = 1; r < ci.participants.size(); ++r) queues_[ci.participants[r]];
  }
  faults_ = AppliedFaults(options.faults, options.faults_file, cluster, plan);
  platform_ = std::make_unique<ClusterPlatform>(cluster, calibration, pairs, faults_);
  for (const plan::Schedule& s : plan.schedules) index_.push_back(index_schedule(s));
  for (const plan::EndpointProgram& prog : plan.programs) {
    std::vector<std::vector<int>> deps(prog.items.size());
    for (size_t i = 0; i < prog.items.size(); ++i)
      for (int d : prog.items[i].deps) {
        ST_ASSERT(d >= 0 && static_cast<size_t>(d) < i, "plan: item deps must point to earlier items");
        deps[static_cast<size_t>(d)].push_back(static_cast<int>(i));
      }
    dependents_.push_back(std::move(deps));
  }
  ranks_ = plan::item_ranks(plan);
  const int total = options.warmup + options.iterations;
  records_.assign(plan.endpoints.size(), std::vector<IterationRecord>(static_cast<size_t>(total)));
  for (const plan::Endpoint& ep : plan.endpoints) measuring_ += ep.kind == plan::EndpointKind::kWorker ? 1 : 0;
  next_run_id_ = static_cast<long>(plan.collectives.size());
}

StepCosts Simulation::step_costs(int e) const {
  const Processor& p = processor_[static_cast<size_t>(e)];
  const bool server = plan_.endpoints[static_cast<size_t>(e)].kind == plan::EndpointKind::kServer;
  const auto rate = [](double seconds_per_byte) {
    return seconds_per_byte > 0.0 ? 1.0 / seconds_per_byte : std::numeric_limits<double>::infinity();
  };
  return StepCosts{rate(model_.reduce_time_s(1.0, p, server)), rate(model_.copy_time_s(1.0, p)),
                   model_.calibration().message_overhead_s};
}

void Simulation::drive(RankPart& part, InFlight& in_flight) const {
  part.launch_ready(in_flight);
  while (!part.done()) part.on_complete(in_flight.wait_any(), in_flight);
}

void Simulation::run_endpoint(int e) {
  const int total = options_.warmup + options_.iterations;
  const bool keep_going = plan_.sync != plan::SyncKind::kSync &&
                          plan_.endpoints[static_cast<size_t>(e)].kind == plan::EndpointKind::kWorker;
  if (!keep_going) {
    for (int it = 0; it < total; ++it) run_iteration(e, records_[static_cast<size_t>(e)][static_cast<size_t>(it)], true);
    return;
  }
  // Asynchronous workers keep training (unrecorded) until the slowest has done its measured iterations, so it is
  // measured under the same server and network load. When it is done, every worker stops after the highest
  // iteration any worker has started: workers coupled by synchronous collectives (mixed_async inside a node)
  // then run the same iterations and none waits for a partner that has left.
  for (int it = 0; stop_after_ < 0 || it <= stop_after_; ++it) {
    max_started_ = std::max(max_started_, it);
    IterationRecord scratch;
    const bool record = it < total;
    run_iteration(e, record ? records_[static_cast<size_t>(e)][static_cast<size_t>(it)] : scratch, record);
    if (it == total - 1 && --measuring_ == 0) stop_after_ = max_started_;
  }
}

void Simulation::run_iteration(int e, IterationRecord& rec, bool record) {
  const auto& items = plan_.program(e).items;
  const std::vector<int>& ranks = ranks_[static_cast<size_t>(e)];
  rec.start_s = sg4::Engine::get_clock();
  std::vector<int> remaining(items.size());
  std::vector<double> started(items.size(), 0.0);
  std::set<int> ready_compute;
  std::map<int, std::unique_ptr<RankPart>> parts;
  InFlight in_flight;
  size_t done = 0;
  bool compute_busy = false;

  std::function<void(int)> make_ready;
  auto finish_item = [&](int i) {
    ++done;
    for (int d : dependents_[static_cast<size_t>(plan_.program_of[static_cast<size_t>(e)])][static_cast<size_t>(i)])
      if (--remaining[static_cast<size_t>(d)] == 0) make_ready(d);
  };
  auto finish_comm = [&](int i) {
    const plan::Item& item = items[static_cast<size_t>(i)];
    const plan::CollectiveInstance& ci = plan_.collectives[static_cast<size_t>(item.collective)];
    rec.collective_s[item.collective] += sg4::Engine::get_clock() - started[static_cast<size_t>(i)];
    if (record) add_trace(e, ci.label, plan::collective_purpose_name(ci.purpose), started[static_cast<size_t>(i)]);
    parts.erase(i);
    finish_item(i);
  };
  make_ready = [&](int i) {
    const plan::Item& item = items[static_cast<size_t>(i)];
    started[static_cast<size_t>(i)] = sg4::Engine::get_clock();
    if (item.kind == plan::Item::Kind::kCompute) {
      ready_compute.insert(i);
      return;
    }
    const plan::CollectiveInstance& ci = plan_.collectives.at(static_cast<size_t>(item.collective));
    const long run_id = collective_run_id(e, item, ranks[static_cast<size_t>(i)]);
    auto part = std::make_unique<RankPart>(plan_.schedules[static_cast<size_t>(ci.schedule)],
                                           index_[static_cast<size_t>(ci.schedule)], ranks[static_cast<size_t>(i)], run_id,
                                           step_costs(e), i);
    part->launch_ready(in_flight);
    const bool empty = part->done();
    parts[i] = std::move(part);
    if (empty) finish_comm(i);
  };

  for (size_t i = 0; i < items.size(); ++i) {
    remaining[i] = static_cast<int>(items[i].deps.size());
    if (remaining[i] == 0) make_ready(static_cast<int>(i));
  }
  while (done < items.size()) {
    if (!compute_busy && !ready_compute.empty()) {
      const int i = *ready_compute.begin();
      ready_compute.erase(ready_compute.begin());
      const double t = model_.op_time_s(items[static_cast<size_t>(i)].compute, processor_[static_cast<size_t>(e)]) *
                       faults_.slowdown(e);
      started[static_cast<size_t>(i)] = sg4::Engine::get_clock();
      in_flight.add(sg4::this_actor::exec_async(t * kTicksPerSecond), {i, -1, ActivityTag::What::kCompute});
      compute_busy = true;
    }
    ST_ASSERT(!in_flight.empty(), fmt::format("endpoint {}: items left but nothing in flight (deadlock)",
                                              plan_.endpoints[static_cast<size_t>(e)].name));
    const ActivityTag tag = in_flight.wait_any();
    if (tag.what == ActivityTag::What::kCompute) {
      compute_busy = false;
      const plan::ComputeOp& op = items[static_cast<size_t>(tag.owner)].compute;
      rec.phase_s[static_cast<size_t>(op.phase)] += sg4::Engine::get_clock() - started[static_cast<size_t>(tag.owner)];
      if (record) add_trace(e, plan::phase_name(op.phase), "compute", started[static_cast<size_t>(tag.owner)], op.layer);
      finish_item(tag.owner);
    } else {
      RankPart& part = *parts.at(tag.owner);
      part.on_complete(tag, in_flight);
      if (part.done()) finish_comm(tag.owner);
    }
  }
  rec.end_s = sg4::Engine::get_clock();
}

// The run id of the messages of the collective `item` that endpoint e (its rank `rank`) starts. A synchronous
// collective reuses its mailboxes every iteration: each carries one message per iteration, and a rank posts
// iteration i+1's message only after iteration i's was matched, so FIFO order keeps them apart. On-demand requests
// get fresh mailboxes (a server may still be finishing one when the next arrives): a new id, queued at every server.
long Simulation::collective_run_id(int e, const plan::Item& item, int rank) {
  const plan::CollectiveInstance& ci = plan_.collectives.at(static_cast<size_t>(item.collective));
  if (!ci.on_demand) return item.collective;
  ST_ASSERT(rank == 0, "on-demand collective " + ci.label + " started by a non-initiator");
  const long run_id = next_run_id_++;
  for (size_t r = 1; r < ci.participants.size(); ++r) {
    ServerQueue& q = queues_.at(ci.participants[r]);
    q.queue.push_back(Request{item.collective, run_id, e, static_cast<int>(r)});
    q.pending->release();
  }
  return run_id;
}

void Simulation::serve(int e) {
  ServerQueue& q = queues_.at(e);
  for (;;) {
    q.pending->acquire();
    const Request rq = q.queue.front();
    q.queue.pop_front();
    const plan::CollectiveInstance& ci = plan_.collectives[static_cast<size_t>(rq.collective)];
    const double start = sg4::Engine::get_clock();
    InFlight in_flight;
    RankPart part(plan_.schedules[static_cast<size_t>(ci.schedule)], index_[static_cast<size_t>(ci.schedule)],
                  rq.rank, rq.run_id, step_costs(e), 0);
    drive(part, in_flight);
    if (ci.has_serve_compute) {
      const double t = model_.op_time_s(ci.serve_compute, processor_[static_cast<size_t>(e)]);
      sg4::this_actor::execute(t * kTicksPerSecond);
    }
    int64_t& version = version_[{e, ci.layers}];
    if (ci.has_serve_compute) {
      auto it = pulled_.find({e, rq.collective});
      if (it != pulled_.end()) staleness_.push_back(static_cast<double>(version - it->second));
      ++version;
    }
    pulled_[{e, rq.collective}] = version;
    add_trace(e, ci.label + " (serve)", plan::collective_purpose_name(ci.purpose), start);
  }
}

report::PointResult Simulation::run() {
  for (size_t e = 0; e < plan_.endpoints.size(); ++e) {
    sg4::Host* host = platform_->host(vertex_[e]);
    const int ei = static_cast<int>(e);
    sg4::Actor::create(plan_.endpoints[e].name, host, [this, ei] { run_endpoint(ei); });
  }
  for (auto& [e, q] : queues_) {
    const int ei = e;
    sg4::Actor::create(plan_.endpoints[static_cast<size_t>(e)].name + "-serve",
                       platform_->host(vertex_[static_cast<size_t>(e)]), [this, ei] {
                         sg4::Actor::self()->daemonize();
                         try {
                           serve(ei);
                         } catch (const simgrid::Exception&) {
                           // the client of a request was killed at the end of the simulation
                         }
                       });
  }
  engine_->run();
  for (size_t e = 0; e < records_.size(); ++e)
    ST_ASSERT(records_[e].back().end_s >= 0.0,
              "simulation ended before endpoint " + plan_.endpoints[e].name + " finished (deadlock)");
  return collect();
}

report::PointResult Simulation::collect() const {
  report::PointResult r;
  r.gpus = plan_.workers;
  r.nodes = cluster_.nodes();
  r.plan_hash = hex64(plan_.hash());
  r.sync = plan_.sync == plan::SyncKind::kSync ? "sync" : plan_.sync == plan::SyncKind::kAsync ? "async" : "mixed_async";
  r.simulated_s = sg4::Engine::get_clock();
  const int w0 = options_.warmup - 1, last = options_.warmup + options_.iterations - 1;
  const double n = options_.iterations;
  auto end_of = [&](size_t e, int it) { return it < 0 ? 0.0 : records_[e][static_cast<size_t>(it)].end_s; };
  const std::vector<size_t> workers = worker_endpoints(plan_);
  size_t critical = workers.front();
  if (plan_.sync == plan::SyncKind::kSync) {
    const SyncWindow window = sync_window(workers, end_of, w0, last);
    critical = window.critical;
    r.iteration_s = (window.final_s - window.first_s) / n;
    r.images_per_sec = static_cast<double>(plan_.global_batch) / r.iteration_s;
  } else {
    double sum_t = 0.0, worst = -1.0;
    for (size_t e : workers) {
      const double t = (end_of(e, last) - end_of(e, w0)) / n;
      sum_t += t;
      r.images_per_sec += static_cast<double>(plan_.batch_per_worker) / t;
      if (t > worst) {
        worst = t;
        critical = e;
      }
    }
    r.iteration_s = sum_t / static_cast<double>(workers.size());
  }
  r.critical_worker = plan_.endpoints[critical].worker_index;
  std::map<int, double> coll_s;
  for (int it = options_.warmup; it <= last; ++it) {
    const IterationRecord& rec = records_[critical][static_cast<size_t>(it)];
    for (int ph = 0; ph < kPhases; ++ph) {
      r.compute_s += rec.phase_s[static_cast<size_t>(ph)] / n;
      if (rec.phase_s[static_cast<size_t>(ph)] > 0.0)
        r.phase_s[plan::phase_name(static_cast<plan::Phase>(ph))] += rec.phase_s[static_cast<size_t>(ph)] / n;
    }
    for (const auto& [c, sec] : rec.collective_s) coll_s[c] += sec / n;
  }
  for (const auto& [c, sec] : coll_s) {
    const plan::CollectiveInstance& ci = plan_.collectives[static_cast<size_t>(c)];
    r.collectives.push_back({ci.label, plan::collective_purpose_name(ci.purpose),
                             static_cast<double>(plan_.schedules[static_cast<size_t>(ci.schedule)].bytes()), sec});
  }
  const double own_iteration = plan_.sync == plan::SyncKind::kSync
                                   ? r.iteration_s
                                   : (end_of(critical, last) - end_of(critical, w0)) / n;
  r.exposed_comm_s = std::max(0.0, own_iteration - r.compute_s);
  if (!staleness_.empty()) {
    double sum = 0.0;
    for (double s : staleness_) {
      sum += s;
      r.staleness_max = std::max(r.staleness_max, s);
    }
    r.staleness_mean = sum / static_cast<double>(staleness_.size());
    r.staleness_samples = static_cast<int64_t>(staleness_.size());
  }
  for (const plan::Endpoint& ep : plan_.endpoints) r.tracks.push_back(ep.name);
  r.trace = trace_;
  return r;
}

}  // namespace

report::PointResult run_iteration_plan(const plan::IterationPlan& plan, const topology::Cluster& cluster,
                                       const Calibration& calibration, const RunOptions& options) {
  Simulation sim(plan, cluster, calibration, options);
  return sim.run();
}

}  // namespace scaletwin::sim
