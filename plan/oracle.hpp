// The cost oracle: walks a schedule's dataflow with α-β-γ costs, and the closed forms from the literature.
//
// Semantics (the SimGrid backend reproduces them exactly on its contention-free platform, sim/platform.hpp):
//   - every rank starts at time 0; ready(x) = the latest end of x's deps (0 when it has none); steps of one rank
//     run concurrently whenever their deps allow;
//   - a Send s and its matching Recv/RecvReduce v (FIFO per (source, destination, channel), as in schedule.hpp)
//     form one transfer that starts at max(ready(s), ready(v)) (rendezvous) and takes
//         latency_s(src, dst) + bytes / bandwidth_Bps(src, dst)
//     with NO contention: every (src, dst) pair has a private link, concurrent transfers do not slow each other;
//   - end(s) = end(Recv v) = transfer end; end(RecvReduce v) = transfer end + bytes / reduce_Bps(dst);
//   - a Copy on rank r ends at ready + bytes / copy_Bps(r);
//   - bytes = length × element_bytes; an infinite bandwidth or rate costs 0; the schedule's time is the latest
//     end of any step (0 for a schedule without steps).
// The oracle assumes a schedule that verifies (plan/verify.hpp); otherwise it throws InternalError.
//
// Closed forms (uniform α, β = 1/bandwidth, γ = 1/reduce rate, n bytes, p ranks; exact for the generators of
// plan/collectives.hpp when n is a multiple of p · element_bytes, q = 2^⌊log2 p⌋):
//   ring all-reduce              2(p−1)α + 2(p−1)/p · nβ + (p−1)/p · nγ          (Patarasuk–Yuan 2009)
//   ring reduce-scatter          (p−1)α + (p−1)/p · n(β + γ);   all-gather (p−1)α + (p−1)/p · nβ
//   interval_pairing all-reduce  2⌈log2 p⌉α + 2(p−1)/p · nβ + (p−1)/p · nγ        (any p)
//   halving_doubling all-reduce  2 log2 q α + 2(q−1)/q · nβ + (q−1)/q · nγ, plus when p ≠ q the fold:
//                                (α + nβ + nγ) + (α + nβ)                         (Thakur–Rabenseifner–Gropp 2005)
//   binomial reduce              ⌈log2 p⌉(α + nβ + nγ);   broadcast ⌈log2 p⌉(α + nβ)
//   direct all-reduce            n/copy + α + nβ + nγ  (p > 1)
//   ps push_pull, k shards       2α + (n/k)(2β + γ)
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "plan/schedule.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::plan {

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual double latency_s(int src_rank, int dst_rank) const = 0;
  virtual double bandwidth_Bps(int src_rank, int dst_rank) const = 0;
  virtual double reduce_Bps(int rank) const = 0;  // γ⁻¹: bytes reduced per second on the receiver
  virtual double copy_Bps(int rank) const = 0;
};

class UniformCostModel : public CostModel {
 public:
  UniformCostModel(double latency_s, double bandwidth_Bps, double reduce_Bps, double copy_Bps);
  double latency_s(int, int) const override { return latency_s_; }
  double bandwidth_Bps(int, int) const override { return bandwidth_Bps_; }
  double reduce_Bps(int) const override { return reduce_Bps_; }
  double copy_Bps(int) const override { return copy_Bps_; }

 private:
  double latency_s_, bandwidth_Bps_, reduce_Bps_, copy_Bps_;
};

// Route latency and bottleneck bandwidth between the devices of two ranks (block placement unless a rank →
// vertex map is given). Routes are cached per pair (the cache is not thread-safe).
class ClusterCostModel : public CostModel {
 public:
  ClusterCostModel(const topology::Cluster& cluster, double reduce_Bps, double copy_Bps,
                   std::vector<int> rank_vertex = {});
  double latency_s(int src, int dst) const override { return route(src, dst).latency_s; }
  double bandwidth_Bps(int src, int dst) const override { return route(src, dst).bottleneck_Bps; }
  double reduce_Bps(int) const override { return reduce_Bps_; }
  double copy_Bps(int) const override { return copy_Bps_; }

 private:
  const topology::Route& route(int src, int dst) const;
  const topology::Cluster& cluster_;
  double reduce_Bps_, copy_Bps_;
  std::vector<int> rank_vertex_;
  mutable std::unordered_map<uint64_t, topology::Route> routes_;
};

struct OracleResult {
  double time_s = 0.0;
  int rounds = 0;                               // longest chain of transfers, as verify() counts it
  std::vector<double> rank_end_s;               // latest step end per rank
  std::vector<std::vector<double>> step_end_s;  // [rank][step]
};

OracleResult run_oracle(const Schedule& s, const CostModel& cost);

struct AlphaBetaGamma {
  double alpha_s = 0.0;           // latency per message
  double beta_s_per_byte = 0.0;   // 1 / bandwidth
  double gamma_s_per_byte = 0.0;  // 1 / reduce rate
  double copy_s_per_byte = 0.0;   // 1 / copy rate
};

double closed_form_ring_allreduce(int p, double bytes, const AlphaBetaGamma& c);
double closed_form_ring_reduce_scatter(int p, double bytes, const AlphaBetaGamma& c);
double closed_form_ring_allgather(int p, double bytes, const AlphaBetaGamma& c);
double closed_form_interval_pairing_allreduce(int p, double bytes, const AlphaBetaGamma& c);
double closed_form_halving_doubling_allreduce(int p, double bytes, const AlphaBetaGamma& c);
double closed_form_binomial_reduce(int p, double bytes, const AlphaBetaGamma& c);
double closed_form_binomial_broadcast(int p, double bytes, const AlphaBetaGamma& c);
double closed_form_direct_allreduce(int p, double bytes, const AlphaBetaGamma& c);
double closed_form_ps_push_pull(int servers, double bytes, const AlphaBetaGamma& c);

}  // namespace scaletwin::plan
