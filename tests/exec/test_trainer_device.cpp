// The training driver's device path (run --device cuda) without a GPU: TrainOptions' device hooks give each worker
// a recording "device" (a CPU backend behind a wrapper that counts host transfers) and a recording device
// communicator (the schedules run by an MPI ScheduleRunner on that memory, as NCCL would run them on a GPU's).
// What is checked is the wiring: which collectives go to the device communicator (the gradient all-reduces among
// all workers) and which are staged through host memory (parameter servers, a node's subset, the hybrid's
// all-gathers), that each worker gets its own device index, that parameter servers stay on the host, and that
// the weights still equal one rank's training on the same global batches. Tagged by rank count like
// test_trainer.cpp.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "exec/comm/comm.hpp"
#include "exec/cpu/cpu_backend.hpp"
#include "forwarding_backend.hpp"
#include "test_trainer_support.hpp"

namespace scaletwin::test {

namespace {

struct Record {
  std::vector<int> devices;                  // device index each make_device_backend call got
  std::map<std::string, int64_t> starts;     // device collectives started, by schedule name
  int64_t device_elements = 0;               // their elements, summed
  int64_t downloads = 0, uploads = 0;        // host transfers of the device backends
  int communicators = 0;
  int communicator_ranks = 0;
};

// A CPU backend whose memory stands for a GPU's; counts the host transfers (the staged collectives' and the
// network's own: batch upload, probabilities download).
class RecordingBackend : public ForwardingBackend {
 public:
  explicit RecordingBackend(Record& record)
      : ForwardingBackend(std::make_unique<exec::CpuBackend>(1)), record_(record) {}
  std::string name() const override { return "recording device over " + ForwardingBackend::name(); }
  void upload(float* dst, const float* src, int64_t n) override {
    ++record_.uploads;
    ForwardingBackend::upload(dst, src, n);
  }
  void download(float* dst, const float* src, int64_t n) override {
    ++record_.downloads;
    ForwardingBackend::download(dst, src, n);
  }

 private:
  Record& record_;
};

// The device communicator of the fake: a ScheduleRunner over the workers' communicator (collective to make), so
// schedule rank r is worker r as with NCCL; done() is the runner's test().
class RecordingCommunicator : public exec::DeviceCommunicator {
 public:
  RecordingCommunicator(Record& record, MPI_Comm workers) : record_(record), runner_(workers) {
    ++record_.communicators;
    record_.communicator_ranks = runner_.comm_size();
  }
  int rank() const override { return runner_.comm_rank(); }
  int ranks() const override { return runner_.comm_size(); }
  uint64_t start(const plan::Schedule& schedule, float* buffer) override {
    ++record_.starts[schedule.name];
    record_.device_elements += schedule.elements;
    handles_.push_back(runner_.start(schedule, buffer, exec::ElementType::kFloat32));
    return handles_.size() - 1;
  }
  uint64_t start_nccl_allreduce(float*, int64_t) override {
    FAIL("the trainer runs the plan's schedules, never the named baseline");
    return 0;
  }
  bool done(uint64_t handle) override { return runner_.test(handles_.at(handle)); }
  void wait(uint64_t handle) override { runner_.wait(handles_.at(handle)); }
  void wait_all() override { runner_.wait_all(); }

