// plan::lower: deterministic plans whose collectives verify, carry every gradient exactly once, and follow the
// scheme's structure (buckets, servers, on-demand pushes, model-parallel traffic).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "core/error.hpp"
#include "plan/iteration_plan.hpp"
#include "plan/verify.hpp"

using namespace scaletwin;
using namespace scaletwin::plan;

namespace {

Scenario scenario_with(const std::string& model, const std::string& cluster, int nodes, const std::string& scheme,
                       int64_t batch = 32) {
  const std::string text = fmt::format(R"({{"model": "{}", "cluster": "{}", "nodes": {}, "batch_per_gpu": {},
                                           "scheme": {}}})",
                                       model, cluster, nodes, batch, scheme);
  return parse_scenario(parse_json_text(text, "t.json"), "t.json");
}

IterationPlan lower_for(const Scenario& s, int gpus) {
  return lower(s, load_scenario_model(s), load_scenario_cluster(s, gpus), gpus);
}

// Elements carried by the collectives of a purpose, each collective counted once.
int64_t elements_of(const IterationPlan& p, CollectivePurpose purpose) {
  int64_t n = 0;
  for (const auto& c : p.collectives)
    if (c.purpose == purpose) n += p.schedules[static_cast<size_t>(c.schedule)].elements;
  return n;
}

void check_structure(const IterationPlan& p) {
  for (const auto& prog : p.programs)
    for (size_t i = 0; i < prog.items.size(); ++i)
      for (int d : prog.items[i].deps) REQUIRE((d >= 0 && d < static_cast<int>(i)));
  REQUIRE(p.program_of.size() == p.endpoints.size());
  for (size_t e = 0; e < p.endpoints.size(); ++e)  // every comm item names a collective the endpoint plays in
    for (const auto& it : p.program(static_cast<int>(e)).items)
      if (it.kind == Item::Kind::kComm)
        REQUIRE(rank_in(p.collectives.at(static_cast<size_t>(it.collective)), static_cast<int>(e)) >= 0);
  for (const auto& c : p.collectives) {
    const Schedule& s = p.schedules.at(static_cast<size_t>(c.schedule));
    REQUIRE(static_cast<int>(c.participants.size()) == s.ranks);
  }
  for (const auto& s : p.schedules) {
    const VerifyResult v = verify(s);
    INFO(s.name << ": " << v.error);
    REQUIRE(v.ok);
  }
}

}  // namespace

TEST_CASE("lowering is deterministic", "[lower]") {
  const Scenario s = scenario_with("resnet50", "aws-p2.8xlarge", 2, R"({"name": "allreduce"})");
  const IterationPlan a = lower_for(s, 16), b = lower_for(s, 16);
  CHECK(a.hash() == b.hash());
  const Scenario t = scenario_with("resnet50", "aws-p2.8xlarge", 2, R"({"name": "allreduce", "bucket_bytes": "10MB"})");
  CHECK(lower_for(t, 16).hash() != a.hash());
}

