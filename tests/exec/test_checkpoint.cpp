// Checkpoint files (exec/train/checkpoint.hpp) on 2 ranks: a save and a load give back every rank's buffers and
// statistics bit for bit, a newer checkpoint replaces the older one, and a checkpoint that does not belong to the
// job (another plan, other buffers, a truncated rank file, no manifest) is an InputError naming the file. The
// end-to-end kill-and-resume runs are checkpoint_resume_check.sh's.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "exec/train/checkpoint.hpp"
#include "exec/cpu/cpu_backend.hpp"
#include "tests/input_error_message.hpp"

using scaletwin::testing::input_error_message;

namespace scaletwin::test {

namespace {

namespace fs = std::filesystem;

int my_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int ranks() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// A directory every rank agrees on (rank 0's pid), empty.
std::string shared_dir(const std::string& name) {
  long pid = static_cast<long>(getpid());
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  const std::string dir = (fs::temp_directory_path() / ("scaletwin-test-checkpoint-" + std::to_string(pid)) / name).string();
  if (my_rank() == 0) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return dir;
}

exec::CheckpointIdentity identity(const std::string& plan_hash = "00000000000000aa") {
  return {"unit", plan_hash, ranks(), 100, "00000000000000bb"};
}

}  // namespace

TEST_CASE("checkpoint: a save and a load give back every rank's buffers and statistics exactly") {
  exec::CpuBackend backend(1);
  const std::string dir = shared_dir("roundtrip");
  const int rank = my_rank();
  exec::Buffer a = backend.alloc(1000), b = backend.alloc(7);
  std::vector<float> host_a(1000), host_b(7);
  for (size_t i = 0; i < host_a.size(); ++i) host_a[i] = 1.0f / static_cast<float>(i + 3 + rank);
  for (size_t i = 0; i < host_b.size(); ++i) host_b[i] = -static_cast<float>(i) * 0.1f - static_cast<float>(rank);
  backend.upload(a.data(), host_a.data(), 1000);
  backend.upload(b.data(), host_b.data(), 7);
  const std::vector<exec::StateBuffer> state = {{"params", a.data(), 1000}, {"momentum", b.data(), 7}};
  const std::vector<double> stats = {0.1 + rank, 2.5, 1e-300};
  const exec::CheckpointStore store(backend, identity(), MPI_COMM_WORLD);
  store.save(dir, 25, state, stats);
  store.save(dir, 50, state, stats);
  CHECK(fs::exists(fs::path(dir) / "iteration-00000050" / ("rank-" + std::to_string(rank) + ".ckpt")));
  CHECK_FALSE(fs::exists(fs::path(dir) / "iteration-00000025"));  // the older checkpoint is gone

  backend.fill(a.data(), 0.0f, 1000);
  backend.fill(b.data(), 0.0f, 7);
  std::vector<double> loaded_stats;
  CHECK(store.load(dir, state, loaded_stats) == 50);
  std::vector<float> back_a(1000), back_b(7);
  backend.download(back_a.data(), a.data(), 1000);
  backend.download(back_b.data(), b.data(), 7);
  CHECK(back_a == host_a);
  CHECK(back_b == host_b);
  CHECK(loaded_stats == stats);
}

TEST_CASE("checkpoint: one that does not belong to the job is an InputError naming the file") {
  exec::CpuBackend backend(1);
  const std::string dir = shared_dir("mismatch");
  const int rank = my_rank();
  exec::Buffer a = backend.alloc(10);
  const std::vector<exec::StateBuffer> state = {{"params", a.data(), 10}};
  std::vector<double> stats;
  const exec::CheckpointStore store(backend, identity(), MPI_COMM_WORLD);
  CHECK_THAT(input_error_message([&] { store.load(dir, state, stats); }), Catch::Contains("checkpoint.json"));
  store.save(dir, 30, state, {});

  const exec::CheckpointStore other_plan(backend, identity("00000000000000cc"), MPI_COMM_WORLD);
  const std::string plan_error = input_error_message([&] { other_plan.load(dir, state, stats); });
  CHECK_THAT(plan_error, Catch::Contains("checkpoint.json at /plan_hash"));

  exec::Buffer bigger = backend.alloc(11);
  const std::string buffers_error =
      input_error_message([&] { store.load(dir, {{"params", bigger.data(), 11}}, stats); });
  CHECK_THAT(buffers_error, Catch::Contains("rank-" + std::to_string(rank) + ".ckpt at /buffers"));

  const fs::path mine = fs::path(dir) / "iteration-00000030" / ("rank-" + std::to_string(rank) + ".ckpt");
  {  // two bytes of the data flipped: the sizes still agree, the checksum does not (issue 54, F11)
    std::fstream f(mine, std::ios::in | std::ios::out | std::ios::binary);
    for (const std::streamoff back : {4, 9}) {
      f.seekg(-back, std::ios::end);
      const char byte = static_cast<char>(f.get() ^ 0x5a);
      f.seekp(-back, std::ios::end);
      f.put(byte);
    }
  }
  const std::string damaged = input_error_message([&] { store.load(dir, state, stats); });
  CHECK_THAT(damaged, Catch::Contains("rank-" + std::to_string(rank) + ".ckpt at /checksum"));
  CHECK_THAT(damaged, Catch::Contains("the file is damaged"));
  fs::resize_file(mine, fs::file_size(mine) - 4);
  CHECK_THAT(input_error_message([&] { store.load(dir, state, stats); }), Catch::Contains("bytes as its header announces"));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) fs::remove_all(fs::path(dir).parent_path());
}

}  // namespace scaletwin::test
