// The plan side of the fast mode (see plan.hpp): twin classes, per-class compute times, collective rounds and
// the times of their phases, and the report::PointResult as the message-level runner computes it.
#include "sim/fast/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <tuple>
#include <unordered_map>

#include "core/error.hpp"
#include "core/files.hpp"
#include "sim/platform.hpp"

namespace scaletwin::sim::fast {

namespace {

double rate_of(double seconds_per_byte) {
  return seconds_per_byte > 0.0 ? 1.0 / seconds_per_byte : std::numeric_limits<double>::infinity();
}

}  // namespace

FastPlan::FastPlan(const plan::IterationPlan& plan, const topology::Cluster& cluster, const Calibration& calibration,
                   const RunOptions& options)
    : plan_(plan), cluster_(cluster), model_(calibration, options.real_data), options_(options),
      faults_(options.faults, options.faults_file, cluster, plan), network_(cluster, calibration, faults_) {
  ST_ASSERT(plan.program_of.size() == plan.endpoints.size(), "plan: a program per endpoint");
  for (const plan::Endpoint& ep : plan.endpoints) {
    const bool gpu = ep.device >= 0;
    vertex_.push_back(gpu ? cluster.device_vertex(ep.node, ep.device) : cluster.cpu_vertex(ep.node));
    processor_.push_back(endpoint_processor(ep, cluster, options.arithmetic));
  }
  note_co_runners(processor_, plan);
  note_upload_links(processor_, plan, cluster);
  for (size_t e = 0; e < plan.endpoints.size(); ++e) {
    const bool server = plan.endpoints[e].kind == plan::EndpointKind::kServer;
    reduce_Bps_.push_back(rate_of(model_.reduce_time_s(1.0, processor_[e], server)));
    copy_Bps_.push_back(rate_of(model_.copy_time_s(1.0, processor_[e])));
  }
  build_classes();
}

void FastPlan::build_classes() {
  // Twins share the plan's program (lowering stores identical programs once), their kind, processor kind,
  // straggler slowdown (a straggler is a class of its own) and, with real data, their share of the upload route.
  std::map<std::tuple<int, int, bool, uint64_t, uint64_t>, int> class_of_key;
  class_of_.assign(plan_.endpoints.size(), -1);
  for (size_t e = 0; e < plan_.endpoints.size(); ++e) {
    const plan::Endpoint& ep = plan_.endpoints[e];
    const double upload = options_.real_data ? processor_[e].upload_Bps : 0.0;
    const auto key = std::make_tuple(plan_.program_of[e], static_cast<int>(ep.kind), ep.device >= 0,
                                     std::bit_cast<uint64_t>(faults_.slowdown(static_cast<int>(e))),
                                     std::bit_cast<uint64_t>(upload));
    const auto [it, fresh] = class_of_key.try_emplace(key, static_cast<int>(representative_.size()));
    class_of_[e] = it->second;
    if (fresh) representative_.push_back(static_cast<int>(e));
  }
  participants_.assign(plan_.collectives.size(), {});
  for (size_t cls = 0; cls < representative_.size(); ++cls) {
    const auto rep = static_cast<size_t>(representative_[cls]);
    const auto& items = plan_.program(static_cast<int>(rep)).items;
    std::vector<std::vector<int>> deps(items.size());
    std::vector<double> times(items.size(), 0.0);
    for (size_t i = 0; i < items.size(); ++i) {
      for (int d : items[i].deps) {
        ST_ASSERT(d >= 0 && static_cast<size_t>(d) < i, "plan: item deps must point to earlier items");
        deps[static_cast<size_t>(d)].push_back(static_cast<int>(i));
      }
      if (items[i].kind == plan::Item::Kind::kCompute)
        times[i] = model_.op_time_s(items[i].compute, processor_[rep]) * faults_.slowdown(static_cast<int>(rep));
      else
        participants_.at(static_cast<size_t>(items[i].collective)).push_back({static_cast<int>(cls), static_cast<int>(i)});
    }
    dependents_.push_back(std::move(deps));
    compute_s_.push_back(std::move(times));
  }
  for (size_t c = 0; c < plan_.collectives.size(); ++c) {
    const auto& ci = plan_.collectives[c];
    ST_ASSERT(static_cast<int>(ci.participants.size()) == plan_.schedules.at(static_cast<size_t>(ci.schedule)).ranks,
              "collective " + ci.label + ": participants");
    std::vector<int> classes;
    for (int e : ci.participants) classes.push_back(class_of_.at(static_cast<size_t>(e)));
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    ST_ASSERT(classes.size() == participants_[c].size(), "fast mode: twin classes disagree with collective " + ci.label);
  }
}

const std::vector<plan::Item>& FastPlan::items(int cls) const {
  return plan_.program(representative_[static_cast<size_t>(cls)]).items;
}

const CollectiveRounds& FastPlan::rounds(int c) {
  const int s = plan_.collectives[static_cast<size_t>(c)].schedule;
  auto it = rounds_by_schedule_.find(s);
  if (it == rounds_by_schedule_.end())
    it = rounds_by_schedule_.emplace(s, std::make_unique<CollectiveRounds>(rounds_for_schedule(plan_, s))).first;
  return *it->second;
}

const Round& FastPlan::round_of(int c, size_t round) { return rounds(c).rounds.at(round); }

const FastPlan::PatternInfo& FastPlan::pattern_info(int c, int pattern) {
  const auto key = std::make_pair(c, pattern);
  auto it = pattern_info_.find(key);
  if (it != pattern_info_.end()) return it->second;
  const auto& participants = plan_.collectives[static_cast<size_t>(c)].participants;
  const std::vector<RankFlow>& flows = rounds(c).patterns.at(static_cast<size_t>(pattern));
  std::vector<VertexFlow> vflows;
  vflows.reserve(flows.size());
  std::unordered_map<int, int> received;  // receiving rank → flows into it
  for (const auto& [src, dst] : flows) {
    vflows.push_back({vertex_[static_cast<size_t>(participants[static_cast<size_t>(src)])],
                      vertex_[static_cast<size_t>(participants[static_cast<size_t>(dst)])]});
    ++received[dst];
  }
  PatternInfo info;
  info.network_pattern = network_.add_pattern(vflows);
  // Concurrent reductions on one receiver share its kCores cores (SimGrid shares a host's cores among executions).
  for (const auto& [dst, count] : received) {
    const double rate = reduce_Bps_[static_cast<size_t>(participants[static_cast<size_t>(dst)])];
    info.reduce_s_per_byte = std::max(info.reduce_s_per_byte, std::max(1.0, count / static_cast<double>(kCores)) / rate);
  }
  return pattern_info_.emplace(key, info).first->second;
}

double FastPlan::pre_s(int c, size_t round) {
  const Round& r = round_of(c, round);
  if (r.pattern < 0) return 0.0;
  return model_.calibration().message_overhead_s + network_.max_latency_s(pattern_info(c, r.pattern).network_pattern);
}

bool FastPlan::has_transfer(int c, size_t round) { return round_of(c, round).pattern >= 0; }

double FastPlan::post_s(int c, size_t round) {
  const CollectiveRounds& rounds = this->rounds(c);
  const Round& r = round_of(c, round);
  if (r.pattern >= 0 && r.reduce_all && r.flow_bytes < 0 && r.copies.empty())
    return static_cast<double>(r.bytes) * pattern_info(c, r.pattern).reduce_s_per_byte;
  if (!r.reduce_all && r.reduce < 0 && r.copies.empty()) return 0.0;  // plain receives
  const auto key = std::make_tuple(c, r.pattern, r.bytes, r.flow_bytes, r.reduce_all, r.reduce);
  if (r.copies.empty()) {
    const auto memo = post_s_.find(key);
    if (memo != post_s_.end()) return memo->second;
  }
  const auto& participants = plan_.collectives[static_cast<size_t>(c)].participants;
  std::unordered_map<int, std::pair<double, double>> reduced;  // rank → (largest, total) bytes
  std::unordered_map<int, double> busy_s;                      // rank → copy seconds
  if (r.pattern >= 0) {
    const auto& flows = rounds.patterns[static_cast<size_t>(r.pattern)];
    for (size_t f = 0; f < flows.size(); ++f) {
      if (!rounds.reduces(r, f)) continue;
      auto& [largest, total] = reduced[flows[f].second];
      largest = std::max(largest, static_cast<double>(rounds.bytes_of(r, f)));
      total += static_cast<double>(rounds.bytes_of(r, f));
    }
  }
  for (const auto& [rank, bytes] : r.copies)
    busy_s[rank] += static_cast<double>(bytes) / copy_Bps_[static_cast<size_t>(participants[static_cast<size_t>(rank)])];
  for (const auto& [rank, lt] : reduced)
    busy_s[rank] += std::max(lt.first, lt.second / kCores) / reduce_Bps_[static_cast<size_t>(participants[static_cast<size_t>(rank)])];
  double post = 0.0;
  for (const auto& [rank, s] : busy_s) post = std::max(post, s);
  if (r.copies.empty()) post_s_.emplace(key, post);
  return post;
}

double FastPlan::transfer_s(int c, size_t round, const FlowNetwork::PatternRates& pr) {
  const Round& r = round_of(c, round);
  if (r.flow_bytes < 0) return static_cast<double>(r.bytes) * pr.max_inverse_rate;
  const int s = plan_.collectives[static_cast<size_t>(c)].schedule;
  const auto key = std::make_tuple(s, r.flow_bytes, &pr, network_.memo_generation());
  const auto memo = table_transfer_s_.find(key);
  if (memo != table_transfer_s_.end()) return memo->second;
  const std::vector<int64_t>& bytes = rounds(c).byte_tables[static_cast<size_t>(r.flow_bytes)];
  double t = 0.0;
  for (size_t f = 0; f < bytes.size(); ++f) t = std::max(t, static_cast<double>(bytes[f]) * pr.inverse_rate[f]);
  table_transfer_s_.emplace(key, t);
  return t;
}

const DataflowSchedule* FastPlan::dataflow(int c) {
  const int s = plan_.collectives[static_cast<size_t>(c)].schedule;
  auto it = dataflow_by_schedule_.find(s);
  if (it == dataflow_by_schedule_.end()) {
    std::optional<plan::Schedule> schedule = dataflow_schedule(plan_, s);
    it = dataflow_by_schedule_.emplace(s, schedule ? std::make_unique<DataflowSchedule>(std::move(*schedule)) : nullptr)
             .first;
  }
  return it->second.get();
}

const DataflowCosts& FastPlan::dataflow_costs(int c) {
  auto it = dataflow_costs_.find(c);
  if (it != dataflow_costs_.end()) return it->second;
  DataflowCosts costs;
  costs.message_overhead_s = model_.calibration().message_overhead_s;
  for (int e : plan_.collectives[static_cast<size_t>(c)].participants) {
    costs.reduce_s_per_byte.push_back(1.0 / reduce_Bps_[static_cast<size_t>(e)]);  // 1/inf = 0: free
    costs.copy_s_per_byte.push_back(1.0 / copy_Bps_[static_cast<size_t>(e)]);
  }
  return dataflow_costs_.emplace(c, std::move(costs)).first->second;
}

int FastPlan::flow_pattern(int c, int src_rank, int dst_rank) {
  const auto& participants = plan_.collectives[static_cast<size_t>(c)].participants;
  const int a = vertex_[static_cast<size_t>(participants[static_cast<size_t>(src_rank)])];
  const int b = vertex_[static_cast<size_t>(participants[static_cast<size_t>(dst_rank)])];
  auto it = flow_pattern_.find({a, b});
  if (it == flow_pattern_.end()) it = flow_pattern_.emplace(std::make_pair(a, b), network_.add_pattern({{a, b}})).first;
  return it->second;
}

}  // namespace scaletwin::sim::fast