TEST_CASE("identical programs are stored once and each endpoint plays the rank of its place among the participants", "[lower]") {
  // Flat ring and hierarchical (one schedule over all workers): all 16 workers run one program. Local aggregation:
  // each node reduces to its leader in a collective of its own, so workers of different nodes never share a
  // program, nor does a leader with the others of its node (8 GPUs per node: 4 programs).
  const Scenario ring = scenario_with("resnet50", "aws-p2.8xlarge", 2, R"({"name": "allreduce"})");
  const IterationPlan a = lower_for(ring, 16);
  CHECK(a.programs.size() == 1);
  CHECK(a.total_items() == 16 * a.programs[0].items.size());
  const Scenario hier =
      scenario_with("resnet50", "aws-p2.8xlarge", 2, R"({"name": "allreduce", "algorithm": "hierarchical"})");
  CHECK(lower_for(hier, 16).programs.size() == 1);
  const Scenario agg = scenario_with("resnet50", "aws-p2.8xlarge", 2,
                                     R"({"name": "ps", "servers": 2, "local_aggregation": true})");
  const IterationPlan h = lower_for(agg, 16);
  for (int w = 0; w < 16; ++w)
    for (int v = 0; v < w; ++v) {
      const bool same = h.program_of[static_cast<size_t>(w)] == h.program_of[static_cast<size_t>(v)];
      CHECK(same == (w / 8 == v / 8 && (w % 8 == 0) == (v % 8 == 0)));
    }
  // The parameter server's shards and workers: programs differ by kind, never merged across kinds.
  const Scenario ps = scenario_with("resnet50", "aws-p2.8xlarge", 2, R"({"name": "ps", "servers": 2})");
  const IterationPlan q = lower_for(ps, 16);
  for (size_t e = 0; e < q.endpoints.size(); ++e)
    for (size_t f = 0; f < e; ++f)
      if (q.program_of[e] == q.program_of[f]) CHECK(q.endpoints[e].kind == q.endpoints[f].kind);
  for (const IterationPlan* p : {&a, &h, &q}) {
    const std::vector<std::vector<int>> ranks = item_ranks(*p);
    REQUIRE(ranks.size() == p->endpoints.size());
    for (size_t e = 0; e < p->endpoints.size(); ++e) {
      const auto& items = p->program(static_cast<int>(e)).items;
      REQUIRE(ranks[e].size() == items.size());
      for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].kind != Item::Kind::kComm) {
          CHECK(ranks[e][i] == -1);
          continue;
        }
        const auto& participants = p->collectives[static_cast<size_t>(items[i].collective)].participants;
        REQUIRE(ranks[e][i] >= 0);
        CHECK(participants.at(static_cast<size_t>(ranks[e][i])) == static_cast<int>(e));
      }
    }
  }
  // In the flat ring, worker w plays rank w of every bucket.
  const std::vector<std::vector<int>> ring_ranks = item_ranks(a);
  for (int w = 0; w < 16; ++w)
    for (size_t i = 0; i < a.programs[0].items.size(); ++i)
      if (a.programs[0].items[i].kind == Item::Kind::kComm) CHECK(ring_ranks[static_cast<size_t>(w)][i] == w);
}

TEST_CASE("data parallel: buckets carry every parameter once, overlapped with backward", "[lower]") {
  const Scenario s = scenario_with("resnet50", "aws-p2.8xlarge", 1, R"({"name": "allreduce"})");
  const auto model = load_scenario_model(s);
  const IterationPlan p = lower_for(s, 8);
  check_structure(p);
  CHECK(p.workers == 8);
  CHECK(p.global_batch == 8 * 32);
  CHECK(elements_of(p, CollectivePurpose::kGradients) == model.params());
  // 25 MB buckets of a 102 MB gradient: 4 or 5 of them; the first starts before the backward pass ends.
  CHECK(p.collectives.size() >= 4);
  const auto& items = p.program(0).items;
  int first_comm_ready = -1, last_backward = -1;  // the item the first bucket waits for; the end of backward
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind == Item::Kind::kComm && first_comm_ready < 0) first_comm_ready = items[i].deps.at(0);
    if (items[i].kind == Item::Kind::kCompute && (items[i].compute.phase == Phase::kBackwardInput ||
                                                  items[i].compute.phase == Phase::kBackwardWeight))
      last_backward = static_cast<int>(i);
  }
  CHECK(first_comm_ready < last_backward);
  // Without overlap every bucket waits for the whole backward pass.
  const Scenario no = scenario_with("resnet50", "aws-p2.8xlarge", 1, R"({"name": "allreduce", "overlap": false})");
  const IterationPlan q = lower_for(no, 8);
  for (const auto& it : q.program(0).items)
    if (it.kind == Item::Kind::kComm) {
      REQUIRE(it.deps.size() == 1);
      const auto& dep = q.program(0).items[static_cast<size_t>(it.deps[0])];
      CHECK(dep.compute.layer == 1);  // the last backward item is the first conv's weight gradient
    }
}

TEST_CASE("every all-reduce algorithm lowers to verified schedules", "[lower]") {
  for (const char* algo : {"ring", "interval_pairing", "halving_doubling", "double_binary_tree", "direct"}) {
    const Scenario s = scenario_with("resnet18_cifar", "bsc-minotauro-k80", 3,
                                     fmt::format(R"({{"name": "allreduce", "algorithm": "{}"}})", algo));
    INFO(algo);
    check_structure(lower_for(s, 12));
  }
  const Scenario h = scenario_with("resnet18_cifar", "bsc-minotauro-k80", 3,
                                   R"({"name": "allreduce", "algorithm": "hierarchical", "inter": "interval_pairing"})");
  check_structure(lower_for(h, 12));
  CHECK_THROWS_AS(lower_for(h, 6), InputError);  // hierarchical needs whole nodes
}

