// The CUDA device that the oracles called on this thread may use for their fp64 products
// (reference/matmul_fp64_gpu.hpp) and their device reductions (Op::device_unaligned_oracle), or
// -1: the CPU alone.
//
// Per thread, and -1 unless the thread sets it. The worker's own thread sets it to its device once
// the context exists, so the oracles it runs between cases use the GPU and nothing else does: not
// the session's parent (which must never initialise CUDA), not a thread whose current device is
// another, and not any thread added later. A test that wants the GPU path sets it on its own thread.
//
// The worker prepares the next group's oracle on a background thread while the GPU times the
// current group (harness/worker/prepare/group_prefetch.hpp). That thread must stay off the GPU,
// and should not quietly take the CPU's long way where the worker's thread would use the GPU: an
// oracle there that reaches for the device throws OracleNeedsDevice instead, and the worker's
// thread computes that group's oracle in its turn.
#pragma once

#include <optional>
#include <stdexcept>

namespace kwb {

namespace detail {
inline thread_local int oracle_gpu_device = -1;
inline thread_local bool oracle_in_background = false;
}  // namespace detail

inline int oracle_gpu_device() { return detail::oracle_gpu_device; }
inline void set_oracle_gpu_device(int device) { detail::oracle_gpu_device = device; }

// Whether this thread computes oracles in the background, beside a timed case.
inline bool oracle_in_background() { return detail::oracle_in_background; }

// Marks the calling thread as a background oracle thread for the scope's life.
class BackgroundOracleScope {
 public:
  BackgroundOracleScope() : before_(detail::oracle_in_background) { detail::oracle_in_background = true; }
  ~BackgroundOracleScope() { detail::oracle_in_background = before_; }
  BackgroundOracleScope(const BackgroundOracleScope&) = delete;
  BackgroundOracleScope& operator=(const BackgroundOracleScope&) = delete;

 private:
  bool before_;
};

// Thrown on a background oracle thread by an oracle step that the worker's thread would run on
// the GPU: the group's oracle is left to the worker's thread.
struct OracleNeedsDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Whether KWB_ORACLE_GPU lets the oracles use the GPU: unset, empty, "1" or "on" yes; "0" or
// "off" no; any other value is read as yes, with one note on stderr per process saying so. Read
// at each call, so that a test can compare both paths in one process.
bool oracle_gpu_allowed();
// The switch's reading of one value (nullptr: unset); nullopt for a value it does not know.
std::optional<bool> read_oracle_gpu_switch(const char* value);

// Whether an oracle called on this thread may run on the GPU now: the thread named a device and
// the switch allows it.
inline bool oracle_device_usable() { return oracle_gpu_device() >= 0 && oracle_gpu_allowed(); }

// The smallest oracle step (in fp64 multiply-adds) sent to the GPU: 2^27 takes a few milliseconds
// on the worker's cores, about what a GPU call's allocations and copies cost; below it the CPU wins.
inline constexpr double kGpuMinMultiplyAdds = 134217728.0;  // 2^27

// Whether an oracle step of `multiply_adds` goes to the GPU (big enough, and the thread may use
// its device). On a background oracle thread, a step the worker's thread would send there throws
// OracleNeedsDevice, naming `what`, instead of quietly taking the CPU's long way.
bool oracle_step_on_gpu(double multiply_adds, const char* what);

}  // namespace kwb
