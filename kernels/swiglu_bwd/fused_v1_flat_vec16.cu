// swiglu_bwd fused_v1_flat_vec16: dgate and dup in one streaming pass (3 reads, 2 writes).
//
// Like swiglu_fwd's v1: the tensors are contiguous [rows, cols], so the kernel streams five
// flat arrays (kernels/common/streaming_map.cuh): 16-byte accesses, 2 packs per tensor per
// thread per step (96 bytes of loads in flight per thread), one wave of resident blocks
// striding over the rest, one checked remainder step and a scalar tail. sigmoid(gate) is
// recomputed from gate (never saved), in fp32 with __expf and the exact reciprocal __frcp_rn:
//   sig = 1 / (1 + exp(-gate)); dup = dout * gate * sig;
//   dgate = dout * up * sig * (1 + gate * (1 - sig))
// Eager PyTorch needs 4 launches for the same (see baseline_eager_4_launches), 3 of them
// writing a full tensor that the next one reads back.
//
// Napkin math, bf16 16384 x 7168: 5 x 235 MB = 1.17 GB; at an H100's ~3030 GB/s copy ceiling,
// 388 us. ~20 instructions per element against the ~34 an H100 can issue per element at that
// rate: still memory-bound, with less slack than the forward. Reads and writes mix 3:2, close
// to a copy's 1:1, so the copy ceiling is the right roof. Expected: >= 90% of copy.
#include "catalogue/registry.hpp"
#include "kernels/common/streaming_map.cuh"

namespace kwb {
namespace {

struct SwigluBackwardMath {
  __device__ __forceinline__ void operator()(const float* in, float* out) const {
    const float gate = in[0], up = in[1], dout = in[2];
    const float sig = __frcp_rn(1.0f + __expf(-gate));
    out[0] = dout * up * sig * (1.0f + gate * (1.0f - sig));  // dgate
    out[1] = dout * (gate * sig);                              // dup
  }
};

void launch(const LaunchArgs& a) {
  const std::int64_t n = a.shape.at("rows") * a.shape.at("cols");
  const int packs = static_cast<int>(a.tunable("packs"));
  const int waves = static_cast<int>(a.tunable("waves"));
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    const StreamTensors<T, 3, 2> t{{static_cast<const T*>(a.tensors[0]), static_cast<const T*>(a.tensors[1]),
                                    static_cast<const T*>(a.tensors[2])},
                                   {static_cast<T*>(a.tensors[3]), static_cast<T*>(a.tensors[4])}};
    switch (packs) {
      case 1: streaming_map<T, 1>(t, n, waves, a.stream, SwigluBackwardMath{}); break;
      case 4: streaming_map<T, 4>(t, n, waves, a.stream, SwigluBackwardMath{}); break;
      default: streaming_map<T, 2>(t, n, waves, a.stream, SwigluBackwardMath{}); break;
    }
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "swiglu_bwd",
    .name = "fused_v1_flat_vec16",
    .role = Role::fused,
    .description = "one pass over flat arrays (3 reads, 2 writes): 2x16-byte packs per tensor per thread, "
                   "one-wave grid-stride grid",
    .launch = launch,
    .refuse = {},
    .workspace_bytes = {},
    .tunables = {{"packs", {2, 1, 4}, "16-byte packs per tensor per thread per grid step"},
                 {"waves", {1, 4, 64}, "grid size in waves of resident blocks (at most; never more than the work)"}},
});

}  // namespace
}  // namespace kwb
