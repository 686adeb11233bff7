// Builds SimGrid platforms (see platform.hpp for the picture and the modelling choices).
#include "sim/platform.hpp"

#include <fmt/format.h>
#include <xbt/log.h>

#include <algorithm>

#include "core/error.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCALETWIN_HAS_ASAN 1
#endif
#endif
#ifndef SCALETWIN_HAS_ASAN
#define SCALETWIN_HAS_ASAN 0
#endif

namespace scaletwin::sim {

std::unique_ptr<sg4::Engine> make_engine(bool verbose) {
  if (!verbose) xbt_log_control_set("root.thres:critical");
  static char arg0[] = "scaletwin";
#if defined(__SANITIZE_ADDRESS__) || SCALETWIN_HAS_ASAN
  // AddressSanitizer cannot follow SimGrid's default (raw, hand-written) context switches: under it, every actor
  // runs in a thread of its own. Same results, slower; set on the command line so that it precedes the factory.
  static char thread_contexts[] = "--cfg=contexts/factory:thread";
  char* argv[] = {arg0, thread_contexts, nullptr};
  int argc = 2;
#else
  char* argv[] = {arg0, nullptr};
  int argc = 1;
#endif
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  // SimGrid merges events closer than surf/precision (1e-9 s by default): a 4-byte difference between two
  // chunks (0.3 ns at 12.5 GB/s) vanished. 1e-12 s keeps every event date exact against the oracle and is still
  // far above the double resolution of simulated times (1.4e-14 s at 100 s).
  sg4::Engine::set_config("surf/precision:1e-12");
  sg4::Engine::set_config("network/latency-factor:1");
  sg4::Engine::set_config("network/bandwidth-factor:1");
  sg4::Engine::set_config("network/weight-S:0");
  sg4::Engine::set_config("network/solver:fairbottleneck");
  return engine;
}

namespace {

sg4::Host* make_host(sg4::NetZone* zone, const std::string& name, int cores = kCores) {
  sg4::Host* h = zone->create_host(name, kTicksPerSecond);
  h->set_core_count(cores);
  h->seal();
  return h;
}

}  // namespace

ClusterPlatform::ClusterPlatform(const topology::Cluster& cluster, const Calibration& calibration,
                                 const std::set<std::pair<int, int>>& pairs, const AppliedFaults& faults) {
  sg4::NetZone* zone = sg4::create_full_zone("cluster");
  const auto& vertices = cluster.vertices();
  hosts_.assign(vertices.size(), nullptr);
  for (size_t v = 0; v < vertices.size(); ++v) {
    const auto kind = vertices[v].kind;
    if (kind == topology::VertexKind::kDevice || kind == topology::VertexKind::kHostCpu)
      hosts_[v] = make_host(zone, vertices[v].name);
  }
  // Links are created on first use: only the edges on a route exist in the platform. A `shared` edge (a bus) is
  // one SimGrid link for both directions, every other edge a split-duplex pair.
  std::vector<sg4::Link*> links(cluster.edges().size(), nullptr);
  auto link_of = [&](int e) {
    if (links[e] == nullptr) {
      const topology::Edge& edge = cluster.edges()[e];
      const LinkFactors& f = calibration.link(link_class_of(edge.kind));
      const std::string name = edge.name.empty() ? fmt::format("e{}", e) : fmt::format("e{}:{}", e, edge.name);
      ST_ASSERT(edge.link.bandwidth_Bps > 0.0, "link without bandwidth: " + name);
      const double bandwidth = calibration.link_bandwidth_Bps(edge.kind, edge.link.bandwidth_Bps) * faults.bandwidth_factor(e);
      links[e] = edge.link.shared ? zone->create_link(name, bandwidth)
                                  : static_cast<sg4::Link*>(zone->create_split_duplex_link(name, bandwidth));
      links[e]->set_latency(edge.link.latency_s * f.latency_factor);
      links[e]->seal();
    }
    return links[e];
  };
  std::set<std::pair<int, int>> done;
  for (auto [a, b] : pairs) {
    if (a > b) std::swap(a, b);
    if (!done.insert({a, b}).second) continue;
    ST_ASSERT(hosts_.at(a) != nullptr && hosts_.at(b) != nullptr, "route between non-host vertices");
    std::vector<sg4::LinkInRoute> route;
    if (a == b) {
      // Two endpoints on one host (e.g. a server shard on a worker's CPU): memory copies, no shared link.
      sg4::Link* loop = zone->create_link(fmt::format("loopback{}", a), 1e12)->set_latency(0.0);
      loop->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
      loop->seal();
      route.emplace_back(loop);
    } else {
      int at = a;
      for (int e : faults.route(cluster, a, b).edges) {
        const topology::Edge& edge = cluster.edges()[e];
        const bool forward = edge.a == at;
        ST_ASSERT(forward || edge.b == at, "route edges do not form a path");
        if (edge.link.shared)
          route.emplace_back(link_of(e));
        else
          route.emplace_back(link_of(e), forward ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
        at = forward ? edge.b : edge.a;
      }
      ST_ASSERT(at == b, "route does not end at its destination");
    }
    zone->add_route(hosts_[a]->get_netpoint(), hosts_[b]->get_netpoint(), nullptr, nullptr, route, true);
  }
  zone->seal();
}

sg4::Host* ClusterPlatform::host(int vertex) const {
  sg4::Host* h = hosts_.at(static_cast<size_t>(vertex));
  ST_ASSERT(h != nullptr, fmt::format("vertex {} is not a device or a host CPU", vertex));
  return h;
}

std::vector<sg4::Host*> build_contention_free_platform(int ranks, double latency_s, double bandwidth_Bps) {
  sg4::NetZone* zone = sg4::create_star_zone("contention_free");
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < ranks; ++r) {
    // As many cores as ranks: the oracle's reductions never slow each other, even when p-1 run at once.
    sg4::Host* h = make_host(zone, fmt::format("r{}", r), std::max(kCores, ranks));
    sg4::Link* up = zone->create_link(fmt::format("up{}", r), bandwidth_Bps)->set_latency(latency_s);
    up->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    up->seal();
    sg4::Link* down = zone->create_link(fmt::format("down{}", r), bandwidth_Bps)->set_latency(0.0);
    down->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    down->seal();
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {sg4::LinkInRoute(up)}, false);
    zone->add_route(nullptr, h->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(down)}, false);
    hosts.push_back(h);
  }
  zone->seal();
  return hosts;
}

}  // namespace scaletwin::sim
