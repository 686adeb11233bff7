// Checkpoint files of a training job: per-rank state files and rank 0's manifest (see checkpoint.hpp).
#include "exec/train/checkpoint.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_reader.hpp"

namespace scaletwin::exec {

namespace fs = std::filesystem;
static_assert(std::endian::native == std::endian::little, "checkpoint files are little-endian");

std::string checkpoint_manifest_path(const std::string& dir) { return (fs::path(dir) / "checkpoint.json").string(); }

namespace {

std::string iteration_dir(int64_t iteration) { return fmt::format("iteration-{:08}", iteration); }
std::string rank_file(int64_t iteration, int rank) { return iteration_dir(iteration) + fmt::format("/rank-{}.ckpt", rank); }

// A checkpoint's file, read whole: a regular file (a device or a FIFO in its place is refused, not read for ever) of
// at most 64 GiB (a rank file holds the replica's weights, momentum and statistics: ResNet-50's about 200 MB).
std::string read_whole(const std::string& path, const std::string& what) {
  return read_input_file(path, what, int64_t{64} << 30);
}

// A manifest or rank-file value that must equal the job's.
template <typename T>
void expect_equal(const std::string& file, const Json& doc, const std::string& key, const T& expected,
                  const std::string& meaning) {
  if (!doc.contains(key) || doc[key] != Json(expected))
    throw InputError(file, "/" + key,
                     fmt::format("a checkpoint of this job: {} {} (the checkpoint has {}; it was written by another "
                                 "scenario, GPU count or run length and cannot be resumed here)",
                                 meaning, Json(expected).dump(), doc.contains(key) ? doc[key].dump() : "none"));
}

// The checksum of a rank file's data (every buffer and statistic), kept in its header: a flipped byte would
// otherwise resume silently to other weights.
std::string data_checksum(const std::string& data) { return "fnv1a64:" + hex64(fnv1a64(data)); }

}  // namespace

CheckpointStore::CheckpointStore(Backend& backend, CheckpointIdentity identity, MPI_Comm comm)
    : backend_(backend), identity_(std::move(identity)), comm_(comm) {
  ST_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
}

void CheckpointStore::save(const std::string& dir, int64_t iteration, const std::vector<StateBuffer>& state,
                           const std::vector<double>& stats) const {
  Json header = {{"format", kCheckpointFormat}, {"plan_hash", identity_.plan_hash}, {"rank", rank_},
                 {"iteration", iteration}, {"stats", stats.size()}, {"buffers", Json::array()}};
  int64_t floats = 0;
  for (const StateBuffer& b : state) {
    header["buffers"].push_back({{"name", b.name}, {"count", b.count}});
    floats += b.count;
  }
  std::string data(static_cast<size_t>(floats) * sizeof(float) + stats.size() * sizeof(double), '\0');
  char* out = data.data();
  std::vector<float> host;
  for (const StateBuffer& b : state) {
    host.resize(static_cast<size_t>(b.count));
    backend_.download(host.data(), b.data, b.count);
    if (!host.empty()) std::memcpy(out, host.data(), host.size() * sizeof(float));
    out += host.size() * sizeof(float);
  }
  // A rank without statistics (a parameter server) has none to copy: memcpy must not see their null data().
  if (!stats.empty()) std::memcpy(out, stats.data(), stats.size() * sizeof(double));
  header["checksum"] = data_checksum(data);
  const std::string content = std::string(kCheckpointFormat) + "\n" + header.dump() + "\n" + data;

  std::error_code ec;
  fs::create_directories(fs::path(dir) / iteration_dir(iteration), ec);
  if (ec) throw SystemError(fmt::format("cannot create the checkpoint directory {}: {}", dir, ec.message()));
  write_file_atomic((fs::path(dir) / rank_file(iteration, rank_)).string(), content);
  ST_MPI_CHECK(MPI_Barrier(comm_));  // every rank's file is in place
  if (rank_ == 0) publish(dir, iteration);
  ST_MPI_CHECK(MPI_Barrier(comm_));  // published: every rank may read it
}

void CheckpointStore::publish(const std::string& dir, int64_t iteration) const {
  std::error_code ec;
  Json files = Json::array();
  for (int r = 0; r < identity_.ranks; ++r) files.push_back(rank_file(iteration, r));
  const Json manifest = {{"format", kCheckpointFormat}, {"scenario", identity_.scenario},
                         {"plan_hash", identity_.plan_hash}, {"ranks", identity_.ranks},
                         {"iterations", identity_.iterations}, {"run_hash", identity_.run_hash},
                         {"iteration", iteration}, {"files", files}};
  write_file_atomic(checkpoint_manifest_path(dir), manifest.dump(2) + "\n");
  // The previous checkpoints (only older ones: the other ranks may already be writing the next).
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    long long k = -1;
    if (entry.is_directory() && std::sscanf(name.c_str(), "iteration-%lld", &k) == 1 && k < iteration)
      fs::remove_all(entry.path(), ec);
  }
}

