// The trace of `scaletwin run --trace FILE`: each rank records the timed spans of a bounded number of measured
// iterations (compute phases on track 0, its collectives on track 1) and rank 0 gathers them into a Chrome trace
// (Perfetto) with the event names and categories of `scaletwin predict --trace` (report/report.cpp chrome_trace):
// compute spans are named by plan::phase_name with category "compute" (a backward_weight span with the layer whose
// gradient is ready at its end as args.layer, as predict's compute events carry their layer's name), a collective by
// its plan label with its purpose (plan::collective_purpose_name) as category. One process per rank ("rank R"), timestamps in µs from the
// start of that rank's first recorded iteration.
//
// The same recorder times every collective of every measured iteration (from first_step on, traced or not) by its
// plan label: the run record's per-bucket "collectives" (gather_collective_means), which `scaletwin compare` joins
// with predict's collective labels.
//
// Granularity is what the executor observes: the forward pass is one "forward" span; the backward pass is cut at
// each gradient-ready point (a "backward_weight" span ends where a layer's weight gradient is ready, the rest after
// the last one is "backward_input"). Compute spans run between Backend::marks: on the CPU the host's clock, on a GPU
// CUDA events on the backend's stream, so a span is the device's time (put on the host's clock through one reference
// event the backend synchronises with once); batch assembly is host time; a collective starts when the engine
// starts it and ends where its pump sees it complete, except where the device communicator times it
// (DeviceCommunicator::span_s: NCCL's start and end events on the device, on the same clock).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "exec/comm/mpi_check.hpp"
#include "plan/iteration_plan.hpp"
#include "report/run_record.hpp"

namespace scaletwin::exec {

inline constexpr int kTraceComputeTrack = 0;
inline constexpr int kTraceCommTrack = 1;

struct RecordedSpan {
  std::string name;
  std::string category;
  int track = 0;
  double start_s = 0.0;  // from the start of the first recorded iteration
  double end_s = 0.0;
  std::string layer;  // a backward_weight span: the layer whose weight gradient is ready at its end ("": none)
};

class TraceRecorder {
 public:
  // Measures iterations from first_step on (the first after warm-up); records the spans of iterations
  // [first_step, first_step + count) (count 0: none, timing only).
  TraceRecorder(int64_t first_step, int64_t count) : first_(first_step), count_(count) {}
  // Called at the start of every iteration with the steady clock (exec::detail::now_s).
  void begin_iteration(int64_t step, double now_s);
  bool active() const { return active_; }
  // Per plan label, the mean seconds per measured iteration of this rank's collectives with that label (labels
  // repeated within an iteration add up, as compare adds them); empty before the first measured iteration.
  std::map<std::string, double> collective_means_s() const;
  // Absolute steady-clock times; ignored while not active.
  void add(const std::string& name, const std::string& category, int track, double start_s, double end_s);
  void compute(plan::Phase phase, double start_s, double end_s);
  // A compute span between two Backend::marks, timed by resolve_marks (ignored while not active).
  void compute_marks(plan::Phase phase, int64_t start_mark, int64_t end_mark, std::string layer = {});
  // Turns the spans between marks into spans, each mark at time_of(mark) on the steady clock (Backend::mark_time_s,
  // which on a GPU waits for the mark's event): called once the traced iterations are done, before gathering.
  void resolve_marks(const std::function<double(int64_t)>& time_of);
  void collective(const plan::CollectiveInstance& c, double start_s, double end_s);
  const std::vector<RecordedSpan>& spans() const { return spans_; }

 private:
  // Appends a span, absolute steady-clock times made relative to the first recorded iteration.
  void record(const std::string& name, const std::string& category, int track, double start_s, double end_s,
              std::string layer = {});

  int64_t first_, count_;
  bool active_ = false, measuring_ = false;
  int64_t measured_iterations_ = 0;
  double origin_s_ = -1.0;
  std::vector<RecordedSpan> spans_;
  struct MarkedSpan {
    plan::Phase phase;
    int64_t start_mark, end_mark;
    std::string layer;
  };
  std::vector<MarkedSpan> marked_;  // compute spans awaiting resolve_marks
  std::map<std::string, double> collective_total_s_;  // measured iterations, by plan label
};

// Collective over comm: every rank's spans (none for a null recorder) to rank 0, which gets the Chrome trace
// document {"traceEvents": [...], "displayTimeUnit": "ms"}; the other ranks get null.
Json gather_chrome_trace(const TraceRecorder* recorder, MPI_Comm comm);

// Collective over comm: the run record's "collectives" on rank 0 (empty elsewhere): for each of the plan's labels
// any contributing rank has, the mean over those ranks of their per-iteration mean seconds. Ranks pass
// contribute = false (parameter servers) to be left out.
report::CollectiveTimes gather_collective_means(const TraceRecorder& recorder, bool contribute,
                                                const plan::IterationPlan& plan, MPI_Comm comm);

}  // namespace scaletwin::exec
