// The fit's fast model of the simulator: exact compute, linearised communication.
//
// Runs are grouped into configurations (same scenario, data kind and GPU count).
// For a configuration k simulated at a calibration c0 (message level, forked):
//
//   t_k(c) = C_k(c) + E_k + sum_j s_kj (log p_j(c) - log p_j(c0))         iteration time
//   C_k(c) = sum over the critical worker's compute ops of sim::ComputeModel(c).op_time_s(op) (data op included)
//   E_k    = t_sim_k(c0) - C_k(c0)                                           what is not the critical compute
//   s_kj   = (t_sim_k(c0 with p_j * e^h) - t_sim_k(c0)) / h                    one simulation per comm parameter
//   images/s = images/s_sim_k(c0) * t_sim_k(c0) / t_k(c)
//
// Runs that measured their phases (scaletwin run: compute and data per iteration) also give the phases' residuals:
// (C_k(c) without the data op - measured compute) / T_r and (data op - measured data) / T_r, T_r the measured
// iteration time, so that the compute efficiencies and the input cost are fitted to what each one measures, not
// only to their sum. Runs with parameter-server processes give none: where the servers share the workers' cores (the
// closed loop on this machine: two workers and a server on two cores) the workers' measured compute includes the
// servers' work, which the model charges to the servers (ps_cost_per_byte_s); their images/s still count.
//
// The compute part is the simulator's own compute model evaluated on the plan's ops, so it is exact as long as
// the critical worker's compute stream stays the critical path; the fit re-simulates (relinearises) a few times so
// that overlap and communication follow the parameters.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "calibrate/measurements.hpp"
#include "calibrate/parameters.hpp"
#include "plan/iteration_plan.hpp"
#include "sim/compute_model.hpp"

namespace scaletwin::calibrate {

class Surrogate {
 public:
  // Groups the runs and lowers each configuration's plan (no simulation yet).
  // `start`: the calibration the fit starts from; a device's parameters are its entry there, its own or its family's
  // (sim::Calibration::device_key), and Exercised names those entries.
  Surrogate(const std::vector<MeasuredRun>& runs, const sim::Calibration& start);

  const Exercised& exercised() const { return exercised_; }
  // Simulates every configuration at c and once more per communication parameter of `params`.
  void linearize(const sim::Calibration& c, const std::vector<Parameter>& params, int parallel);
  // Predicted images/s of every run (in the order given to the constructor) at calibration c.
  std::vector<double> predict(const sim::Calibration& c) const;
  // Per run with measured phases, two residuals (compute, then data) relative to its measured iteration time.
  std::vector<double> phase_residuals(const sim::Calibration& c) const;
  // Measured iteration time of run r implied by its images/s, for the linear compute-scale solve.
  double measured_iteration_s(size_t r) const;
  // The critical worker's compute time per iteration of run r at c, and what is not compute (E_k).
  double compute_s(size_t r, const sim::Calibration& c) const;
  double exposed_s(size_t r) const;
  int simulations() const { return simulations_; }
  size_t configurations() const { return configs_.size(); }

 private:
  struct Config {
    plan::Scenario scenario;
    int gpus = 1;
    // Per worker index: its distinct compute ops (alike in everything their time depends on) and how many times
    // each occurs; a ResNet repeats its blocks, and the fit evaluates every configuration thousands of times.
    std::vector<std::vector<std::pair<plan::ComputeOp, int>>> worker_ops;
    // Per worker index: the device with its co-runners and upload share (sim::note_co_runners, note_upload_links).
    std::vector<sim::Processor> worker_processors;
    sim::Processor processor;
    std::string model_name;  // for Calibration::for_model
    std::string stack;       // the run's software stack, for Calibration::for_run
    bool real = false;  // real data: the plan has a data op, charged the input cost
    int critical = 0;
    double base_iteration_s = 0.0;
    double base_images_per_sec = 0.0;
    double exposed_s = 0.0;
    std::vector<double> slope_s;  // per comm parameter
  };
  struct ComputeSplit {
    double total_s = 0.0;  // every compute op of the critical worker
    double data_s = 0.0;   // of which the data ops
  };
  ComputeSplit config_compute(const Config& k, const sim::Calibration& c) const;
  double config_compute_s(const Config& k, const sim::Calibration& c) const;  // config_compute().total_s

  std::vector<Config> configs_;
  std::vector<size_t> config_of_run_;
  std::vector<bool> real_;
  std::vector<double> measured_;
  std::vector<std::optional<std::pair<double, double>>> phases_;  // per run: measured compute, data per iteration
  Exercised exercised_;
  std::vector<Parameter> comm_;
  std::vector<double> comm_log0_;
  int simulations_ = 0;
};

}  // namespace scaletwin::calibrate