int64_t CheckpointStore::load(const std::string& dir, const std::vector<StateBuffer>& state,
                              std::vector<double>& stats) const {
  const std::string manifest_file = checkpoint_manifest_path(dir);
  if (!fs::exists(manifest_file))
    throw InputError(manifest_file, "", "a checkpoint manifest (--resume DIR needs a directory written by "
                                        "--checkpoint-dir DIR; there is no checkpoint.json in it)");
  const Json manifest = load_json_file(manifest_file);
  if (!manifest.is_object()) throw InputError(manifest_file, "", "a checkpoint manifest object");
  expect_equal(manifest_file, manifest, "format", std::string(kCheckpointFormat), "format");
  expect_equal(manifest_file, manifest, "scenario", identity_.scenario, "scenario");
  expect_equal(manifest_file, manifest, "plan_hash", identity_.plan_hash, "plan hash");
  expect_equal(manifest_file, manifest, "ranks", identity_.ranks, "MPI ranks");
  expect_equal(manifest_file, manifest, "iterations", identity_.iterations, "iterations of the run");
  expect_equal(manifest_file, manifest, "run_hash", identity_.run_hash, "training settings hash");
  if (!manifest.contains("iteration") || !manifest["iteration"].is_number_integer() ||
      manifest["iteration"].get<int64_t>() < 0 || manifest["iteration"].get<int64_t>() > identity_.iterations)
    throw InputError(manifest_file, "/iteration", fmt::format("an iteration in [0, {}]", identity_.iterations));
  const int64_t iteration = manifest["iteration"].get<int64_t>();

  const std::string file = (fs::path(dir) / rank_file(iteration, rank_)).string();
  const std::string content = read_whole(file, "checkpoint rank file");
  const size_t line1 = content.find('\n');
  const size_t line2 = line1 == std::string::npos ? line1 : content.find('\n', line1 + 1);
  if (line2 == std::string::npos || content.compare(0, line1, kCheckpointFormat) != 0)
    throw InputError(file, "", fmt::format("a {} rank file", kCheckpointFormat));
  const Json header = parse_json_text(content.substr(line1 + 1, line2 - line1 - 1), file);
  expect_equal(file, header, "plan_hash", identity_.plan_hash, "plan hash");
  expect_equal(file, header, "rank", rank_, "rank");
  expect_equal(file, header, "iteration", iteration, "iteration (of the manifest)");
  Json buffers = Json::array();
  int64_t floats = 0;
  for (const StateBuffer& b : state) {
    buffers.push_back({{"name", b.name}, {"count", b.count}});
    floats += b.count;
  }
  expect_equal(file, header, "buffers", buffers, "state buffers");
  if (!header.contains("stats") || !header["stats"].is_number_unsigned())
    throw InputError(file, "/stats", "the number of statistics");
  stats.resize(header["stats"].get<size_t>());
  const size_t data_at = line2 + 1;
  const size_t expected = data_at + static_cast<size_t>(floats) * sizeof(float) + stats.size() * sizeof(double);
  if (content.size() != expected)
    throw InputError(file, "", fmt::format("{} bytes as its header announces (it has {})", expected, content.size()));
  const std::string checksum = data_checksum(content.substr(data_at));
  if (!header.contains("checksum") || header["checksum"] != checksum)
    throw InputError(file, "/checksum",
                     fmt::format("the checksum of the data that follows the header ({}; the data gives {}: the file "
                                 "is damaged, resume from an intact checkpoint or start again)",
                                 header.contains("checksum") ? header["checksum"].dump() : "none", checksum));
  const char* in = content.data() + data_at;
  std::vector<float> host;
  for (const StateBuffer& b : state) {
    host.resize(static_cast<size_t>(b.count));
    if (!host.empty()) std::memcpy(host.data(), in, host.size() * sizeof(float));
    backend_.upload(b.data, host.data(), b.count);
    in += host.size() * sizeof(float);
  }
  if (!stats.empty()) std::memcpy(stats.data(), in, stats.size() * sizeof(double));
  return iteration;
}

}  // namespace scaletwin::exec