TEST_CASE("synchronous parameter servers: push, server update, pull per bucket", "[lower]") {
  const Scenario s = scenario_with("resnet50", "aws-p2.8xlarge", 2,
                                   R"({"name": "ps", "servers": 2, "placement": "colocated"})");
  const auto model = load_scenario_model(s);
  const IterationPlan p = lower_for(s, 16);
  check_structure(p);
  CHECK(p.sync == SyncKind::kSync);
  REQUIRE(p.endpoints.size() == 18);
  CHECK(p.endpoints[16].kind == EndpointKind::kServer);
  CHECK(p.endpoints[16].device == -1);
  CHECK(p.endpoints[17].node == 1);
  CHECK(elements_of(p, CollectivePurpose::kPsPushPull) == 2 * model.params());  // pushed and pulled once each
  int server_updates = 0;
  for (const auto& it : p.program(16).items)
    if (it.kind == Item::Kind::kCompute && it.compute.phase == Phase::kServerUpdate) ++server_updates;
  CHECK(server_updates * 2 == static_cast<int>(p.collectives.size()));
  // Dedicated servers get nodes of their own.
  const Scenario d = scenario_with("resnet50", "aws-p2.8xlarge", 2, R"({"name": "ps", "servers": 3, "placement": "dedicated"})");
  const IterationPlan q = lower_for(d, 16);
  CHECK(q.nodes == 5);
  CHECK(q.endpoints.back().node == 4);
}

TEST_CASE("a server per node: each point of a sweep gets one server per worker node", "[lower]") {
  const auto servers_of = [](const IterationPlan& p) {
    std::vector<int> nodes;
    for (const Endpoint& e : p.endpoints)
      if (e.kind == EndpointKind::kServer) nodes.push_back(e.node);
    return nodes;
  };
  const Scenario s = scenario_with("resnet18_cifar", "aws-p2.8xlarge", 4,
                                   R"({"name": "ps", "servers": "per_node", "local_aggregation": true})");
  CHECK(servers_of(lower_for(s, 4)) == std::vector<int>{0});
  CHECK(servers_of(lower_for(s, 16)) == std::vector<int>{0, 1});
  const IterationPlan p = lower_for(s, 32);
  check_structure(p);
  CHECK(servers_of(p) == std::vector<int>{0, 1, 2, 3});
  for (const auto& c : p.collectives)
    if (c.purpose == CollectivePurpose::kPsPushPull) CHECK(c.participants.size() == 4 + 4);  // 4 leaders, 4 shards
  CHECK(servers_at(s, 4) == 1);
  CHECK(servers_at(s, 17) == 3);  // 8 GPUs per p2.8xlarge: 17 workers on 3 nodes
  const Scenario fixed = scenario_with("resnet18_cifar", "aws-p2.8xlarge", 4, R"({"name": "ps", "servers": 3})");
  CHECK(servers_at(fixed, 4) == 3);
  CHECK(servers_at(scenario_with("resnet18_cifar", "aws-p2.8xlarge", 1, R"({"name": "allreduce"})"), 4) == 0);
  // Dedicated: a server node per worker node.
  const Scenario d = scenario_with("resnet18_cifar", "aws-p2.8xlarge", 4,
                                   R"({"name": "ps", "servers": "per_node", "placement": "dedicated"})");
  const IterationPlan q = lower_for(d, 16);
  CHECK(q.nodes == 4);
  CHECK(servers_of(q) == std::vector<int>{2, 3});
  // A server on each worker GPU.
  const Scenario g = scenario_with("resnet18_cifar", "aws-p2.8xlarge", 1, R"({"name": "ps", "servers": "per_gpu",
                                                                             "placement": "device"})");
  CHECK(servers_at(g, 3) == 3);
  const IterationPlan r = lower_for(g, 3);
  check_structure(r);
  std::vector<int> devices;
  for (const Endpoint& e : r.endpoints)
    if (e.kind == EndpointKind::kServer) devices.push_back(e.device);
  CHECK(devices == std::vector<int>{0, 1, 2});
}

