// The fast mode's iteration runner (see fast_runner.hpp): twin classes of endpoints, a discrete-event loop over
// compute items and collective rounds with fluid, max-min fair transfers, and the same bookkeeping as the
// message-level runner (iteration times, phases, collectives, critical worker).
#include "sim/fast_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <set>

#include "core/error.hpp"
#include "core/files.hpp"
#include "sim/compute_model.hpp"
#include "sim/fast_network.hpp"
#include "sim/fast_plan.hpp"
#include "sim/platform.hpp"

namespace scaletwin::sim {

bool fast_mode_supports(const plan::IterationPlan& plan) {
  return std::none_of(plan.collectives.begin(), plan.collectives.end(),
                      [](const plan::CollectiveInstance& c) { return c.on_demand; });
}

namespace {

using fast::ActiveKey;
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

struct Active {
  int collective = -1;
  int iteration = 0;
  size_t round = 0;
  double fraction = 1.0;     // of the current transfer still to move
  double transfer_s = 0.0;   // the whole transfer's duration at the current rates
  bool transferring = false;
};

struct Event {
  double time;
  long seq;
  enum Kind { kComputeEnd, kPreEnd, kPostEnd } kind;
  int id;        // class (compute) or active collective
  int item = -1;  // compute: the item
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

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

  PointResult run();

 private:
  void start_iteration(int cls);
  void make_ready(int cls, int item);
  void finish_item(int cls, int item);
  void try_compute(int cls);
  void start_collective(int c, int iteration);
  void start_round(int a);
  void begin_transfer(int a);
  void begin_post(int a);
  void refresh_rates();
  void push(double t, Event::Kind kind, int id, int item = -1) { events_.push(Event{t, seq_++, kind, id, item}); }

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
  std::vector<int> transferring_;
  bool rates_dirty_ = false;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<TraceEvent> trace_;
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
  int a;
  if (!free_active_.empty()) {
    a = free_active_.back();
    free_active_.pop_back();
  } else {
    a = static_cast<int>(active_.size());
    active_.emplace_back();
  }
  active_[static_cast<size_t>(a)] = Active{c, iteration, 0, 1.0, 0.0, false};
  start_round(a);
}

void FastSimulation::start_round(int a) {
  Active& act = active_[static_cast<size_t>(a)];
  const fast::CollectiveRounds& rounds = fp_.rounds(act.collective);
  if (act.round >= rounds.rounds.size()) {
    // The collective is complete on every participant.
    const int c = act.collective, it = act.iteration;
    free_active_.push_back(a);
    for (const auto& [cls, item] : fp_.participants(c)) {
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
  act.transferring = true;
  act.fraction = 1.0;
  transferring_.push_back(a);
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

void FastSimulation::refresh_rates() {
  rates_dirty_ = false;
  std::vector<ActiveKey> keys;
  for (int a : transferring_) keys.push_back({active_[static_cast<size_t>(a)].collective, active_[static_cast<size_t>(a)].round});
  const std::vector<double> durations = fp_.transfer_s(keys);
  for (size_t k = 0; k < transferring_.size(); ++k) active_[static_cast<size_t>(transferring_[k])].transfer_s = durations[k];
}

PointResult FastSimulation::run() {
  for (size_t cls = 0; cls < states_.size(); ++cls) start_iteration(static_cast<int>(cls));
  for (;;) {
    if (rates_dirty_) refresh_rates();
    double t_transfer = kInf;
    for (int a : transferring_) {
      const Active& act = active_[static_cast<size_t>(a)];
      t_transfer = std::min(t_transfer, now_ + act.fraction * act.transfer_s);
    }
    const double t_event = events_.empty() ? kInf : events_.top().time;
    if (t_transfer == kInf && t_event == kInf) break;
    const double t = std::min(t_transfer, t_event);
    for (int a : transferring_) {
      Active& act = active_[static_cast<size_t>(a)];
      if (act.transfer_s > 0.0) act.fraction -= (t - now_) / act.transfer_s;
    }
    now_ = std::max(now_, t);
    if (t_transfer <= t_event) {
      std::vector<int> finished;
      for (int a : transferring_) {
        const Active& act = active_[static_cast<size_t>(a)];
        if (act.transfer_s == 0.0 || act.fraction * act.transfer_s <= 1e-15 * std::max(1.0, now_)) finished.push_back(a);
      }
      if (finished.empty()) {  // rounding: finish the closest one
        finished.push_back(*std::min_element(transferring_.begin(), transferring_.end(), [&](int x, int y) {
          return active_[static_cast<size_t>(x)].fraction * active_[static_cast<size_t>(x)].transfer_s <
                 active_[static_cast<size_t>(y)].fraction * active_[static_cast<size_t>(y)].transfer_s;
        }));
      }
      for (int a : finished) {
        transferring_.erase(std::find(transferring_.begin(), transferring_.end(), a));
        active_[static_cast<size_t>(a)].transferring = false;
        rates_dirty_ = true;
        begin_post(a);
      }
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
                            st.started[static_cast<size_t>(i)], now_});
        finish_item(cls, i);
        try_compute(cls);
        break;
      }
      case Event::kPreEnd: begin_transfer(ev.id); break;
      case Event::kPostEnd:
        ++active_[static_cast<size_t>(ev.id)].round;
        start_round(ev.id);
        break;
    }
  }
  for (size_t cls = 0; cls < states_.size(); ++cls)
    ST_ASSERT(states_[cls].iteration >= total_,
              "fast simulation ended before endpoint " + plan_.endpoints[static_cast<size_t>(fp_.representative(static_cast<int>(cls)))].name +
                  " finished (deadlock)");
  PointResult r = fp_.collect(records_, now_);
  r.trace = std::move(trace_);
  return r;
}

}  // namespace

PointResult run_iteration_plan_fast(const plan::IterationPlan& plan, const topology::Cluster& cluster,
                                    const Calibration& calibration, const RunOptions& options) {
  FastSimulation sim(plan, cluster, calibration, options);
  return sim.run();
}

}  // namespace scaletwin::sim
