// The one place where quantities with units are parsed ("25MB", "10Gbps", "1.25GBps", "5us", "4.37Tf").
//
// Plain numbers are SI base units: bytes, seconds, FLOP/s, bytes/s. Decimal prefixes k M G T P (powers of 1000)
// and binary prefixes Ki Mi Gi Ti (powers of 1024) are accepted for bytes. Bandwidth: "bps" is bits per second,
// "Bps" bytes per second (as SimGrid reads them); both are returned in bytes per second. Time: s, ms, us, ns.
// FLOP rates: "f", "flops", "FLOP/s" with a prefix ("4.37Tf" = 4.37e12 FLOP/s).
#pragma once

#include <string>
#include <string_view>

namespace scaletwin {

enum class Quantity { kBytes, kBandwidthBytesPerSec, kSeconds, kFlopsPerSec, kCount };

const char* quantity_name(Quantity q);

// Returns the value in SI base units, or throws InputError(file, json_path, ...) naming what was expected.
double parse_quantity(std::string_view text, Quantity kind, const std::string& file = "",
                      const std::string& json_path = "");

// Human-readable forms for tables: "25.0 MB", "1.25 GB/s", "5.00 us", "4.37 TFLOP/s".
std::string format_bytes(double bytes);
std::string format_bandwidth(double bytes_per_s);
std::string format_seconds(double s);
std::string format_flops(double flops);

}  // namespace scaletwin
