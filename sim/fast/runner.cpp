// The fast mode's iteration runner (see runner.hpp): twin classes of endpoints, a discrete-event loop over
// compute items and collective rounds with fluid, max-min fair transfers, and the same bookkeeping as the
// message-level runner (iteration times, phases, collectives, critical worker).
#include "sim/fast/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <set>

#include "core/error.hpp"
#include "core/files.hpp"
#include "sim/compute_model.hpp"
#include "sim/fast/network.hpp"
#include "sim/fast/plan.hpp"
#include "sim/platform.hpp"

namespace scaletwin::sim {

bool fast_mode_supports(const plan::IterationPlan& plan) {
  return std::none_of(plan.collectives.begin(), plan.collectives.end(),
                      [](const plan::CollectiveInstance& c) { return c.on_demand; });
}

namespace {

using fast::DataflowAction;
using fast::FastPlan;

constexpr double kInf = std::numeric_limits<double>::infinity();

struct ClassState {
  int iteration = -1;
  std::vector<int> remaining;
  std::vector<double> started;
  std::set<int> ready_compute;
  size_t done = 0;
  bool busy = false;
};

// A collective in lockstep rounds.
struct Active {
  int collective = -1;
  int iteration = 0;
  size_t round = 0;
};

// A step-level collective (dataflow.hpp) and, per participant class, its ranks not done yet.
struct Run {
  int collective = -1;
  int iteration = 0;
  fast::DataflowRun run;
  std::map<int, int> ranks_left;  // class → ranks of the class not done
};

// What moves bytes in the network: a lockstep round (rank < 0: owner is an Active) or one flow of a Run.
struct Transfer {
  int owner = -1;
  int rank = -1, step = -1;  // the sender's step (flows)
  int pattern = -1;          // network pattern
  double bytes = 0.0;        // flows
  double fraction = 1.0;     // of the transfer still to move
  double transfer_s = 0.0;   // the whole transfer's duration at the current rates
  double left_s() const { return fraction * transfer_s; }
};

struct Event {
  double time;
  long seq;
  enum Kind { kComputeEnd, kPreEnd, kPostEnd, kStepTimer, kFlowLatencyEnd } kind;
  int id;         // class (compute), Active (rounds) or Run (steps)
  int item = -1;  // compute: the item; steps: the rank
  int step = -1, what = 0;
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

// A free slot of `slots` (reused from `free`, else appended).
template <typename T>
int take_slot(std::vector<T>& slots, std::vector<int>& free) {
  if (free.empty()) {
    slots.emplace_back();
    return static_cast<int>(slots.size()) - 1;
  }
  const int k = free.back();
  free.pop_back();
  return k;
}

class FastSimulation {
 public:
  FastSimulation(const plan::IterationPlan& plan, const topology::Cluster& cluster, const Calibration& calibration,
                 const RunOptions& options)
      : plan_(plan), options_(options), fp_(plan, cluster, calibration, options), total_(options.warmup + options.iterations) {
    ST_ASSERT(options.iterations >= 1 && options.warmup >= 0, "runner: at least one measured iteration");
    ST_ASSERT(fast_mode_supports(plan), "fast mode: on-demand collectives need the message-level runner");
    states_.resize(fp_.class_count());
    records_.assign(fp_.class_count(), std::vector<fast::IterationRecord>(static_cast<size_t>(total_)));
  }

  report::PointResult run();

 private:
  void start_iteration(int cls);
  void make_ready(int cls, int item);
  void finish_item(int cls, int item);
  void finish_collective_item(int cls, int c, int it);
  void try_compute(int cls);
  void start_collective(int c, int iteration);
  void start_round(int a);
  void begin_transfer(int a);
  void begin_post(int a);
  void arrive_steps(int cls, int c, int iteration);
  void apply(int r, const std::vector<DataflowAction>& actions);
  void finish_transfer(size_t k);
  void refresh_rates();
  void push(double t, Event::Kind kind, int id, int item = -1, int step = -1, int what = 0) {
    events_.push(Event{t, seq_++, kind, id, item, step, what});
  }

