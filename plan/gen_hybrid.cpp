// The hybrid scheme's traffic for one model-parallel layer (Krizhevsky 2014, "One weird trick": data parallel
// backbone, model-parallel fully-connected layers), as a composition.
//
//   forward:  each rank holds the activations of its own samples (slice r of [0, n)); all-gather them, so every
//             rank computes its slice of output neurons for the whole global batch
//   backward: each rank holds a partial input gradient for the whole global batch ([n, 2n)); reduce-scatter it,
//             so each rank gets the summed input gradient of its own samples
//   hybrid = sequence(shift(all-gather, 0, 2n), shift(reduce-scatter, n, 2n)), with two data regions:
//            [0, n) all-gather semantics, [n, 2n) reduce-scatter semantics
//
// Steps (rounds) and bytes per rank: those of the all-gather plus those of the reduce-scatter of the chosen
// algorithm (ring: 2(p−1) steps, 2(p−1)/p · n elements).
// Preconditions: p ≥ 1, n ≥ 0, an algorithm with reduce-scatter and all-gather forms.
#include <fmt/format.h>

#include "plan/collectives.hpp"
#include "plan/compose.hpp"

namespace scaletwin::plan {

namespace {

Schedule::DataRegion region_of(const Schedule& part, int64_t offset) {
  Schedule::DataRegion region = data_regions(part).at(0);
  region.offset += offset;
  for (int64_t& o : region.slice_offset) o += offset;
  return region;
}

}  // namespace

Schedule hybrid_traffic(int p, int64_t n, int64_t element_bytes, Algorithm algorithm) {
  const Schedule gather = make_collective(Collective::kAllGather, algorithm, p, n, element_bytes);
  const Schedule scatter = make_collective(Collective::kReduceScatter, algorithm, p, n, element_bytes);
  Schedule s = sequence(schedules(shift(gather, 0, 2 * n), shift(scatter, n, 2 * n)),
                        fmt::format("hybrid({})", algorithm_name(algorithm)));
  s.collective = Collective::kCustom;
  s.regions = {region_of(gather, 0), region_of(scatter, n)};
  return s;
}

}  // namespace scaletwin::plan
