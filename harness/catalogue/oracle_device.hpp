// The CUDA device that the oracles called on this thread may use for their fp64 products
// (reference/matmul_fp64_gpu.hpp) and their device reductions (Op::device_unaligned_oracle), or
// -1: the CPU alone.
//
// Per thread, and -1 unless the thread sets it. The worker's own thread sets it to its device once
// the context exists, so the oracles it runs between cases use the GPU and nothing else does: not
// the session's parent (which must never initialise CUDA), not a thread whose current device is
// another, and not any thread added later (none computes oracles in the background yet; one that
// did while a case is timed must stay off the GPU). A test that wants
// the GPU path sets it on its own thread.
#pragma once

#include <optional>

namespace kwb {

namespace detail {
inline thread_local int oracle_gpu_device = -1;
}  // namespace detail

inline int oracle_gpu_device() { return detail::oracle_gpu_device; }
inline void set_oracle_gpu_device(int device) { detail::oracle_gpu_device = device; }

// Whether KWB_ORACLE_GPU lets the oracles use the GPU: unset, empty, "1" or "on" yes; "0" or
// "off" no; any other value is read as yes, with one note on stderr per process saying so. Read
// at each call, so that a test can compare both paths in one process.
bool oracle_gpu_allowed();
// The switch's reading of one value (nullptr: unset); nullopt for a value it does not know.
std::optional<bool> read_oracle_gpu_switch(const char* value);

// Whether an oracle called on this thread may run on the GPU now: the thread named a device and
// the switch allows it.
inline bool oracle_device_usable() { return oracle_gpu_device() >= 0 && oracle_gpu_allowed(); }

}  // namespace kwb