  const plan::IterationPlan& plan_;
  RunOptions options_;
  FastPlan fp_;
  int total_;
  double now_ = 0.0;
  long seq_ = 0;
  std::vector<ClassState> states_;
  std::vector<std::vector<fast::IterationRecord>> records_;
  std::map<std::pair<int, int>, int> arrived_;  // (collective, iteration) → participant classes arrived
  std::vector<Active> active_;
  std::vector<int> free_active_;
  std::map<std::pair<int, int>, int> run_of_;   // (collective, iteration) → Run
  std::vector<std::unique_ptr<Run>> runs_;
  std::vector<int> free_runs_;
  std::vector<Transfer> transfers_;
  bool rates_dirty_ = false;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<report::TraceEvent> trace_;
};

void FastSimulation::start_iteration(int cls) {
  ClassState& st = states_[static_cast<size_t>(cls)];
  ++st.iteration;
  if (st.iteration >= total_) return;
  const auto& items = fp_.items(cls);
  records_[static_cast<size_t>(cls)][static_cast<size_t>(st.iteration)].start_s = now_;
  st.remaining.resize(items.size());
  st.started.assign(items.size(), 0.0);
  st.done = 0;
  for (size_t i = 0; i < items.size(); ++i) st.remaining[i] = static_cast<int>(items[i].deps.size());
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].deps.empty()) make_ready(cls, static_cast<int>(i));
  if (items.empty()) {
    records_[static_cast<size_t>(cls)][static_cast<size_t>(st.iteration)].end_s = now_;
    start_iteration(cls);
  }
}

void FastSimulation::make_ready(int cls, int i) {
  ClassState& st = states_[static_cast<size_t>(cls)];
  const plan::Item& item = fp_.items(cls)[static_cast<size_t>(i)];
  st.started[static_cast<size_t>(i)] = now_;
  if (item.kind == plan::Item::Kind::kCompute) {
    st.ready_compute.insert(i);
    try_compute(cls);
    return;
  }
  if (fp_.dataflow(item.collective) != nullptr) {
    arrive_steps(cls, item.collective, st.iteration);
    return;
  }
  const auto key = std::make_pair(item.collective, st.iteration);
  if (++arrived_[key] == static_cast<int>(fp_.participants(item.collective).size())) {
    arrived_.erase(key);
    start_collective(item.collective, st.iteration);
  }
}

void FastSimulation::finish_item(int cls, int i) {
  ClassState& st = states_[static_cast<size_t>(cls)];
  ++st.done;
  for (int d : fp_.dependents(cls)[static_cast<size_t>(i)])
    if (--st.remaining[static_cast<size_t>(d)] == 0) make_ready(cls, d);
  if (st.done == fp_.items(cls).size()) {
    records_[static_cast<size_t>(cls)][static_cast<size_t>(st.iteration)].end_s = now_;
    start_iteration(cls);
  }
}

void FastSimulation::finish_collective_item(int cls, int c, int it) {
  int item = -1;
  for (const auto& [k, i] : fp_.participants(c))
    if (k == cls) item = i;
  ST_ASSERT(item >= 0, "fast mode: a class completed a collective it does not take part in");
  ClassState& st = states_[static_cast<size_t>(cls)];
  ST_ASSERT(st.iteration == it, "fast mode: a collective completed in another iteration than its items");
  auto& rec = records_[static_cast<size_t>(cls)][static_cast<size_t>(it)];
  rec.collective_s[c] += now_ - st.started[static_cast<size_t>(item)];
  if (options_.trace) {
    const plan::CollectiveInstance& ci = plan_.collectives[static_cast<size_t>(c)];
    trace_.push_back({fp_.representative(cls), ci.label, plan::collective_purpose_name(ci.purpose),
                      st.started[static_cast<size_t>(item)], now_});
  }
  finish_item(cls, item);
}

void FastSimulation::try_compute(int cls) {
  ClassState& st = states_[static_cast<size_t>(cls)];
  if (st.busy || st.ready_compute.empty()) return;
  const int i = *st.ready_compute.begin();
  st.ready_compute.erase(st.ready_compute.begin());
  st.started[static_cast<size_t>(i)] = now_;
  st.busy = true;
  push(now_ + fp_.compute_s(cls, i), Event::kComputeEnd, cls, i);
}

void FastSimulation::start_collective(int c, int iteration) {
  const int a = take_slot(active_, free_active_);
  active_[static_cast<size_t>(a)] = Active{c, iteration, 0};
  start_round(a);
}

void FastSimulation::start_round(int a) {
  Active& act = active_[static_cast<size_t>(a)];
  const fast::CollectiveRounds& rounds = fp_.rounds(act.collective);
  if (act.round >= rounds.rounds.size()) {
    // The collective is complete on every participant.
    const int c = act.collective, it = act.iteration;
    free_active_.push_back(a);
    for (const auto& [cls, item] : fp_.participants(c)) finish_collective_item(cls, c, it);
    return;
  }
  const double pre = fp_.pre_s(act.collective, act.round);
  if (pre > 0.0)
    push(now_ + pre, Event::kPreEnd, a);
  else
    begin_transfer(a);
}

void FastSimulation::begin_transfer(int a) {
  Active& act = active_[static_cast<size_t>(a)];
  if (!fp_.has_transfer(act.collective, act.round)) {
    begin_post(a);
    return;
  }
  Transfer t;
  t.owner = a;
  t.pattern = fp_.network_pattern(act.collective, act.round);
  transfers_.push_back(t);
  rates_dirty_ = true;
}

void FastSimulation::begin_post(int a) {
  Active& act = active_[static_cast<size_t>(a)];
  const double post = fp_.post_s(act.collective, act.round);
  if (post > 0.0) {
    push(now_ + post, Event::kPostEnd, a);
  } else {
    ++act.round;
    start_round(a);
  }
}

void FastSimulation::arrive_steps(int cls, int c, int iteration) {
  const auto key = std::make_pair(c, iteration);
  auto found = run_of_.find(key);
  int r;
  if (found != run_of_.end()) {
    r = found->second;
  } else {
    r = take_slot(runs_, free_runs_);
    runs_[static_cast<size_t>(r)] = std::make_unique<Run>(Run{c, iteration, fast::DataflowRun(*fp_.dataflow(c), fp_.dataflow_costs(c)), {}});
    const auto ranks = static_cast<int>(plan_.collectives[static_cast<size_t>(c)].participants.size());
    for (int k = 0; k < ranks; ++k) ++runs_[static_cast<size_t>(r)]->ranks_left[fp_.class_of_rank(c, k)];
    run_of_.emplace(key, r);
  }
  // The ranks of this class start their parts (twins: one class arrives for all of its endpoints).
  const auto ranks = static_cast<int>(plan_.collectives[static_cast<size_t>(c)].participants.size());
  std::vector<DataflowAction> actions;
  for (int k = 0; k < ranks; ++k)
    if (fp_.class_of_rank(c, k) == cls) runs_[static_cast<size_t>(r)]->run.activate(k, actions);
  apply(r, actions);
}

void FastSimulation::apply(int r, const std::vector<DataflowAction>& actions) {
  Run& run = *runs_[static_cast<size_t>(r)];
  const int c = run.collective;
  for (const DataflowAction& a : actions) {
    switch (a.kind) {
      case DataflowAction::kTimer: push(now_ + a.delay_s, Event::kStepTimer, r, a.rank, a.step, a.what); break;
      case DataflowAction::kTransfer: {
        const int pattern = fp_.flow_pattern(c, a.rank, a.peer);
        const double latency = fp_.network().max_latency_s(pattern);
        if (latency > 0.0 || a.bytes == 0.0) {
          push(now_ + latency, Event::kFlowLatencyEnd, r, a.rank, a.step, pattern);
          break;
        }
        transfers_.push_back(Transfer{r, a.rank, a.step, pattern, a.bytes});
        rates_dirty_ = true;
        break;
      }
      case DataflowAction::kRankDone: {
        const int cls = fp_.class_of_rank(c, a.rank);
        if (--run.ranks_left.at(cls) == 0) finish_collective_item(cls, c, run.iteration);
        break;
      }
    }
  }
  if (run.run.done() && run.collective >= 0) {
    run_of_.erase({run.collective, run.iteration});
    run.collective = -1;
    free_runs_.push_back(r);
  }
}

void FastSimulation::finish_transfer(size_t k) {
  const Transfer t = transfers_[k];
  transfers_[k] = transfers_.back();
  transfers_.pop_back();
  rates_dirty_ = true;
  if (t.rank < 0) {
    begin_post(t.owner);
    return;
  }
  std::vector<DataflowAction> actions;
  runs_[static_cast<size_t>(t.owner)]->run.on_flow_end(t.rank, t.step, actions);
  apply(t.owner, actions);
}

void FastSimulation::refresh_rates() {
  rates_dirty_ = false;
  std::vector<int> ids;
  ids.reserve(transfers_.size());
  for (const Transfer& t : transfers_) ids.push_back(t.pattern);
  const auto& rates = fp_.network().rates(ids);
  for (Transfer& t : transfers_) {
    const fast::FlowNetwork::PatternRates& pr = rates.at(t.pattern);
    if (t.rank >= 0) {
      t.transfer_s = t.bytes * pr.max_inverse_rate;
    } else {
      const Active& act = active_[static_cast<size_t>(t.owner)];
      t.transfer_s = fp_.transfer_s(act.collective, act.round, pr);
    }
  }
}

report::PointResult FastSimulation::run() {
  for (size_t cls = 0; cls < states_.size(); ++cls) start_iteration(static_cast<int>(cls));
  for (;;) {
    if (rates_dirty_) refresh_rates();
    double t_transfer = kInf;
    for (const Transfer& x : transfers_) t_transfer = std::min(t_transfer, now_ + x.left_s());
    const double t_event = events_.empty() ? kInf : events_.top().time;
    if (t_transfer == kInf && t_event == kInf) break;
    const double t = std::min(t_transfer, t_event);
    for (Transfer& x : transfers_)
      if (x.transfer_s > 0.0) x.fraction -= (t - now_) / x.transfer_s;
    now_ = std::max(now_, t);
    if (t_transfer <= t_event) {
      // Every transfer that is done (within rounding) ends now; at least the closest one.
      const double tolerance = 1e-15 * std::max(1.0, now_);
      size_t closest = 0;
      for (size_t k = 0; k < transfers_.size(); ++k)
        if (transfers_[k].left_s() < transfers_[closest].left_s()) closest = k;
      for (size_t k = 0; k < transfers_.size(); ++k)
        if (k == closest || transfers_[k].transfer_s == 0.0 || transfers_[k].left_s() <= tolerance)
          transfers_[k].fraction = -1.0;  // marked: finished below, from the back (finishing reorders and appends)
      for (size_t k = transfers_.size(); k-- > 0;)
        if (transfers_[k].fraction == -1.0) finish_transfer(k);
      continue;
    }
    const Event ev = events_.top();
    events_.pop();
    switch (ev.kind) {
      case Event::kComputeEnd: {
        const int cls = ev.id, i = ev.item;
        ClassState& st = states_[static_cast<size_t>(cls)];
        st.busy = false;
        const plan::ComputeOp& op = fp_.items(cls)[static_cast<size_t>(i)].compute;
        auto& rec = records_[static_cast<size_t>(cls)][static_cast<size_t>(st.iteration)];
        rec.phase_s[static_cast<size_t>(op.phase)] += now_ - st.started[static_cast<size_t>(i)];
        if (options_.trace)
          trace_.push_back({fp_.representative(cls), plan::phase_name(op.phase), "compute",
                            st.started[static_cast<size_t>(i)], now_, op.layer});
        finish_item(cls, i);
        try_compute(cls);
        break;
      }
      case Event::kPreEnd: begin_transfer(ev.id); break;
      case Event::kPostEnd:
        ++active_[static_cast<size_t>(ev.id)].round;
        start_round(ev.id);
        break;
      case Event::kStepTimer: {
        std::vector<DataflowAction> actions;
        runs_[static_cast<size_t>(ev.id)]->run.on_timer(ev.item, ev.step, ev.what, actions);
        apply(ev.id, actions);
        break;
      }
      case Event::kFlowLatencyEnd: {
        const plan::Schedule& s = fp_.dataflow(runs_[static_cast<size_t>(ev.id)]->collective)->schedule;
        const plan::Step& st = s.programs[static_cast<size_t>(ev.item)].steps[static_cast<size_t>(ev.step)];
        const auto bytes = static_cast<double>(st.length * s.element_bytes);
        if (bytes == 0.0) {
          std::vector<DataflowAction> actions;
          runs_[static_cast<size_t>(ev.id)]->run.on_flow_end(ev.item, ev.step, actions);
          apply(ev.id, actions);
        } else {
          transfers_.push_back(Transfer{ev.id, ev.item, ev.step, ev.what, bytes});
          rates_dirty_ = true;
        }
        break;
      }
    }
  }
  for (size_t cls = 0; cls < states_.size(); ++cls)
    ST_ASSERT(states_[cls].iteration >= total_,
              "fast simulation ended before endpoint " + plan_.endpoints[static_cast<size_t>(fp_.representative(static_cast<int>(cls)))].name +
                  " finished (deadlock)");
  report::PointResult r = fp_.collect(records_, now_);
  r.trace = std::move(trace_);
  return r;
}

}  // namespace

report::PointResult run_iteration_plan_fast(const plan::IterationPlan& plan, const topology::Cluster& cluster,
                                            const Calibration& calibration, const RunOptions& options) {
  FastSimulation sim(plan, cluster, calibration, options);
  return sim.run();
}

}  // namespace scaletwin::sim
