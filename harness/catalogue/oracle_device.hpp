// The CUDA device that the oracles called on this thread may use for their fp64 products
// (reference/matmul_fp64_gpu.hpp), or -1: the CPU alone.
//
// Per thread, and -1 unless the thread sets it. The worker's own thread sets it to its device once
// the context exists, so the oracles it runs between cases use the GPU and nothing else does: not
// the session's parent (which must never initialise CUDA), not a thread whose current device is
// another, and not any thread added later (none computes oracles in the background yet; one that
// did while a case is timed must stay off the GPU). A test that wants
// the GPU path sets it on its own thread.
#pragma once

namespace kwb {

namespace detail {
inline thread_local int oracle_gpu_device = -1;
}  // namespace detail

inline int oracle_gpu_device() { return detail::oracle_gpu_device; }
inline void set_oracle_gpu_device(int device) { detail::oracle_gpu_device = device; }

}  // namespace kwb
