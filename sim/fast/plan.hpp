// What the fast mode's event loop (runner.cpp) asks of a plan: twin classes of endpoints, per-class items
// and their compute times, the participants of each collective by class, the rounds of each collective and the
// times of their phases (latency, fluid transfer under the current combination, reductions and copies), and the
// final report::PointResult, computed as the message-level runner does.
//
// Twin classes: endpoints whose programs are identical item for item (kind, compute op, collective, deps), of the
// same kind on the same processor, behave identically once every collective starts when its last participant
// arrives and completes for all at once: the class is simulated once, by its first endpoint (representative).
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "plan/iteration_plan.hpp"
#include "sim/calibration.hpp"
#include "sim/compute_model.hpp"
#include "sim/fast/dataflow.hpp"
#include "sim/fast/network.hpp"
#include "report/report.hpp"
#include "sim/runner.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim::fast {

using plan::CollectiveRounds;
using plan::RankFlow;
using plan::Round;

struct IterationRecord {
  double start_s = 0.0;
  double end_s = -1.0;
  std::array<double, 6> phase_s{};
  std::map<int, double> collective_s;  // collective index -> launch-to-completion seconds
};

// The rounds of schedule `s` of `plan`: from its steps when materialized, else from its recipe (the generator's
// symbolic form where it has one, plan/rounds.hpp).
CollectiveRounds rounds_for_schedule(const plan::IterationPlan& plan, int s);

// Schedules up to this many ranks and steps, with rounds of few flows, run step by step (dataflow.hpp); larger
// ones, and those whose generator states that lockstep rounds are what its ranks do (lockstep_exact), in lockstep
// rounds.
constexpr size_t kDataflowMaxSteps = size_t{1} << 16;
constexpr int kDataflowMaxRanks = 64;
constexpr int kDataflowMaxFlowsPerRank = 4;  // in one round

// The schedule `s` of `plan` for a step-level run, or nullopt when it runs in lockstep rounds.
std::optional<plan::Schedule> dataflow_schedule(const plan::IterationPlan& plan, int s);

class FastPlan {
 public:
  FastPlan(const plan::IterationPlan& plan, const topology::Cluster& cluster, const Calibration& calibration,
           const RunOptions& options);
  FastPlan(const FastPlan&) = delete;  // the network keeps a reference to faults_

  size_t class_count() const { return representative_.size(); }
  int representative(int cls) const { return representative_[static_cast<size_t>(cls)]; }
  const std::vector<plan::Item>& items(int cls) const;
  const std::vector<std::vector<int>>& dependents(int cls) const { return dependents_[static_cast<size_t>(cls)]; }
  double compute_s(int cls, int item) const { return compute_s_[static_cast<size_t>(cls)][static_cast<size_t>(item)]; }
  // (class, item) of every participant class of collective c.
  const std::vector<std::pair<int, int>>& participants(int c) const { return participants_[static_cast<size_t>(c)]; }

  // Step-level runs (dataflow.hpp): the schedule of collective c when it runs step by step (else null), its
  // ranks' costs, the class of each rank, and the network pattern of one flow between two of its ranks.
  const DataflowSchedule* dataflow(int c);
  const DataflowCosts& dataflow_costs(int c);
  int class_of_rank(int c, int rank) const {
    return class_of_[static_cast<size_t>(plan_.collectives[static_cast<size_t>(c)].participants[static_cast<size_t>(rank)])];
  }
  int flow_pattern(int c, int src_rank, int dst_rank);
  FlowNetwork& network() { return network_; }
  // Lockstep rounds.
  const CollectiveRounds& rounds(int c);
  double pre_s(int c, size_t round);        // sender overhead + largest route latency (0 without transfers)
  bool has_transfer(int c, size_t round);
  double post_s(int c, size_t round);       // reductions and copies on the receivers
  int network_pattern(int c, size_t round) { return pattern_info(c, round_of(c, round).pattern).network_pattern; }
  // Transfer duration of a round at the rates its network pattern gets in the current combination.
  double transfer_s(int c, size_t round, const FlowNetwork::PatternRates& rates);

  report::PointResult collect(const std::vector<std::vector<IterationRecord>>& records, double now_s) const;
  size_t combinations_computed() const { return network_.combinations_computed(); }

 private:
  struct PatternInfo {
    int network_pattern = -1;
    double reduce_s_per_byte = 0.0;  // uniform rounds where every receiver reduces
  };
  void build_classes();
  const PatternInfo& pattern_info(int c, int pattern);
  const Round& round_of(int c, size_t round);

  const plan::IterationPlan& plan_;
  const topology::Cluster& cluster_;
  ComputeModel model_;
  RunOptions options_;
  AppliedFaults faults_;
  FlowNetwork network_;
  std::vector<int> vertex_;           // per endpoint
  std::vector<Processor> processor_;  // per endpoint
  std::vector<double> reduce_Bps_, copy_Bps_;  // per endpoint
  std::vector<int> class_of_;         // per endpoint
  std::vector<int> representative_;   // per class
  std::vector<std::vector<std::vector<int>>> dependents_;  // [class][item]
  std::vector<std::vector<double>> compute_s_;             // [class][item]
  std::vector<std::vector<std::pair<int, int>>> participants_;  // [collective]
  std::map<int, std::unique_ptr<CollectiveRounds>> rounds_by_schedule_;
  std::map<std::pair<int, int>, PatternInfo> pattern_info_;  // (collective, schedule pattern)
  // Rounds of one schedule that differ per flow (a byte or reduce table) repeat by the thousand in a composed
  // collective: their post-processing time per (collective, pattern, bytes, tables), and their transfer time per
  // (schedule, byte table, rates of the current combination and their memo generation), computed once.
  std::map<std::tuple<int, int, int64_t, int, bool, int>, double> post_s_;
  std::map<std::tuple<int, int, const FlowNetwork::PatternRates*, size_t>, double> table_transfer_s_;
  std::map<int, std::unique_ptr<DataflowSchedule>> dataflow_by_schedule_;  // null: lockstep rounds
  std::map<int, DataflowCosts> dataflow_costs_;                           // per collective
  std::map<std::pair<int, int>, int> flow_pattern_;                       // vertex pair → network pattern
};

}  // namespace scaletwin::sim::fast
