// Dynamic load balancing of independent items over MPI ranks, rank 0 included (cli/work_pool.hpp).
//
// Messages: a worker sends kAsk with the results it has finished since its last message (a JSON array of
// [item, result]) and receives kGive with the items to evaluate next (a JSON array: one item, or none when nothing
// is left). Its last message, after an empty kGive, is kLast with its remaining results.
#include "cli/work_pool.hpp"

#include <string>
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

void run_coordinator(MPI_Comm comm, int ranks, const WorkPool& pool) {
  int working = ranks - 1;  // workers that have not sent kLast
  // Serves one message from a worker: results in, the next item (or none) out.
  const auto serve = [&](const MPI_Status& probed) {
    const Json message = receive_json(comm, probed);
    take_results(pool, message);
    if (probed.MPI_TAG == kLast) {
      --working;
      return;
    }
    Json give = Json::array();
    if (const std::optional<size_t> item = pool.next()) give.push_back(*item);
    send_json(comm, give, probed.MPI_SOURCE, kGive);
  };
  bool own_work = true;
  while (own_work || working > 0) {
    int waiting = 0;
    MPI_Status probed;
    ST_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &waiting, &probed));
    if (waiting) {
      serve(probed);
      continue;
    }
    if (own_work) {
      if (const std::optional<size_t> item = pool.next()) {
        pool.done(*item, pool.evaluate(*item));
        continue;
      }
      own_work = false;
    }
    if (working > 0) {
      ST_MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &probed));
      serve(probed);
    }
  }
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
