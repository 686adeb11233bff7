// Checkpoints of a training job (scaletwin run --checkpoint-every N --checkpoint-dir DIR, --resume DIR): every
// rank writes its own state, and rank 0 then publishes the set, so that a job killed at any moment leaves the
// last complete checkpoint readable.
//
//   DIR/checkpoint.json              the manifest (written atomically by rank 0 once every rank's file is in
//                                    place): format, scenario, plan hash, ranks, the run's identity, the
//                                    iteration the checkpoint was taken after and the rank files
//   DIR/iteration-K/rank-R.ckpt      rank R's state after K iterations (written atomically: temp + rename)
//
// A rank file is the line "scaletwin-checkpoint/1", one line of JSON (plan hash, rank, iteration, the buffers'
// names and float counts, the number of statistics, the checksum "fnv1a64:HEX" of all that follows the line), then
// the buffers as little-endian float32 in that order, then the statistics as float64. What goes in is the caller's
// (exec/train/trainer_checkpoint.cpp): weights, momentum,
// batch-norm running statistics, a parameter server's shadow copy, the per-epoch loss and accuracy so far. The
// data order and the learning rate need no state of their own: epoch e's permutation is drawn from (seed, e) and
// the rate is a function of the iteration, so the iteration count restores both.
//
// Resuming checks the manifest and every rank file against the job (plan hash, ranks, the run's identity) and
// throws InputError naming the file when they differ (exit 2): a checkpoint of another scenario, GPU count or run
// length is never loaded, nor a rank file whose data does not match its checksum (a damaged file). After publishing a checkpoint rank 0 removes the previous ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/backend.hpp"
#include "exec/comm/mpi_check.hpp"

namespace scaletwin::exec {

inline constexpr const char* kCheckpointFormat = "scaletwin-checkpoint/1";

// A named piece of an endpoint's state in device memory of the backend.
struct StateBuffer {
  std::string name;
  float* data = nullptr;
  int64_t count = 0;
};

// What a checkpoint must agree with to be resumed: the job it belongs to.
struct CheckpointIdentity {
  std::string scenario;   // the scenario's name
  std::string plan_hash;  // hex64(plan.hash())
  int ranks = 1;
  int64_t iterations = 0;  // the run's length (the learning-rate decay depends on it)
  std::string run_hash;    // hex64 of the training settings that shape the trajectory (seed, rates, data)
};

class CheckpointStore {
 public:
  // comm: the job (collective calls below are collective over it).
  CheckpointStore(Backend& backend, CheckpointIdentity identity, MPI_Comm comm);

  // Writes this rank's state after `iteration` iterations into dir, waits for every rank, and publishes the
  // checkpoint (rank 0). Collective: when it returns, the checkpoint is published for every rank.
  void save(const std::string& dir, int64_t iteration, const std::vector<StateBuffer>& state,
            const std::vector<double>& stats) const;

  // Reads dir's manifest and this rank's file into state (names and counts must match) and stats; returns the
  // iteration the checkpoint was taken after. InputError naming the file on any mismatch.
  int64_t load(const std::string& dir, const std::vector<StateBuffer>& state, std::vector<double>& stats) const;

  const CheckpointIdentity& identity() const { return identity_; }

 private:
  void publish(const std::string& dir, int64_t iteration) const;  // rank 0: the manifest, then drops older ones
  Backend& backend_;
  CheckpointIdentity identity_;
  MPI_Comm comm_;
  int rank_ = 0;
};

std::string checkpoint_manifest_path(const std::string& dir);

}  // namespace scaletwin::exec
