// A test-only switch that makes variants slower by a known fraction, so that a GPU run can
// prove that the regression gate (`kwb compare`) catches a real slowdown and names it.
//
//   KWB_TEST_SLOWDOWN=OP:VARIANT:FRACTION[,OP:VARIANT:FRACTION...] kwb run ...
//   e.g. rmsnorm_fwd:fused_v2_vec16:0.05,softmax_fwd:fused_v1_row_per_block:0.05
//
// The worker (which inherits the environment) first times the variant hot with CUDA events (the
// median of 21 launches, just before its timing), and the variant followed by a zero-length spin
// (the extra launch's own cost, a microsecond or two); then in the timed region it follows every
// launch of the variant with a one-thread kernel that spins on %globaltimer for FRACTION x the
// variant's median less that cost. The case's time grows by about FRACTION (the calibration is hot,
// the timing may be cold: a cold case grows by a little less). The
// record's reason and the report's settings say that the switch was on: a slowed result never
// passes for a real one.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kwb {

inline constexpr const char* kTestSlowdownEnv = "KWB_TEST_SLOWDOWN";

struct TestSlowdown {
  std::string op, variant;
  double fraction = 0;  // in (0, 1]
  bool applies_to(const std::string& o, const std::string& v) const { return o == op && v == variant; }
};

// "OP:VARIANT:FRACTION"; std::invalid_argument saying what is wrong and how to write it.
TestSlowdown parse_test_slowdown(const std::string& text);
// A comma list of them; a variant named twice is refused.
std::vector<TestSlowdown> parse_test_slowdowns(const std::string& text);

// The switch from the environment; empty when unset or empty. Throws as parse_test_slowdowns.
std::vector<TestSlowdown> test_slowdowns_from_env();

// The switch's value for `slowdowns` ("OP:VARIANT:FRACTION[,...]"), each fraction at full
// precision (the shortest text that reads back as the same double): parse_test_slowdowns gives
// back exactly these fractions.
std::string test_slowdown_value(const std::vector<TestSlowdown>& slowdowns);

// The report settings that say the switch was on (`kwb run` writes them, `kwb compare --confirm`
// reads them back to give a side's worker the same switch): kTestSlowdownSetting for people,
// "rmsnorm_fwd:fused_v2_vec16 +5% (on purpose, KWB_TEST_SLOWDOWN)" (3 significant digits), and
// kTestSlowdownValueSetting, test_slowdown_value's exact text. Empty when the switch is off.
inline constexpr const char* kTestSlowdownSetting = "test_slowdown";
inline constexpr const char* kTestSlowdownValueSetting = "test_slowdown_value";
std::vector<std::pair<std::string, std::string>> test_slowdown_settings(const std::vector<TestSlowdown>& slowdowns);

// The entry that slows this variant, or null.
const TestSlowdown* find_slowdown(const std::vector<TestSlowdown>& slowdowns, const std::string& op,
                                  const std::string& variant);

// The median of `launches` hot launches of `launch` on `stream`, each timed with CUDA events,
// `reset` (when set) run before each outside the events. Nanoseconds.
double median_launch_ns(const std::function<void(cudaStream_t)>& launch,
                        const std::function<void(cudaStream_t)>& reset, cudaStream_t stream, int launches);

// One thread spinning on the global timer for `ns` nanoseconds, on `stream`.
void launch_spin(cudaStream_t stream, double ns);

}  // namespace kwb
