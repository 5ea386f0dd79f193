// The one place the app turns numbers into text: times, rates, percentages, ratios, byte counts.
// The table, the charts' hover text, the case detail and the CSV export all call these, so a
// figure reads the same wherever it appears. A value that was not measured is NaN and prints "-".
#pragma once

#include <cstdint>
#include <string>

namespace kwb::gui {

std::string format_time_us(double us);         // "12.3 us", "1.25 ms", "-"
std::string format_gbps(double gbps);          // "2950 GB/s"
std::string format_tflops(double tflops);      // "312.4 TFLOP/s"
std::string format_percent(double pct);        // "87.1%"
std::string format_ratio(double ratio);        // "1.83x"
std::string format_bytes(std::int64_t bytes);  // "80 GiB", "50 MiB", "512 B"
std::string format_count(double count);        // "1.07 G", "524 k", "96" (SI prefixes)
// A chart tick: few digits, SI-free ("0.1", "25", "1e+04" past 1e5).
std::string format_tick(double value);

}  // namespace kwb::gui
