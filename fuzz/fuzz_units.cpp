// Fuzz target for the unit parser (core/units.hpp). The first byte picks the quantity, the rest is the text;
// parsed values go through the table formatters too. A parsed value must be finite and non-negative.
#include "core/units.hpp"
#include "fuzz/fuzz_common.hpp"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using scaletwin::Quantity;
  if (size == 0) return 0;
  const Quantity kinds[] = {Quantity::kBytes, Quantity::kBandwidthBytesPerSec, Quantity::kSeconds,
                            Quantity::kFlopsPerSec, Quantity::kCount};
  const Quantity kind = kinds[data[0] % 5];
  const std::string text = scaletwin::fuzz::as_text(data + 1, size - 1);
  scaletwin::fuzz::guard([&] {
    const double v = scaletwin::parse_quantity(text, kind, "fuzz.json", "/value");
    if (!std::isfinite(v)) __builtin_trap();
    (void)scaletwin::format_bytes(v);
    (void)scaletwin::format_bandwidth(v);
    (void)scaletwin::format_seconds(v);
    (void)scaletwin::format_flops(v);
  });
  return 0;
}