TEST_CASE("tensors whole on the least loaded server, or split over all as MXNet splits its big arrays", "[lower]") {
  // The elements each server endpoint holds over all push collectives, and how many push collectives it is in.
  struct Held {
    std::map<int, int64_t> elements;
    std::map<int, int> pushes;
  };
  const auto held = [](const IterationPlan& p) {
    Held h;
    for (const auto& c : p.collectives) {
      if (c.purpose != CollectivePurpose::kPsPushPull || c.label.find("push") == std::string::npos) continue;
      const Schedule& s = p.schedules[static_cast<size_t>(c.schedule)];
      for (size_t r = 0; r < c.participants.size(); ++r) {
        const int e = c.participants[r];
        if (p.endpoints[static_cast<size_t>(e)].kind != EndpointKind::kServer) continue;
        h.elements[e] += s.slice_length[r];
        ++h.pushes[e];
      }
    }
    return h;
  };
  const auto with = [](const std::string& tensors) {
    return scenario_with("vgg16", "aws-p2.8xlarge", 1,
                         R"({"name": "ps", "servers": 4, "placement": "device", "tensors": ")" + tensors + "\"}");
  };
  const auto model = load_scenario_model(with("sliced"));
  const int64_t fc6 = model.layers.at(static_cast<size_t>(model.index_of("fc6"))).params;  // 102,764,544
  REQUIRE(fc6 > 100'000'000);
  for (const std::string tensors : {"sliced", "whole", "kvstore", "largest_first"}) {
    INFO(tensors);
    const IterationPlan p = lower_for(with(tensors), 4);
    check_structure(p);
    for (const auto& s : p.schedules) CHECK(verify(s).ok);
    CHECK(elements_of(p, CollectivePurpose::kPsPushPull) == 2 * model.params());  // each gradient there and back
    const Held h = held(p);
    REQUIRE(h.elements.size() == 4);
    int64_t most = 0, least = model.params();
    for (const auto& [e, n] : h.elements) most = std::max(most, n), least = std::min(least, n);
    if (tensors == "largest_first") {
      CHECK(most == fc6);  // fc6 placed first, alone: every later tensor goes to a server that holds less
      CHECK(least > 0);
    } else if (tensors == "whole") {
      CHECK(most >= fc6);  // fc6 whole on one server: the others share the rest
      CHECK(least > 0);
      CHECK(least <= (model.params() - fc6) / 3 + 1);
      int fewest = 1 << 30, buckets = 0;
      for (const auto& [e, pushes] : h.pushes) fewest = std::min(fewest, pushes);
      for (const auto& c : p.collectives)
        buckets += c.purpose == CollectivePurpose::kPsPushPull && c.label.find("push") != std::string::npos;
      CHECK(fewest < buckets);  // a server without any of a bucket's tensors is not in its push
    } else {
      CHECK(most - least <= model.params() / 4 - fc6 / 4 + 8);  // fc6 (above 10^6 elements) split evenly
      if (tensors == "sliced") CHECK(most - least <= 30);        // every layer split: a few elements apart
    }
  }
  // A server's update covers what it holds: the server updates of the whole placement sum to the parameters.
  const auto updated = [](const IterationPlan& p) {
    double bytes = 0.0;
    for (size_t e = 0; e < p.endpoints.size(); ++e)
      if (p.endpoints[e].kind == EndpointKind::kServer)
        for (const auto& it : p.program(static_cast<int>(e)).items)
          if (it.kind == Item::Kind::kCompute && it.compute.phase == Phase::kServerUpdate) bytes += it.compute.bytes;
    return bytes;
  };
  CHECK(updated(lower_for(with("whole"), 4)) == Approx(updated(lower_for(with("sliced"), 4))).epsilon(1e-9));
}

