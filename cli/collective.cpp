// scaletwin collective: builds one collective schedule from the registry and reports its steps, bytes sent per rank
// and α-β time (plan/oracle.hpp); --verify runs the symbolic check (plan/verify.hpp).
//
//   scaletwin collective --algo ALGO --ranks P --bytes N [--cluster C --nodes K] [--verify] [--json FILE]
//
// Without --cluster the cost model is uniform: α = 5 µs per message, 10 Gbit/s per link, reductions and copies free
// (pure α-β); --latency / --bandwidth / --reduce-bandwidth override it. With --cluster, α and β come from the route
// between the ranks' devices (block placement) and reductions run at a third of the device memory bandwidth
// (read two operands, write one), copies at half of it. A schedule that fails verification exits 70.
#include <fmt/format.h>

#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "plan/collectives.hpp"
#include "plan/oracle.hpp"
#include "plan/verify.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::cli {

namespace {

constexpr double kDefaultLatency_s = 5e-6;
constexpr double kDefaultBandwidth_Bps = 10e9 / 8;  // 10 Gbit/s

struct CollectiveCliOptions {
  std::string algorithm;
  std::string collective = "allreduce";
  int ranks = 0;
  std::string bytes;
  int64_t element_bytes = 4;
  std::string cluster;
  int nodes = 0;
  bool verify = false;
  std::string json;
  plan::CollectiveOptions options;
  std::string intra = "ring", inter = "ring";  // parsed into options by run_collective
  std::string latency, bandwidth, reduce_bandwidth;
};

std::unique_ptr<plan::CostModel> make_cost_model(const CollectiveCliOptions& o,
                                                 std::optional<topology::Cluster>& cluster, std::string& described) {
  const double inf = std::numeric_limits<double>::infinity();
  const double reduce_Bps = o.reduce_bandwidth.empty()
                                ? inf
                                : parse_quantity(o.reduce_bandwidth, Quantity::kBandwidthBytesPerSec, "",
                                                 "--reduce-bandwidth");
  if (o.cluster.empty()) {
    const double latency_s =
        o.latency.empty() ? kDefaultLatency_s : parse_quantity(o.latency, Quantity::kSeconds, "", "--latency");
    const double bandwidth_Bps = o.bandwidth.empty()
                                     ? kDefaultBandwidth_Bps
                                     : parse_quantity(o.bandwidth, Quantity::kBandwidthBytesPerSec, "", "--bandwidth");
    if (latency_s < 0) throw InputError("", "--latency", fmt::format("a latency >= 0 (got \"{}\")", o.latency));
    if (bandwidth_Bps <= 0)
      throw InputError("", "--bandwidth", fmt::format("a positive bandwidth (got \"{}\")", o.bandwidth));
    if (reduce_Bps <= 0)
      throw InputError("", "--reduce-bandwidth", fmt::format("a positive bandwidth (got \"{}\")", o.reduce_bandwidth));
    described = fmt::format("uniform: {} latency, {} per link", format_seconds(latency_s), format_bandwidth(bandwidth_Bps));
    return std::make_unique<plan::UniformCostModel>(latency_s, bandwidth_Bps, reduce_Bps, inf);
  }
  if (!o.latency.empty() || !o.bandwidth.empty())
    throw InputError("collective: --latency and --bandwidth apply without --cluster only");
  cluster.emplace(topology::load_cluster(o.cluster, o.nodes));
  const double memory_Bps = cluster->spec().node.device.memory_bandwidth_Bps;
  const double device_reduce_Bps = memory_Bps > 0 ? memory_Bps / 3 : inf;
  described = fmt::format("cluster {} ({} nodes): route latency and bottleneck bandwidth", cluster->spec().name,
                          cluster->nodes());
  return std::make_unique<plan::ClusterCostModel>(*cluster, o.reduce_bandwidth.empty() ? device_reduce_Bps : reduce_Bps,
                                                  memory_Bps > 0 ? memory_Bps / 2 : inf);
}

// `collective` materializes every step of the schedule (issue 54: `--ranks 100000000` was still building after
// 10 s; a ring of 4,096 ranks took 200 s and 12 GB). Schedules that grow as p² (ring, direct, hybrid, and
// hierarchical, whose phases may be rings) stop at 1,024 ranks, the others at 16,384, and parameter servers at 4,096
// shards; `predict --fidelity fast` times larger collectives from their rounds.
constexpr int kMostRanksQuadratic = 1024, kMostRanks = 16384, kMostServers = 4096;

void check_schedule_size(plan::Algorithm algorithm, int ranks, int servers) {
  const bool quadratic = algorithm == plan::Algorithm::kRing || algorithm == plan::Algorithm::kDirect ||
                         algorithm == plan::Algorithm::kHybrid || algorithm == plan::Algorithm::kHierarchical;
  const int most = quadratic ? kMostRanksQuadratic : kMostRanks;
  if (ranks > most)
    throw InputError("", "--ranks",
                     fmt::format("at most {} ranks for {} (the schedule is built step by step{}; predict --fidelity "
                                 "fast times larger collectives) (got {})",
                                 most, plan::algorithm_name(algorithm), quadratic ? " and grows as ranks squared" : "",
                                 ranks));
  if (servers < 1 || servers > kMostServers)
    throw InputError("", "--servers", fmt::format("from 1 to {} server shards (got {})", kMostServers, servers));
}

int run_collective(CollectiveCliOptions o) {
  const plan::Collective kind = plan::collective_from_name(o.collective);
  const plan::Algorithm algorithm =
      plan::algorithm_from_name(o.algorithm, plan::collective_algorithms(kind), "", "--algo");
  o.options.intra =
      plan::algorithm_from_name(o.intra, plan::collective_algorithms(plan::Collective::kReduceScatter), "", "--intra");
  o.options.inter = plan::algorithm_from_name(o.inter, plan::flat_allreduce_algorithms(), "", "--inter");
  const double bytes = parse_quantity(o.bytes, Quantity::kBytes, "", "--bytes");
  if (o.element_bytes < 1) throw InputError("", "--element-bytes", "a positive element size");
  const auto total_bytes = static_cast<int64_t>(bytes);
  if (bytes < 0 || static_cast<double>(total_bytes) != bytes || total_bytes % o.element_bytes != 0)
    throw InputError("", "--bytes", fmt::format("a whole number of {}-byte elements (got {})", o.element_bytes, o.bytes));
  std::optional<topology::Cluster> cluster;
  std::string cost_text;
  const std::unique_ptr<plan::CostModel> cost = make_cost_model(o, cluster, cost_text);
  if (o.ranks == 0 && cluster) o.ranks = cluster->total_devices();
  if (o.ranks <= 0) throw InputError("", "--ranks", "a positive number of ranks (or --cluster to use all its devices)");
  check_schedule_size(algorithm, o.ranks, o.options.servers);
  if (o.options.ranks_per_node == 0 && cluster && o.ranks % cluster->devices_per_node() == 0)
    o.options.ranks_per_node = cluster->devices_per_node();
  const plan::Schedule s =
      plan::make_collective(kind, algorithm, o.ranks, total_bytes / o.element_bytes, o.element_bytes, o.options);

  Json verified = nullptr;
  std::string verify_text = "not checked (--verify)";
  bool broken = false;
  if (o.verify) {
    const plan::VerifyResult v = plan::verify(s);
    verified = v.ok;
    broken = !v.ok;
    verify_text = v.ok ? "yes" : "NO: " + v.error;
  }
  Json time = nullptr;
  int steps = 0;
  if (!broken) {
    const plan::OracleResult r = plan::run_oracle(s, *cost);
    time = r.time_s;
    steps = r.rounds;
  }
  const Json json = {{"algorithm", plan::algorithm_name(algorithm)},
                     {"collective", plan::collective_name(kind)},
                     {"ranks", s.ranks},
                     {"bytes", s.bytes()},
                     {"element_bytes", s.element_bytes},
                     {"steps", steps},
                     {"max_bytes_sent_per_rank", s.max_bytes_sent_per_rank()},
                     {"alpha_beta_time_s", time},
                     {"verified", verified},
                     {"cost_model", cost_text},
                     {"schedule_steps", s.total_steps()}};
  if (!o.json.empty()) write_json_output(o.json, json);
  if (o.json != "-") {
    std::cout << fmt::format("schedule        {} ({}), {} ranks{}\n", s.name, plan::collective_name(kind), s.ranks,
                             s.ranks != o.ranks ? fmt::format(" ({} workers + {} servers)", o.ranks, s.ranks - o.ranks) : "");
    std::cout << fmt::format("buffer          {} ({} elements of {} bytes)\n", format_bytes(static_cast<double>(s.bytes())),
                             s.elements, s.element_bytes);
    std::cout << fmt::format("steps           {} (longest chain of transfers; {} Send/Recv/Copy steps in all)\n",
                             broken ? std::string("?") : std::to_string(steps), s.total_steps());
    std::cout << fmt::format("sent per rank   {} at most\n", format_bytes(static_cast<double>(s.max_bytes_sent_per_rank())));
    std::cout << fmt::format("α-β time        {}  ({})\n",
                             broken ? std::string("-") : format_seconds(time.get<double>()), cost_text);
    std::cout << fmt::format("verified        {}\n", verify_text);
  }
  if (broken) {
    std::cerr << "scaletwin: collective: the schedule fails verification: " << verify_text << "\n";
    return kExitInternal;
  }
  return 0;
}

}  // namespace

