// Dynamic load balancing of independent items over MPI ranks, rank 0 included (cli/work_pool.hpp).
//
// Messages: a worker sends kAsk with the results it has finished since its last message (a JSON array of
// [item, result]) and receives kGive with the items to evaluate next (a JSON array: one item, or none when nothing
// is left). Its last message, after an empty kGive, is kLast with its remaining results.
#include "cli/work_pool.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "exec/comm/mpi_check.hpp"

namespace scaletwin::cli {

namespace {

constexpr int kAsk = 7301, kGive = 7302, kLast = 7303;

void send_json(MPI_Comm comm, const Json& j, int to, int tag) {
  const std::string text = j.dump();
  ST_MPI_CHECK(MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, comm));
}

Json receive_json(MPI_Comm comm, const MPI_Status& probed) {
  int count = 0;
  ST_MPI_CHECK(MPI_Get_count(&probed, MPI_CHAR, &count));
  std::string text(static_cast<size_t>(count), '\0');
  ST_MPI_CHECK(MPI_Recv(text.data(), count, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG, comm, MPI_STATUS_IGNORE));
  return Json::parse(text);
}

void take_results(const WorkPool& pool, const Json& results) {
  for (const Json& r : results) pool.done(r[0].get<size_t>(), r[1]);
}

// Rank 0: this thread answers the workers (every MPI call of the rank is made here: MPI_THREAD_FUNNELED) and a second
// thread evaluates items, so that a worker's request is answered within a millisecond even while rank 0 computes
// an item that takes seconds. `next` and `done` run under one lock, from either thread.
void run_coordinator(MPI_Comm comm, int ranks, const WorkPool& pool) {
  std::mutex lock;
  std::atomic<bool> evaluating{true}, stop{false};
  std::exception_ptr failure;
  std::thread own([&] {
    try {
      while (!stop) {
        std::optional<size_t> item;
        {
          const std::lock_guard<std::mutex> hold(lock);
          item = pool.next();
        }
        if (!item) break;
        const Json result = pool.evaluate(*item);
        const std::lock_guard<std::mutex> hold(lock);
        pool.done(*item, result);
      }
    } catch (...) {
      failure = std::current_exception();
    }
    evaluating = false;
  });
  int working = ranks - 1;  // workers that have not sent kLast
  try {
    while (evaluating || working > 0) {
      if (!evaluating && failure) break;
      int waiting = 0;
      MPI_Status probed;
      ST_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &waiting, &probed));
      if (!waiting) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // not a busy wait: the evaluator has the core
        continue;
      }
      const Json message = receive_json(comm, probed);
      const std::lock_guard<std::mutex> hold(lock);
      take_results(pool, message);
      if (probed.MPI_TAG == kLast) {
        --working;
        continue;
      }
      Json give = Json::array();
      if (const std::optional<size_t> item = pool.next()) give.push_back(*item);
      send_json(comm, give, probed.MPI_SOURCE, kGive);
    }
  } catch (...) {
    stop = true;  // the item in hand is finished, no other is taken
    own.join();
    throw;
  }
  own.join();
  if (failure) std::rethrow_exception(failure);
}

void run_worker(MPI_Comm comm, const WorkPool& pool) {
  Json results = Json::array();
  send_json(comm, results, 0, kAsk);
  MPI_Status probed;
  ST_MPI_CHECK(MPI_Probe(0, kGive, comm, &probed));
  Json items = receive_json(comm, probed);
  while (!items.empty()) {
    // Ask for the next item before evaluating this one: rank 0 answers while this rank computes.
    const std::string ask = results.dump();
    MPI_Request request;
    ST_MPI_CHECK(MPI_Isend(ask.data(), static_cast<int>(ask.size()), MPI_CHAR, 0, kAsk, comm, &request));
    results = Json::array();
    for (const Json& item : items) {
      const size_t i = item.get<size_t>();
      results.push_back(Json::array({i, pool.evaluate(i)}));
    }
    ST_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    ST_MPI_CHECK(MPI_Probe(0, kGive, comm, &probed));
    items = receive_json(comm, probed);
  }
  send_json(comm, results, 0, kLast);
}

}  // namespace

void run_work_pool(MPI_Comm comm, const WorkPool& pool) {
  int rank = 0, ranks = 1;
  ST_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ST_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  if (rank == 0)
    run_coordinator(comm, ranks, pool);
  else
    run_worker(comm, pool);
}

}  // namespace scaletwin::cli
