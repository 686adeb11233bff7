// The trace of `scaletwin run --trace FILE`: each rank records the timed spans of a bounded number of measured
// iterations (compute phases on track 0, its collectives on track 1) and rank 0 gathers them into a Chrome trace
// (Perfetto) with the event names and categories of `scaletwin predict --trace` (sim/report.cpp chrome_trace):
// compute spans are named by plan::phase_name with category "compute", a collective by its plan label with its
// purpose (plan::collective_purpose_name) as category. One process per rank ("rank R"), timestamps in µs from the
// start of that rank's first recorded iteration.
//
// Granularity is what the executor observes: the forward pass is one "forward" span; the backward pass is cut at
// each gradient-ready point (a "backward_weight" span ends where a layer's weight gradient is ready, the rest after
// the last one is "backward_input"); a collective ends where the engine's pump sees it complete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "exec/mpi_check.hpp"
#include "plan/iteration_plan.hpp"

namespace scaletwin::exec {

inline constexpr int kTraceComputeTrack = 0;
inline constexpr int kTraceCommTrack = 1;

struct RecordedSpan {
  std::string name;
  std::string category;
  int track = 0;
  double start_s = 0.0;  // from the start of the first recorded iteration
  double end_s = 0.0;
};

class TraceRecorder {
 public:
  // Records iterations [first_step, first_step + count).
  TraceRecorder(int64_t first_step, int64_t count) : first_(first_step), count_(count) {}
  // Called at the start of every iteration with the steady clock (exec::detail::now_s).
  void begin_iteration(int64_t step, double now_s);
  bool active() const { return active_; }
  // Absolute steady-clock times; ignored while not active.
  void add(const std::string& name, const std::string& category, int track, double start_s, double end_s);
  void compute(plan::Phase phase, double start_s, double end_s);
  void collective(const plan::CollectiveInstance& c, double start_s, double end_s);
  const std::vector<RecordedSpan>& spans() const { return spans_; }

 private:
  int64_t first_, count_;
  bool active_ = false;
  double origin_s_ = -1.0;
  std::vector<RecordedSpan> spans_;
};

// Collective over comm: every rank's spans (none for a null recorder) to rank 0, which gets the Chrome trace
// document {"traceEvents": [...], "displayTimeUnit": "ms"}; the other ranks get null.
Json gather_chrome_trace(const TraceRecorder* recorder, MPI_Comm comm);

}  // namespace scaletwin::exec