void add_collective_command(CLI::App& root, Action& action) {
  auto o = std::make_shared<CollectiveCliOptions>();
  auto* sub = root.add_subcommand("collective", "Build one collective schedule: steps, bytes sent per rank, α-β time");
  sub->add_option("--algo", o->algorithm, "Algorithm (ring, interval_pairing, halving_doubling, double_binary_tree, "
                                          "direct, hierarchical, ps, …; see --collective)")
      ->required();
  sub->add_option("--ranks", o->ranks, "Number of ranks (workers for ps); default: every device of --cluster");
  sub->add_option("--bytes", o->bytes, "Buffer size, with units (25MB, 1MiB, 4096)")->required();
  sub->add_option("--collective", o->collective,
                  "allreduce (default), reduce_scatter, allgather, reduce, broadcast, push_pull, custom");
  sub->add_option("--element-bytes", o->element_bytes, "Bytes per element [4]");
  sub->add_option("--cluster", o->cluster, "Built-in cluster name or cluster JSON file for the costs");
  sub->add_option("--nodes", o->nodes, "Nodes of the cluster (default: the cluster's)")->check(positive_count("nodes"));
  sub->add_flag("--verify", o->verify, "Run the symbolic verifier");
  sub->add_option("--json", o->json, "Write the result as JSON to FILE (- for standard output)");
  sub->add_option("--ranks-per-node", o->options.ranks_per_node, "hierarchical: ranks per node [cluster's, or all]")
      ->check(positive_count("ranks per node"));
  sub->add_option("--intra", o->intra, "hierarchical: algorithm inside a node; hybrid: its algorithm [ring]");
  sub->add_option("--inter", o->inter, "hierarchical: all-reduce between nodes [ring]");
  sub->add_option("--chunks", o->options.chunks, "double_binary_tree: pipeline chunks per tree [automatic]");
  sub->add_option("--servers", o->options.servers, "ps: number of server shards [1]");
  sub->add_option("--root", o->options.root, "reduce / broadcast: root rank [0]");
  sub->add_option("--latency", o->latency, "Uniform model: latency per message [5us]");
  sub->add_option("--bandwidth", o->bandwidth, "Uniform model: bandwidth per link [10Gbps]");
  sub->add_option("--reduce-bandwidth", o->reduce_bandwidth, "Reduction rate on the receiver [free / cluster memory]");
  sub->callback([o, &action] { action = [o] { return run_collective(*o); }; });
}

}  // namespace scaletwin::cli
