// Hand-made clusters and iteration plans for the runner tests: small enough to compute by hand.
#pragma once

#include <string>

#include "plan/iteration_plan.hpp"
#include "tests/sim/hand_schedules.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::test {

// One node: `gpus` devices (1 TFLOP/s, 100 GB/s memory) each on its own link (bandwidth_Bps, latency_s) to a
// switch "sw", which links to the host CPU (2 TFLOP/s, 50 GB/s) with the same link.
inline topology::Cluster star_node(int gpus, double bandwidth_Bps, double latency_s) {
  topology::ClusterSpec spec;
  spec.name = "test-star";
  spec.node.device.name = "test-gpu";
  spec.node.device.peak_flops = 1e12;
  spec.node.device.memory_bytes = 16e9;
  spec.node.device.memory_bandwidth_Bps = 100e9;
  spec.node.devices_per_node = gpus;
  spec.node.cpu = {"test-cpu", 8, 2e12, 64e9, 50e9};
  spec.node.switches = {"sw"};
  for (int d = 0; d < gpus; ++d)
    spec.node.links.push_back({"gpu" + std::to_string(d), "sw", {bandwidth_Bps, latency_s, false}, "pcie"});
  spec.node.links.push_back({"sw", "cpu", {bandwidth_Bps, latency_s, false}, "pcie"});
  return topology::Cluster(spec, 1);
}

inline plan::ComputeOp compute_op(plan::Phase phase, double flops) {
  plan::ComputeOp op;
  op.phase = phase;
  op.layer_class = models::LayerClass::kConv;
  op.flops = flops;
  return op;
}

inline plan::Item compute_item(plan::Phase phase, double flops, std::vector<int> deps) {
  plan::Item it;
  it.kind = plan::Item::Kind::kCompute;
  it.compute = compute_op(phase, flops);
  it.deps = std::move(deps);
  return it;
}

// The endpoint's rank in the collective is its position among the collective's participants.
inline plan::Item comm_item(int collective, std::vector<int> deps) {
  plan::Item it;
  it.kind = plan::Item::Kind::kComm;
  it.collective = collective;
  it.deps = std::move(deps);
  return it;
}

// Appends the program of the next endpoint (hand-built plans store one program per endpoint).
inline void add_program(plan::IterationPlan& plan, plan::EndpointProgram prog) {
  plan.program_of.push_back(static_cast<int>(plan.programs.size()));
  plan.programs.push_back(std::move(prog));
}

inline plan::Endpoint worker(int i) {
  plan::Endpoint e;
  e.kind = plan::EndpointKind::kWorker;
  e.name = "w" + std::to_string(i);
  e.node = 0;
  e.device = i;
  e.worker_index = i;
  return e;
}

// p workers: forward (f_flops), backward (b_flops), ring all-reduce of `elements` floats, update (u_flops).
inline plan::IterationPlan ring_data_parallel(int p, double f_flops, double b_flops, double u_flops, int64_t elements) {
  plan::IterationPlan plan;
  plan.workers = p;
  plan.batch_per_worker = 32;
  plan.global_batch = 32 * p;
  plan.schedules.push_back(hand_ring_allreduce(p, elements));
  plan::CollectiveInstance ci;
  ci.schedule = 0;
  ci.label = "bucket 0";
  for (int r = 0; r < p; ++r) ci.participants.push_back(r);
  plan.collectives.push_back(ci);
  for (int r = 0; r < p; ++r) {
    plan.endpoints.push_back(worker(r));
    plan::EndpointProgram prog;
    prog.items.push_back(compute_item(plan::Phase::kForward, f_flops, {}));
    prog.items.push_back(compute_item(plan::Phase::kBackwardWeight, b_flops, {0}));
    prog.items.push_back(comm_item(0, {1}));
    prog.items.push_back(compute_item(plan::Phase::kUpdate, u_flops, {2}));
    add_program(plan, std::move(prog));
  }
  return plan;
}

}  // namespace scaletwin::test