TEST_CASE("local aggregation reduces inside nodes, async and mixed_async push on demand", "[lower]") {
  const Scenario la = scenario_with("resnet18_cifar", "aws-p2.8xlarge", 2,
                                    R"({"name": "ps", "servers": 2, "local_aggregation": true})");
  const IterationPlan p = lower_for(la, 16);
  check_structure(p);
  for (const auto& c : p.collectives)
    if (c.purpose == CollectivePurpose::kPsPushPull) CHECK(c.participants.size() == 2 + 2);  // 2 leaders, 2 shards

  const Scenario as = scenario_with("resnet18_cifar", "aws-p2.8xlarge", 1, R"({"name": "ps", "mode": "async"})");
  const IterationPlan q = lower_for(as, 4);
  check_structure(q);
  CHECK(q.sync == SyncKind::kAsync);
  for (const auto& c : q.collectives) {
    CHECK(c.on_demand);
    CHECK(c.participants.size() == 2);
  }
  CHECK(q.program(static_cast<int>(q.endpoints.size()) - 1).items.empty());  // the server only serves

  const Scenario mx = scenario_with("resnet18_cifar", "aws-p2.8xlarge", 2, R"({"name": "ps", "mode": "mixed_async"})");
  const IterationPlan r = lower_for(mx, 16);
  check_structure(r);
  CHECK(r.sync == SyncKind::kMixedAsync);
  int on_demand = 0, local = 0;
  for (const auto& c : r.collectives) {
    on_demand += c.on_demand;
    local += c.purpose == CollectivePurpose::kLocalAggregation;
  }
  CHECK(on_demand > 0);
  CHECK(local > 0);
  for (const auto& c : r.collectives)
    if (c.on_demand) CHECK((c.participants[0] == 0 || c.participants[0] == 8));  // node leaders only
}

TEST_CASE("hybrid: the fc head is split by neurons, the backbone all-reduced", "[lower]") {
  const Scenario s = scenario_with("vgg16_cifar", "bsc-minotauro-k80", 1, R"({"name": "hybrid"})", 16);
  const auto model = load_scenario_model(s);
  const IterationPlan p = lower_for(s, 4);
  check_structure(p);
  int64_t fc_params = 0;
  for (const auto& layer : model.layers)
    if (layer.kind == models::LayerKind::kFullyConnected) fc_params += layer.params;
  CHECK(elements_of(p, CollectivePurpose::kGradients) == model.params() - fc_params);
  // One all-gather per fc layer and one for the logits; one reduce-scatter per fc layer.
  int gathers = 0, scatters = 0;
  for (const auto& c : p.collectives) {
    gathers += c.purpose == CollectivePurpose::kActivationGather;
    scatters += c.purpose == CollectivePurpose::kGradientScatter;
  }
  CHECK(gathers == 4);
  CHECK(scatters == 3);
  // Each worker computes a quarter of the first fc layer for the global batch of 64: as many FLOPs as the whole
  // layer for its own 16 samples.
  const int fc6 = model.index_of(model.layers[static_cast<size_t>(
                                     [&] {
                                       for (size_t i = 0; i < model.layers.size(); ++i)
                                         if (model.layers[i].kind == models::LayerKind::kFullyConnected)
                                           return static_cast<int>(i);
                                       return -1;
                                     }())]
                                     .name);
  for (const auto& it : p.program(1).items)
    if (it.kind == Item::Kind::kCompute && it.compute.layer == fc6 && it.compute.phase == Phase::kForward)
      CHECK(it.compute.flops == Approx(model.layers[static_cast<size_t>(fc6)].fwd_flops * 16));
  // Model-parallel layers must form the classifier.
  const Scenario bad = scenario_with("vgg16_cifar", "bsc-minotauro-k80", 1,
                                     R"({"name": "hybrid", "model_parallel": ["no_such_layer"]})");
  CHECK_THROWS_AS(lower_for(bad, 4), InputError);
}

TEST_CASE("GPU counts beyond the scenario's nodes are input errors naming the sweep", "[lower]") {
  const Scenario s = scenario_with("resnet50", "aws-p2.8xlarge", 2, R"({"name": "allreduce"})");
  try {
    lower_for(s, 17);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("/sweep/gpus") != std::string::npos);
  }
  const Scenario bad = scenario_with("resnet50", "no-such-cluster", 1, R"({"name": "allreduce"})");
  try {
    lower_for(bad, 1);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("t.json at /cluster") != std::string::npos);
  }
}
