// explore's space file, its candidates and how one candidate is evaluated (cli/explore.cpp runs them).
//
// A space ("scaletwin-space/1", docs/reference/explore.md) crosses candidate clusters (with a price per GPU-hour),
// GPU counts, schemes, batches per GPU and precisions; every combination is a candidate scenario. evaluate() predicts
// one as `predict` would at its GPU count (fast fidelity, the device's shipped calibration) and returns the result
// as JSON (what travels between ranks and into the checkpoint). Before any simulation, Bounds say what a candidate
// can never beat: whether its batch fits the device's memory, and for data-parallel all-reduce candidates the best
// time to target it could reach (every GPU at its one-GPU rate, no communication, no evaluation time), so that
// explore skips a candidate that an evaluated one already beats in time and cost.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/json_reader.hpp"
#include "plan/scenario.hpp"
#include "sim/calibration.hpp"

namespace scaletwin::cli {

// The most candidates a space may cross: 100,000 (hours on one rank; its checkpoint stays within the input cap).
inline constexpr double kMaxCandidates = 1e5;

struct ClusterChoice {
  std::string cluster;
  double price_per_gpu_hour = 0.0;  // 0: not priced (cost not known)
  std::string price_source;
};

struct Space {
  std::string file, name;
  Json model, framework, training;
  std::vector<ClusterChoice> clusters;
  std::vector<int> gpus;
  std::vector<Json> schemes;
  std::vector<int64_t> batches;
  std::vector<std::string> precisions;
  std::string objective = "time";
  int max_gpus = 0;
  double max_cost = 0.0, max_time_s = 0.0;
  uint64_t hash = 0;  // of the file's JSON (a checkpoint belongs to one space)
};

struct Candidate {
  Json scenario;  // the scenario file it is
  std::string label, cluster, scheme, precision;
  size_t cluster_index = 0, scheme_index = 0;
  int gpus = 0;
  int64_t batch_per_gpu = 0;
  double price_per_gpu_hour = 0.0;
  enum class Pruned { kNo, kCannotFit, kDominated, kCannotRun };
  Pruned pruned_as = Pruned::kNo;  // why it has no simulated figures
  std::string pruned;              // the reason in words ("" when simulated)
  bool simulated() const { return pruned_as == Pruned::kNo; }
  double images_per_sec = 0.0, time_s = 0.0, time_low_s = 0.0, time_high_s = 0.0, epochs = 0.0;
  double cost = 0.0, cost_low = 0.0, cost_high = 0.0;  // dollars (0: not priced)
  double least_time_s = 0.0;  // its best case (Evaluator::least_time_s; 0: none, or not computed under --exhaustive)
  bool frontier = false, within_caps = true, from_checkpoint = false;
};

// Reads and checks a space file: InputError naming the field otherwise (an empty list, a bad value, no target).
Space read_space(const std::string& path);

// Every combination, as the scenario JSON `predict` would read (GPUs per node: the cluster's own).
std::vector<Candidate> candidates_of(const Space& s);

// The evaluation of candidates on one rank, with what candidates share cached: the shipped calibration of each
// device, the memory bound of each cluster, batch, precision and scheme, and the one-GPU rate behind the bounds.
class Evaluator {
 public:
  explicit Evaluator(const Space& space) : space_(space) {}

  // Why the candidate is not simulated at all ("" when it is): more GPUs than max_gpus, a batch that does not fit.
  std::string cannot_fit(const Candidate& x);
  // The least time to target (s) the candidate could reach, or none where no such bound holds (parameter servers,
  // whose one-GPU run already talks to a server, and the hybrid scheme, whose GPUs each compute a share of the
  // fully connected layers): one GPU's rate times the GPUs, the same epochs, no evaluation or per-epoch overhead.
  std::optional<double> least_time_s(const Candidate& x);
  // Predicts the candidate: {"label", "images_per_sec", "time_s", "time_interval_s": [lo, hi], "epochs"} or
  // {"label", "cannot_run": why} where the simulator refuses it (a precision the device lacks, a scheme that cannot
  // be lowered at that GPU count).
  Json evaluate(const Candidate& x);

 private:
  const sim::ChosenCalibration& calibration_for(const std::string& device_name, const std::string& family);

  // What candidates of one cluster, scheme, batch and precision share (their GPU counts differ), read once.
  struct Setup {
    plan::Scenario scenario;                       // at one GPU, without evaluations or per-epoch overheads
    std::optional<std::string> unfit;              // cannot_fit's answer, once asked
    std::optional<double> one_gpu_images_per_sec;  // once asked; 0: no bound (not all-reduce, or it cannot run)
  };
  Setup& setup_of(const Candidate& x);

  const Space& space_;
  std::map<std::string, sim::ChosenCalibration> calibrations_;
  std::map<std::tuple<size_t, size_t, int64_t, std::string>, Setup> setups_;  // cluster, scheme, batch, precision
};

// Fills a candidate's figures from evaluate()'s JSON (cost from the price); the label must match.
void apply_result(const Space& s, const Json& result, Candidate& x);

// The --html page: the Pareto chart, the frontier's table and the prices (cli/explore_html.cpp).
std::string explore_html(const Space& s, const std::vector<Candidate>& all, const Candidate* best, const Json& counts);

}  // namespace scaletwin::cli
