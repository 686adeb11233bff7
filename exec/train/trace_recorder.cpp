// The per-rank span recorder of `run --trace` and its gathering into a Chrome trace on rank 0, and the per-label
// collective times of the run record (see trace_recorder.hpp): each rank serializes its spans or means as JSON text,
// rank 0 gathers the texts (MPI_Gatherv).
#include "exec/train/trace_recorder.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace scaletwin::exec {

namespace {

// Every rank's text, on rank 0 (empty elsewhere).
std::vector<std::string> gather_texts(const std::string& text, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  ST_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ST_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<size_t>(ranks)), offsets(static_cast<size_t>(ranks));
  ST_MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm));
  int total = 0;
  for (int r = 0; r < ranks; ++r) {
    offsets[static_cast<size_t>(r)] = total;
    total += lengths[static_cast<size_t>(r)];
  }
  std::string all(static_cast<size_t>(rank == 0 ? total : 0), '\0');
  ST_MPI_CHECK(MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm));
  std::vector<std::string> out;
  if (rank == 0)
    for (int r = 0; r < ranks; ++r)
      out.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                               static_cast<size_t>(lengths[static_cast<size_t>(r)])));
  return out;
}

}  // namespace

void TraceRecorder::begin_iteration(int64_t step, double now_s) {
  measuring_ = step >= first_;
  if (measuring_) ++measured_iterations_;
  active_ = measuring_ && step < first_ + count_;
  if (active_ && origin_s_ < 0.0) origin_s_ = now_s;
}

std::map<std::string, double> TraceRecorder::collective_means_s() const {
  std::map<std::string, double> out;
  if (measured_iterations_ == 0) return out;
  for (const auto& [label, total_s] : collective_total_s_)
    out[label] = total_s / static_cast<double>(measured_iterations_);
  return out;
}

void TraceRecorder::add(const std::string& name, const std::string& category, int track, double start_s,
                        double end_s) {
  if (active_) record(name, category, track, start_s, end_s);
}

void TraceRecorder::record(const std::string& name, const std::string& category, int track, double start_s,
                           double end_s, std::string layer) {
  spans_.push_back({name, category, track, start_s - origin_s_, std::max(end_s, start_s) - origin_s_, std::move(layer)});
}

void TraceRecorder::compute(plan::Phase phase, double start_s, double end_s) {
  add(plan::phase_name(phase), "compute", kTraceComputeTrack, start_s, end_s);
}

void TraceRecorder::compute_marks(plan::Phase phase, int64_t start_mark, int64_t end_mark, std::string layer) {
  if (active_) marked_.push_back({phase, start_mark, end_mark, std::move(layer)});
}

void TraceRecorder::resolve_marks(const std::function<double(int64_t)>& time_of) {
  for (const MarkedSpan& m : marked_)  // recorded while active: kept now that the traced iterations are over
    record(plan::phase_name(m.phase), "compute", kTraceComputeTrack, time_of(m.start_mark), time_of(m.end_mark),
           m.layer);
  marked_.clear();
}

void TraceRecorder::collective(const plan::CollectiveInstance& c, double start_s, double end_s) {
  if (measuring_) collective_total_s_[c.label] += std::max(0.0, end_s - start_s);
  add(c.label, plan::collective_purpose_name(c.purpose), kTraceCommTrack, start_s, end_s);
}

Json gather_chrome_trace(const TraceRecorder* recorder, MPI_Comm comm) {
  Json mine = Json::array();
  if (recorder != nullptr)
    for (const RecordedSpan& s : recorder->spans())
      mine.push_back({s.name, s.category, s.track, s.start_s, s.end_s, s.layer});
  const std::vector<std::string> texts = gather_texts(mine.dump(), comm);
  if (texts.empty()) return nullptr;  // not rank 0
  const int ranks = static_cast<int>(texts.size());
  Json events = Json::array();
  const char* track_names[] = {"compute", "communication"};
  for (int r = 0; r < ranks; ++r) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", r}, {"args", {{"name", fmt::format("rank {}", r)}}}});
    for (int t = 0; t < 2; ++t)
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", r}, {"tid", t}, {"args", {{"name", track_names[t]}}}});
    const Json spans = Json::parse(texts[static_cast<size_t>(r)]);
    for (const Json& s : spans) {
      const double start_s = s.at(3), end_s = s.at(4);
      Json event = {{"ph", "X"}, {"name", s.at(0)}, {"cat", s.at(1)}, {"pid", r}, {"tid", s.at(2)},
                    {"ts", start_s * 1e6}, {"dur", (end_s - start_s) * 1e6}};
      if (!s.at(5).get<std::string>().empty()) event["args"] = {{"layer", s.at(5)}};
      events.push_back(std::move(event));
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

report::CollectiveTimes gather_collective_means(const TraceRecorder& recorder, bool contribute,
                                                const plan::IterationPlan& plan, MPI_Comm comm) {
  const Json mine = contribute ? Json(recorder.collective_means_s()) : Json::object();
  const std::vector<std::string> texts = gather_texts(mine.dump(), comm);
  report::CollectiveTimes out;
  if (texts.empty()) return out;  // not rank 0
  std::map<std::string, std::pair<double, int>> sum;  // label → (sum of the ranks' means, ranks)
  for (const std::string& text : texts) {
    const Json means = Json::parse(text);
    for (const auto& [label, seconds] : means.items()) {
      auto& [total_s, ranks] = sum[label];
      total_s += seconds.get<double>();
      ++ranks;
    }
  }
  for (const plan::CollectiveInstance& c : plan.collectives) {  // a label shared by several collectives: once
    const auto it = sum.find(c.label);
    if (it != sum.end()) out[c.label] = it->second.first / it->second.second;
  }
  return out;
}

}  // namespace scaletwin::exec
