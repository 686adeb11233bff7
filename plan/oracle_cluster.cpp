// ClusterCostModel: the oracle's costs between ranks placed on a topology::Cluster (route latency, bottleneck
// bandwidth of the route; see oracle.hpp).
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/pair_key.hpp"
#include "plan/oracle.hpp"

namespace scaletwin::plan {

ClusterCostModel::ClusterCostModel(const topology::Cluster& cluster, double reduce_Bps, double copy_Bps,
                                   std::vector<int> rank_vertex)
    : cluster_(cluster), reduce_Bps_(reduce_Bps), copy_Bps_(copy_Bps), rank_vertex_(std::move(rank_vertex)) {
  if (rank_vertex_.empty())
    for (int r = 0; r < cluster.total_devices(); ++r) rank_vertex_.push_back(cluster.rank_device_vertex(r));
}

const topology::Route& ClusterCostModel::route(int src, int dst) const {
  if (src < 0 || dst < 0 || src >= static_cast<int>(rank_vertex_.size()) ||
      dst >= static_cast<int>(rank_vertex_.size()))
    throw InputError("", "--ranks",
                     fmt::format("at most {} ranks on this cluster (rank {} has no device)", rank_vertex_.size(),
                                 std::max(src, dst)));
  const uint64_t key = pair_key(src, dst);
  auto it = routes_.find(key);
  if (it == routes_.end())
    it = routes_.emplace(key, cluster_.route(rank_vertex_[static_cast<size_t>(src)],
                                             rank_vertex_[static_cast<size_t>(dst)])).first;
  return it->second;
}

}  // namespace scaletwin::plan