 private:
  Record& record_;
  exec::ScheduleRunner runner_;
  std::vector<exec::CollectiveHandle> handles_;
};

exec::TrainOptions device_options(Record& record) {
  exec::TrainOptions o = trainer_options();
  o.device = "cuda";
  o.make_device_backend = [&record](int device) {
    record.devices.push_back(device);
    return std::make_unique<RecordingBackend>(record);
  };
  o.make_device_communicator = [&record](exec::Backend&, MPI_Comm workers) {
    return std::make_unique<RecordingCommunicator>(record, workers);
  };
  return o;
}

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// Trains on the fake device and checks the weights against one rank on the CPU with the same global batches.
Record check_device_run(const plan::Scenario& scenario, int workers) {
  Record record;
  const exec::TrainResult run = exec::train(scenario, device_options(record), MPI_COMM_WORLD);
  const exec::TrainResult reference = reference_run(scenario, scenario.batch_per_gpu * workers);
  WeightDiff diff;
  if (run.worker) diff = compare_weights(run.weights, reference.weights, 1e-5);
  INFO("scheme " << scenario.scheme.describe() << ": max |difference| " << max_over_ranks(diff.max_abs));
  CHECK(sum_over_ranks(diff.compared) == 61706 * workers);
  CHECK(sum_over_ranks(diff.mismatches) == 0);
  if (run.worker) {
    CHECK(record.devices == std::vector<int>{world_rank()});  // one node: device = worker index
    CHECK(record.communicators == 1);
    CHECK(record.communicator_ranks == workers);
    if (world_rank() == 0) CHECK(run.run.at("backend").get<std::string>().find("recording device") == 0);
  } else {  // a parameter server computes on the host: no device, no device communicator
    CHECK(record.devices.empty());
    CHECK(record.communicators == 0);
  }
  return record;
}

Json ring(int64_t bucket_bytes) {
  return {{"name", "allreduce"}, {"algorithm", "ring"}, {"bucket_bytes", bucket_bytes}};
}

}  // namespace

TEST_CASE("trainer device path: gradient buckets among all workers go to the device communicator", "[np2]") {
  REQUIRE(exec::workers_for_ranks(trainer_scenario(ring(40000), 1, 2, 8), 2) == 2);
  // lenet5's gradients as three 40 kB buckets, 4 iterations: 12 device collectives per worker, every parameter
  // reduced once per iteration, nothing staged through the host for them.
  const Record r = check_device_run(trainer_scenario(ring(40000), 1, 2, 8), 2);
  int64_t starts = 0;
  for (const auto& [name, count] : r.starts) starts += count;
  CHECK(starts == 3 * 4);
  CHECK(r.device_elements == 61706 * 4);
}

namespace {

// A device that runs kLag behind its host: each mark is reached kLag after it is taken, as a GPU's stream reaches
// an event long after the host enqueued the work before it.
constexpr double kLag = 10.0;

class LaggingBackend : public RecordingBackend {
 public:
  using RecordingBackend::RecordingBackend;
  int64_t mark() override {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    times_.push_back(std::chrono::duration<double>(now).count() + kLag);
    return static_cast<int64_t>(times_.size()) - 1;
  }
  double mark_time_s(int64_t mark) override { return times_.at(static_cast<size_t>(mark)); }

 private:
  std::vector<double> times_;
};

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Its collectives run kLag later on the device than the host starts and sees them, and it says so (span_s).
class LaggingCommunicator : public RecordingCommunicator {
 public:
  using RecordingCommunicator::RecordingCommunicator;
  uint64_t start(const plan::Schedule& schedule, float* buffer) override {
    const uint64_t handle = RecordingCommunicator::start(schedule, buffer);
    started_[handle] = steady_now_s();
    return handle;
  }
  bool span_s(uint64_t handle, double* start_s, double* end_s) override {
    *start_s = started_.at(handle) + kLag;
    *end_s = steady_now_s() + kLag;
    return true;
  }

