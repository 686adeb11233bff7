// The schedule interpreter (see interpreter.hpp): static matching of sends and receives, the per-rank state
// machine, and the standalone run on the contention-free platform used by the oracle tests.
#include "sim/interpreter.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "sim/platform.hpp"

namespace scaletwin::sim {

void InFlight::add(sg4::ActivityPtr a, ActivityTag t) {
  activities.push_back(std::move(a));
  tags.push_back(t);
}

ActivityTag InFlight::wait_any() {
  const ssize_t i = sg4::Activity::wait_any(activities);
  ST_ASSERT(i >= 0, "wait_any returned no activity");
  const auto k = static_cast<size_t>(i);
  ActivityTag tag = tags[k];
  activities[k] = std::move(activities.back());
  activities.pop_back();
  tags[k] = tags.back();
  tags.pop_back();
  return tag;
}

sg4::Mailbox* step_mailbox(long run_id, int rank, int step) {
  return sg4::Mailbox::by_name(fmt::format("{}:{}:{}", run_id, rank, step));
}

RankPart::RankPart(const plan::Schedule& schedule, const ScheduleIndex& index, int rank, long run_id,
                   const StepCosts& costs, int owner)
    : schedule_(schedule), index_(index), steps_(schedule.programs.at(static_cast<size_t>(rank)).steps), rank_(rank),
      run_id_(run_id), costs_(costs), owner_(owner) {
  remaining_deps_.resize(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    remaining_deps_[i] = static_cast<int>(steps_[i].deps.size());
    if (remaining_deps_[i] == 0) ready_.push_back(static_cast<int>(i));
  }
}

double RankPart::step_bytes(int step) const {
  return static_cast<double>(steps_[static_cast<size_t>(step)].length * schedule_.element_bytes);
}

void RankPart::launch_ready(InFlight& in_flight) {
  while (!ready_.empty()) {
    const int step = ready_.back();
    ready_.pop_back();
    start(step, in_flight);
  }
}

void RankPart::start(int step, InFlight& in_flight) {
  const plan::Step& st = steps_[static_cast<size_t>(step)];
  switch (st.op) {
    case plan::OpKind::kSend:
      if (costs_.message_overhead_s > 0.0)
        in_flight.add(sg4::this_actor::exec_async(costs_.message_overhead_s * kTicksPerSecond),
                      {owner_, step, ActivityTag::What::kOverhead});
      else
        post_send(step, in_flight);
      break;
    case plan::OpKind::kRecv:
    case plan::OpKind::kRecvReduce: {
      const int send = index_.send_step_of_recv[static_cast<size_t>(rank_)][static_cast<size_t>(step)];
      in_flight.add(step_mailbox(run_id_, st.peer, send)->get_async(&received_), {owner_, step, ActivityTag::What::kRecv});
      break;
    }
    case plan::OpKind::kCopy: {
      const double t = std::isinf(costs_.copy_Bps) ? 0.0 : step_bytes(step) / costs_.copy_Bps;
      if (t > 0.0)
        in_flight.add(sg4::this_actor::exec_async(t * kTicksPerSecond), {owner_, step, ActivityTag::What::kCopy});
      else
        complete(step);
      break;
    }
  }
}

void RankPart::post_send(int step, InFlight& in_flight) {
  const auto bytes = static_cast<uint64_t>(step_bytes(step));
  in_flight.add(step_mailbox(run_id_, rank_, step)->put_async(&payload_, bytes), {owner_, step, ActivityTag::What::kSend});
}

void RankPart::on_complete(const ActivityTag& tag, InFlight& in_flight) {
  switch (tag.what) {
    case ActivityTag::What::kOverhead: post_send(tag.step, in_flight); break;
    case ActivityTag::What::kRecv: {
      const double t = steps_[static_cast<size_t>(tag.step)].op == plan::OpKind::kRecvReduce
                           && !std::isinf(costs_.reduce_Bps)
                           ? step_bytes(tag.step) / costs_.reduce_Bps
                           : 0.0;
      if (t > 0.0)
        in_flight.add(sg4::this_actor::exec_async(t * kTicksPerSecond), {owner_, tag.step, ActivityTag::What::kReduce});
      else
        complete(tag.step);
      break;
    }
    default: complete(tag.step); break;
  }
  launch_ready(in_flight);
}

void RankPart::complete(int step) {
  ++completed_;
  for (int d : index_.dependents[static_cast<size_t>(rank_)][static_cast<size_t>(step)])
    if (--remaining_deps_[static_cast<size_t>(d)] == 0) ready_.push_back(d);
}

std::vector<double> run_schedule_contention_free(const plan::Schedule& schedule, double latency_s,
                                                 double bandwidth_Bps, const StepCosts& costs) {
  auto engine = make_engine();
  const std::vector<sg4::Host*> hosts = build_contention_free_platform(schedule.ranks, latency_s, bandwidth_Bps);
  const ScheduleIndex index = index_schedule(schedule);
  std::vector<double> finish(static_cast<size_t>(schedule.ranks), 0.0);
  for (int r = 0; r < schedule.ranks; ++r) {
    sg4::Actor::create(fmt::format("rank{}", r), hosts[static_cast<size_t>(r)], [&, r] {
      InFlight in_flight;
      RankPart part(schedule, index, r, 0, costs, 0);
      part.launch_ready(in_flight);
      while (!part.done()) part.on_complete(in_flight.wait_any(), in_flight);
      finish[static_cast<size_t>(r)] = sg4::Engine::get_clock();
    });
  }
  engine->run();
  return finish;
}

}  // namespace scaletwin::sim
