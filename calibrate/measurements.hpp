// The measurements file (../shared/spec.md, "Measurements file"): measured training runs, the input of
// `calibrate` and `validate` and the output of `run`.
//
// Strict where it matters and tolerant where the spec asks: "format" must be "scaletwin-measurements/1", every
// field a run needs (id, cluster, model, nodes, gpus_per_node, batch_per_gpu, scheme, images_per_sec) is checked
// for type and range, and every error names the file and the JSON path (/runs/3/scheme/servers). Fields nobody
// reads (loss, per-rank figures, notes) are kept in MeasuredRun::raw and ignored. Cluster and model paths are
// relative to the measurements file; built-in names stay names.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "plan/scenario.hpp"
#include "report/run_record.hpp"

namespace scaletwin::calibrate {

struct MeasuredRun {
  std::string id;
  std::string source;
  std::string cluster;  // built-in name, or a path resolved against the measurements file
  // A run without "cluster" that names its machine by system and device (calibrate/systems.hpp): the synthesized
  // cluster's file JSON where no built-in one fits (its name is `cluster`).
  std::optional<Json> cluster_spec;
  // Built-in name, or a path resolved against the measurements file. A built-in name is the network the run's
  // framework means by it (sim::StackDescription::network: MXNet's "alexnet" is "alexnet_mxnet").
  std::string model;
  int nodes = 1;
  int gpus_per_node = 1;
  int64_t batch_per_gpu = 0;
  plan::Data data = plan::Data::kSynthetic;
  plan::Precision precision = plan::Precision::kFp32;
  std::optional<std::vector<int64_t>> input;  // optional override [C, H, W], as in a scenario
  std::optional<int64_t> classes;
  plan::Scheme scheme;
  // The software stack (sim/stacks.hpp): the run's "framework", else the framework its "source" names
  // (TensorFlow / tf_cnn_benchmarks, MXNet), else "" (the scheme's default).
  std::string framework;
  // The framework's release where the source names it (an NGC container's "YY.MM": provenance.container or
  // source.container, else the container of the run's MLPerf round), and whether TensorFlow ran with XLA ("xla"):
  // the stack's kernel rules read them (sim/stacks.hpp). "" and false: not stated.
  std::string framework_version;
  bool xla = false;
  double images_per_sec = 0.0;
  std::optional<double> compute_jitter;  // CV of a worker's compute time per iteration (scaletwin run records it)
  // "phases_per_iteration_s" {"compute", "data"} when the run has both (scaletwin run records them): a worker's
  // compute (everything but batch assembly and waiting) and batch assembly per iteration, in seconds.
  std::optional<double> compute_per_iteration_s;
  std::optional<double> data_per_iteration_s;
  // Repeats (pool_repeats): how many runs of this configuration were pooled into this one, and the relative
  // standard error of the pooled images/s (0 for a single run).
  int repeats = 1;
  double images_per_sec_std_error = 0.0;

  std::string file;       // the measurements file it came from
  std::string json_path;  // "/runs/3"
  // How the reader took what a published table may spell its own way, each where it stands (validate and
  // calibrate print them, reading_notes): a scheme field outside the spec's vocabulary ("/runs/3/scheme/variant",
  // kept in raw, not simulated), MXNet's kvstore type in a parameter-server scheme ("kvstore": "device", read as the
  // placement and mode it stands for where the scheme does not state them, and as the mxnet stack where the run
  // names none), a model named in a table's spelling ("ResNet-152"), a framework without a stack.
  struct Note {
    std::string path;  // "/runs/3/scheme/variant"
    std::string what;  // "scheme field \"variant\" ignored (...)": the same text for the same reading
  };
  std::vector<Note> notes;
  Json raw;               // the whole run object, unknown fields included

  int gpus() const { return nodes * gpus_per_node; }
};

// One file, its runs as written (an id may appear more than once: see pool_repeats).
std::vector<MeasuredRun> parse_measurements(const Json& json, const std::string& file);
// One file or several, in order, their repeats pooled (pool_repeats).
std::vector<MeasuredRun> load_measurements(const std::string& path);
std::vector<MeasuredRun> load_measurements(const std::vector<std::string>& paths);
// One line per distinct reading note of the runs ("" when none): what, in how many runs, and the first place. For
// stderr.
std::string reading_notes(const std::vector<MeasuredRun>& runs);

// Runs that share an id are repeats of one configuration (the same cluster, nodes, GPUs per node, model, batch,
// data, precision, input, classes and scheme; InputError naming the later run's file and field otherwise) and
// become one run, in the place of the first: its images_per_sec is the pooled rate n / sum(1 / rate_i) (the mean
// iteration time: the repeats as one long run), images_per_sec_std_error the relative standard error of that mean
// (sample standard deviation of the iteration times over sqrt(n), over their mean), compute_jitter and the phases
// per iteration the means over the repeats that have them (also written into raw, with "images_per_sec" and
// "repeats"); the rest of raw (per-rank figures, buckets) is the first repeat's. A machine whose speed drifts by
// 10-20% from one run to the next (this project's virtual machine, docs/results/this-machine.md) is measured by the mean
// of many repeats, not by one of them.
std::vector<MeasuredRun> pool_repeats(std::vector<MeasuredRun> runs);

// The fields that make a run's configuration, named as in the run (cluster, model, data, nodes, gpus_per_node,
// batch_per_gpu, precision, scheme as parsed, input and classes when given): runs with equal ones are the same
// configuration (one simulation for the fit; repeats for pool_repeats).
Json run_configuration(const MeasuredRun& run);

// The scenario that reproduces a run (same model, cluster, nodes, GPUs per node, batch, scheme and data).
plan::Scenario scenario_of(const MeasuredRun& run);

// The run's figures as the record a prediction also becomes (report/run_record.hpp): images/s (pooled over
// repeats), iteration time, and the phases, collectives and time to target it measured. compare and validate
// read the measured side through it.
report::RunRecord run_record(const MeasuredRun& run);

// A field of a run as text for grouping and hold-out selection: gpus, nodes, gpus_per_node, batch_per_gpu,
// framework_version (the release the stack's rules read), precision (as simulated: fp32, tf32, bf16, fp16),
// model (as the run names it: MXNet's "alexnet" selects its runs, though they simulate alexnet_mxnet), cluster,
// data, scheme (the scheme's name) or any top-level field of the raw run. "" when absent.
std::string run_field(const MeasuredRun& run, const std::string& field);

// A run filter "FIELD OP VALUE" with OP one of == != >= <= > < (numbers compare as numbers, else as text), for
// hold-out sets: 'nodes>1', 'gpus>8', 'model==vgg16', 'data==real'; terms join with && and || (&& binds first, no
// parentheses): 'model!=vgg16 || gpus<=1' selects every run but VGG16's on more than one GPU. InputError naming
// `option` when malformed.
std::function<bool(const MeasuredRun&)> parse_run_filter(const std::string& expr, const std::string& option);

}  // namespace scaletwin::calibrate
