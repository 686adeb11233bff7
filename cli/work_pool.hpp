// A pool of independent work items spread over the ranks of an MPI communicator with dynamic load balancing
// (explore's candidates, cli/explore.cpp).
//
// Rank 0 decides which item goes where and collects every result; it evaluates items itself on a second thread
// while its first answers the other ranks (so the communicator needs MPI_THREAD_FUNNELED), so one rank is a whole
// pool and N ranks share the same items. Each other rank asks for one item at a time and asks for the next before it
// starts the one in hand, so its next item is there when it is done. Items are handed out in the order `next` gives them, as ranks ask: a fast
// rank takes more. Results travel as JSON (exact for doubles: the shortest text that reads back the same number), so
// the answer does not depend on which rank evaluated what.
//
// A rank that dies takes the job down (mpirun ends every rank); rank 0's `done` has kept what was evaluated before.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "core/json_reader.hpp"
#include "exec/comm/mpi.hpp"

namespace scaletwin::cli {

struct WorkPool {
  // Rank 0: the next item to hand out, or none when nothing is left (it may skip items in the light of the results
  // so far: explore prunes dominated candidates here).
  std::function<std::optional<size_t>()> next;
  // Any rank: evaluates an item.
  std::function<Json(size_t item)> evaluate;
  // Rank 0: an item's result, from whichever rank evaluated it, as it arrives.
  std::function<void(size_t item, const Json& result)> done;
};

// Runs the pool on `comm` (every rank calls it) and returns when every item handed out has been evaluated and its
// result passed to `done` on rank 0.
void run_work_pool(MPI_Comm comm, const WorkPool& pool);

}  // namespace scaletwin::cli