 private:
  std::map<uint64_t, double> started_;
};

}  // namespace

TEST_CASE("trainer device path: --trace times compute and collectives by the device and not the host clock", "[np2]") {
  Record record;
  exec::TrainOptions o = device_options(record);
  o.make_device_backend = [&record](int device) {
    record.devices.push_back(device);
    return std::make_unique<LaggingBackend>(record);
  };
  o.make_device_communicator = [&record](exec::Backend&, MPI_Comm workers) {
    return std::make_unique<LaggingCommunicator>(record, workers);
  };
  o.trace_iterations = 2;
  const exec::TrainResult run = exec::train(trainer_scenario(ring(40000), 1, 2, 8), o, MPI_COMM_WORLD);
  if (run.rank != 0) return;
  std::map<int, int> compute_spans, comm_spans;  // per rank
  for (const Json& e : run.trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    INFO(e.dump());
    // Every span of a worker, compute between marks and collectives as the communicator timed them, lies kLag
    // after the host's start of the traced iterations.
    CHECK(e.at("ts").get<double>() >= kLag * 1e6);
    if (e.at("cat") != "compute") {
      ++comm_spans[e.at("pid").get<int>()];
      continue;
    }
    CHECK(e.at("ts").get<double>() < (kLag + 60.0) * 1e6);
    CHECK(e.at("dur").get<double>() >= 0.0);
    ++compute_spans[e.at("pid").get<int>()];
  }
  // Two iterations of forward, backward (one span per gradient-ready layer and the rest) and update on each rank.
  CHECK(compute_spans.size() == 2);
  for (const auto& [rank, spans] : compute_spans) CHECK(spans >= 2 * 3);
  // The ring's buckets, twice, on each rank; the record's per-bucket means are the communicator's durations.
  CHECK(comm_spans.size() == 2);
  for (const auto& [rank, spans] : comm_spans) CHECK(spans == 2 * 3);
  for (const Json& c : run.run.at("collectives")) CHECK(c.at("seconds").get<double>() >= 0.0);
}

TEST_CASE("trainer device path: the hybrid's all-gathers and reduce-scatters are staged, its backbone buckets not",
          "[np2]") {
  const Json scheme = {{"name", "hybrid"}, {"data_parallel", ring(1 << 20)}};
  const Record r = check_device_run(trainer_scenario(scheme, 1, 2, 8), 2);
  // The backbone's buckets (the layers before the model-parallel classifier) go to the device, the head's
  // all-gathers and reduce-scatters through the host: fewer device elements per iteration than the whole model,
  // and more uploads than the network's own (batch and labels, per iteration).
  CHECK(r.device_elements > 0);
  CHECK(r.device_elements % 4 == 0);
  CHECK(r.device_elements / 4 < 61706);
  CHECK(r.uploads > 4 * 2);
}

TEST_CASE("trainer device path: a synchronous parameter server stays on the host, pushes and pulls are staged",
          "[np3]") {
  const Json scheme = {{"name", "ps"}, {"mode", "sync"}, {"servers", 1}};
  const Record r = check_device_run(trainer_scenario(scheme, 1, 2, 8), 2);
  if (world_rank() < 2) {
    CHECK(r.starts.empty());
    CHECK(r.downloads >= 4);  // at least one push per iteration went through host memory
  }
}

TEST_CASE("trainer device path: an asynchronous parameter server serves every staged push", "[np3]") {
  const Json scheme = {{"name", "ps"}, {"mode", "async"}, {"servers", 1}};
  plan::Scenario s = trainer_scenario(scheme, 1, 2, 8, 6);
  s.scheme.allreduce.bucket_bytes = 40000;  // three buckets, each pushed and pulled on its own
  Record r;
  const exec::TrainResult run = exec::train(s, device_options(r), MPI_COMM_WORLD);
  CHECK(run.staleness.pushes == 2 * 6 * 3);  // every worker's every bucket, every iteration
  CHECK(std::isfinite(run.final_train_loss));
  CHECK(r.starts.empty());
  if (run.worker) CHECK(r.downloads >= 6 * 3);  // each push left the device through the host
}

TEST_CASE("trainer device path: 4 ranks, the hierarchical all-reduce on the device, PS shards on the host",
          "[np4]") {
  SECTION("hierarchical all-reduce, 2 nodes of 2 workers: one composed schedule over all 4 workers per bucket") {
    const Json scheme = {{"name", "allreduce"}, {"algorithm", "hierarchical"}, {"bucket_bytes", 40000}};
    const Record r = check_device_run(trainer_scenario(scheme, 2, 2, 4), 4);
    int64_t starts = 0;
    for (const auto& [name, count] : r.starts) starts += count;
    CHECK(starts == 3 * 4);
    CHECK(r.device_elements == 61706 * 4);
  }
  SECTION("ps sync, 2 workers + 2 shards, local aggregation: the node's reduce and broadcast are staged") {
    const Json scheme = {{"name", "ps"}, {"servers", 2}, {"local_aggregation", true}};
    const Record r = check_device_run(trainer_scenario(scheme, 1, 2, 8), 2);
    CHECK(r.starts.empty());
    if (world_rank() < 2) CHECK(r.downloads >= 4);
  }
}

TEST_CASE("trainer device path: a run resumed from a checkpoint ends with the uninterrupted run's weights",
          "[np2]") {
  namespace fs = std::filesystem;
  int64_t id = getpid();
  MPI_Bcast(&id, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  const fs::path dir = fs::temp_directory_path() / ("scaletwin-device-checkpoint-" + std::to_string(id));
  const plan::Scenario scenario = trainer_scenario(ring(40000), 1, 2, 8);
  Record first, second;
  exec::TrainOptions uninterrupted = device_options(first);
  uninterrupted.checkpoint_every = 3;  // 4 iterations: the checkpoint left is iteration 3's
  uninterrupted.checkpoint_dir = dir.string();
  const exec::TrainResult a = exec::train(scenario, uninterrupted, MPI_COMM_WORLD);
  exec::TrainOptions resumed = device_options(second);
  resumed.resume_dir = dir.string();
  const exec::TrainResult b = exec::train(scenario, resumed, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    fs::remove_all(dir);
    CHECK(b.run.at("resumed_from_iteration").get<int64_t>() == 3);
  }
  CHECK(a.weights == b.weights);  // bit for bit
  int64_t starts = 0;
  for (const auto& [name, count] : second.starts) starts += count;
  CHECK(starts == 3 * 1);  // the resumed run did iteration 4 alone, its 3 buckets on the device
}

namespace {

// A layer kernel that hands every call to the CPU's and, on its `at`-th backward_weight call, writes a NaN into
// its weight gradient: a worker's gradients overflowing as fp16's would.
class PoisoningKernel : public exec::LayerKernel {
 public:
  PoisoningKernel(std::unique_ptr<exec::LayerKernel> inner, int at) : inner_(std::move(inner)), at_(at) {}
  void forward(const exec::LayerArgs& a) override { inner_->forward(a); }
  void backward_weight(const exec::LayerArgs& a) override {
    inner_->backward_weight(a);
    if (++calls_ == at_) a.d_weights[0] = std::nanf("");
  }
  void backward_input(const exec::LayerArgs& a) override { inner_->backward_input(a); }

 private:
  std::unique_ptr<exec::LayerKernel> inner_;
  int at_, calls_ = 0;
};

// The recording device whose first training convolution poisons its gradient at iteration `at` (0: never).
class PoisoningBackend : public RecordingBackend {
 public:
  PoisoningBackend(Record& record, int at) : RecordingBackend(record), at_(at) {}
  std::unique_ptr<exec::LayerKernel> make_layer(const exec::LayerDesc& desc) override {
    auto kernel = RecordingBackend::make_layer(desc);
    if (at_ == 0 || !desc.training || desc.layer->kind != models::LayerKind::kConv || poisoned_) return kernel;
    poisoned_ = true;
    return std::make_unique<PoisoningKernel>(std::move(kernel), at_);
  }

 private:
  int at_;
  bool poisoned_ = false;
};

}  // namespace

TEST_CASE("trainer device path: fp16 scales the loss and all workers skip a step whose gradients overflow on one",
          "[np2]") {
  plan::Scenario s = trainer_scenario(ring(40000), 1, 2, 8);  // 4 iterations
  const auto run_with = [&](plan::Precision precision, int poison_at_worker0) {
    s.training.precision = precision;
    Record record;
    exec::TrainOptions o = device_options(record);
    o.make_device_backend = [&record, poison_at_worker0](int device) {
      record.devices.push_back(device);
      return std::make_unique<PoisoningBackend>(record, device == 0 ? poison_at_worker0 : 0);
    };
    return exec::train(s, o, MPI_COMM_WORLD);
  };
  const exec::TrainResult fp32 = run_with(plan::Precision::kFp32, 0);
  SECTION("no overflow: the scale (a power of two) is taken out exactly, and the weights are fp32's bit for bit") {
    // The fake device computes in fp32, so what differs from fp32 is only the scaling: 2^16 on the loss, 2^-16
    // on the reduced gradients. Scaling by a power of two commutes with rounding, so a scale applied twice or
    // not taken out would show here.
    const exec::TrainResult fp16 = run_with(plan::Precision::kFp16, 0);
    CHECK(fp16.weights == fp32.weights);
    if (world_rank() == 0) {
      CHECK(fp16.run.at("precision") == "fp16");
      CHECK(fp16.run.at("loss_scaling").at("final_scale").get<double>() == 65536.0);
      CHECK(fp16.run.at("loss_scaling").at("skipped_steps").get<double>() == 0.0);
    }
  }
  SECTION("a NaN in worker 0's gradient at iteration 2: both workers skip that step and halve the scale") {
    const exec::TrainResult fp16 = run_with(plan::Precision::kFp16, 2);
    if (world_rank() == 0) {
      CHECK(fp16.run.at("loss_scaling").at("final_scale").get<double>() == 32768.0);
      CHECK(fp16.run.at("loss_scaling").at("skipped_steps").get<double>() == 1.0);
    }
    // Every worker skipped the same step: the replicas still agree, every weight finite, and they differ from
    // fp32's (one update fewer).
    std::vector<float> flat;
    for (const auto& layer : fp16.weights) flat.insert(flat.end(), layer.begin(), layer.end());
    CHECK(std::all_of(flat.begin(), flat.end(), [](float x) { return std::isfinite(x); }));
    std::vector<float> other(flat.size());
    const int peer = 1 - world_rank();
    MPI_Sendrecv(flat.data(), static_cast<int>(flat.size()), MPI_FLOAT, peer, 7, other.data(),
                 static_cast<int>(other.size()), MPI_FLOAT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(flat == other);
    CHECK(fp16.weights != fp32.weights);
  }
}

TEST_CASE("trainer device path: an fp16 run resumed from a checkpoint keeps its loss scale and ends with the "
          "uninterrupted run's weights", "[np2]") {
  namespace fs = std::filesystem;
  int64_t id = getpid();
  MPI_Bcast(&id, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  const fs::path dir = fs::temp_directory_path() / ("scaletwin-fp16-checkpoint-" + std::to_string(id));
  plan::Scenario s = trainer_scenario(ring(40000), 1, 2, 8);  // 4 iterations
  s.training.precision = plan::Precision::kFp16;
  Record first, second;
  exec::TrainOptions uninterrupted = device_options(first);
  uninterrupted.make_device_backend = [&first](int device) {  // worker 0 overflows at iteration 2
    first.devices.push_back(device);
    return std::make_unique<PoisoningBackend>(first, device == 0 ? 2 : 0);
  };
  uninterrupted.checkpoint_every = 3;
  uninterrupted.checkpoint_dir = dir.string();
  const exec::TrainResult a = exec::train(s, uninterrupted, MPI_COMM_WORLD);
  exec::TrainOptions resumed = device_options(second);  // iteration 4 alone: no overflow of its own
  resumed.resume_dir = dir.string();
  const exec::TrainResult b = exec::train(s, resumed, MPI_COMM_WORLD);
  CHECK(a.weights == b.weights);  // bit for bit: iteration 4 ran with the checkpoint's scale, 32768
  if (world_rank() == 0) {
    CHECK(b.run.at("resumed_from_iteration").get<int64_t>() == 3);
    CHECK(b.run.at("loss_scaling").at("final_scale").get<double>() == 32768.0);
    CHECK(b.run.at("loss_scaling").at("skipped_steps").get<double>() == 1.0);
  }
  // The checkpoint belongs to an fp16 run: resuming it in fp32 is refused (the plan, whose activations move at 2 bytes
  // a value in fp16, and the training settings differ).
  s.training.precision = plan::Precision::kFp32;
  int64_t refused = 0;
  try {
    exec::train(s, resumed, MPI_COMM_WORLD);
  } catch (const scaletwin::InputError& e) {
    const std::string what = e.what();
    refused = what.find("training settings") != std::string::npos || what.find("plan hash") != std::string::npos;
  }
  CHECK(sum_over_ranks(refused) == 2);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) fs::remove_all(dir);
}

TEST_CASE("trainer device path: fp16 with parameter servers is refused on every rank, bf16 is not", "[np3]") {
  plan::Scenario s = trainer_scenario({{"name", "ps"}, {"mode", "sync"}, {"servers", 1}}, 1, 2, 8, 2);
  Record record;
  s.training.precision = plan::Precision::kFp16;
  int64_t refused = 0;
  try {
    exec::train(s, device_options(record), MPI_COMM_WORLD);
  } catch (const scaletwin::InputError& e) {
    const std::string what = e.what();
    refused = what.find("/training/precision") != std::string::npos &&
              what.find("parameter servers") != std::string::npos;
  }
  CHECK(sum_over_ranks(refused) == 3);
  s.training.precision = plan::Precision::kBf16;  // no loss scaling: the servers' update is as in fp32
  const exec::TrainResult bf16 = exec::train(s, device_options(record), MPI_COMM_WORLD);
  if (world_rank() == 0) {
    CHECK(bf16.run.at("precision") == "bf16");
    CHECK_FALSE(bf16.run.contains("loss_scaling"));
  }
}

}  // namespace scaletwin::test
