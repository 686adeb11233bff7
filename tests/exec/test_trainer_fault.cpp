// A training job with a failing rank, for trainer_fault_check.sh: two ranks train lenet5 (data-parallel ring) for
// far longer than the check waits, and one of them fails mid-run:
//   kill   rank 1 kills itself with SIGKILL after 2 s of training (a crashed process: no message, no MPI_Abort)
//   throw  rank 0 throws a SystemError when training starts, while rank 1 waits for it in the first all-reduce
// Either way the whole job must end, non-zero, instead of leaving the surviving rank waiting forever.
#include <csignal>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/error.hpp"
#include "exec/comm/mpi_check.hpp"
#include "exec/train/trainer.hpp"
#include "plan/scenario.hpp"

int main(int argc, char** argv) {
  using namespace scaletwin;
  MPI_Init(&argc, &argv);
  const bool kill = argc > 1 && std::strcmp(argv[1], "kill") == 0;
  return exec::run_or_abort(MPI_COMM_WORLD, [&] {
    const Json j = {{"name", "fault"}, {"model", "lenet5"}, {"cluster", "aws-p2.8xlarge"}, {"nodes", 1},
                    {"gpus_per_node", 2}, {"batch_per_gpu", 8}, {"scheme", {{"name", "allreduce"}}},
                    {"training", {{"data", "synthetic"}, {"iterations", 10000000}}}};
    const plan::Scenario scenario = plan::parse_scenario(j, "fault.json");
    exec::TrainOptions options;
    options.threads = 1;
    options.synthetic_samples = 256;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (kill && rank == 1)
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(2));
        std::raise(SIGKILL);
      }).detach();
    if (!kill)
      options.on_start = [](const plan::IterationPlan&, int64_t) {
        throw SystemError("injected failure at the start of training");
      };
    exec::train(scenario, options, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
  });
}
