// linear_bias_relu fused_v4_wgmma_tma_warp_specialized (bf16, fp16; sm_90a): the Hopper kernel.
// kernels/common/hopper/gemm_tn.cuh is the mainloop: a persistent block per SM; a producer thread
// streaming x and W tiles by TMA into a 3-deep ring of 128-byte-swizzled shared memory, two
// consumer warpgroups issuing wgmma m64n256k16 straight from it, y = max(0, acc + b) rounded once
// to the dtype (bias_relu.cuh, as v3) into a swizzled staging tile that TMA stores to y.
//
// What changes from v3 (mma.sync): wgmma reads both operands from shared memory itself, 64 x 256
// x 16 per instruction per warpgroup, so no ldmatrix and no fragment registers; the copies are
// one TMA instruction per tile (no address math, zero-filled edges) and the ring's barriers let
// the producer run Stages - 1 tiles ahead; the persistent grid overlaps a tile's epilogue with
// the next tile's loads.
//
// Napkin math (bf16, 8192^3): 1.10 TFLOP. Per K step a block reads (128 + 256) x 64 x 2 = 48 KB
// for 4.2 MFLOP of MMA (87 FLOP per shared byte, per L2 byte the same): at ~790 TFLOP/s the SMs
// pull ~9 TB/s from L2, within its bandwidth. Expect 600-700 TFLOP/s (1.6-1.8 ms), 80-95% of
// cuBLASLt's epilogue variant; the issue's bar is 90% of it. Measured: docs/results.md. cluster=2
// (W tiles shared by TMA multicast) verifies but measured slower, cause not yet found: the
// default is 1.
//
// fp32 is refused: wgmma's tf32 path reads fp32 operands from shared memory truncated, not rounded
// as v3 and cuBLAS round them, which doubles the operand error the op's tf32 tolerance allows for.
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "kernels/common/hopper/gemm_tn.cuh"
#include "kernels/linear_bias_relu/bias_relu.cuh"

namespace kwb {
namespace {

using hopper::GemmTnMaps;

// The tensor maps of one case, for the tile width and ring depth it was prepared with.
template <class T, int BN, int ClusterM>
struct Prepared {
  const void* x;
  const void* w;
  GemmTnMaps<T, BN, ClusterM> maps;
};

template <class C>
std::shared_ptr<void> prepare_config(const LaunchArgs& a) {
  using T = typename C::Elem;
  using State = Prepared<T, C::kBlockN, C::kClusterM>;
  const LinearArgs<T> l = linear_args<T>(a);
  return std::make_shared<State>(
      State{l.x, l.w, GemmTnMaps<T, C::kBlockN, C::kClusterM>(l.x, l.w, l.y, elem_type_of(a.dtype), l.m, l.n, l.k)});
}

template <class C>
void launch_config(const LaunchArgs& a) {
  using T = typename C::Elem;
  const LinearArgs<T> l = linear_args<T>(a);
  const auto& p = a.state_as<Prepared<T, C::kBlockN, C::kClusterM>>();
  if (p.x != l.x || p.w != l.w) throw std::logic_error("fused_v4: tensors moved since prepare()");
  hopper::launch_gemm_tn<T, C::kBlockN, C::kStages, C::kClusterM>(p.maps, l.m, l.n, l.k,
                                                                  static_cast<int>(a.tunable("group_m")),
                                                                  BiasRelu<T>{l.b, l.n}, a.stream);
}

// The compiled configurations: fn(Config<T, BN, ClusterM>{}) for the case's dtype and tunables,
// each with the deepest ring that fits beside the staging tile (3 stages at 256 wide, 6 at 128).
template <class T, int BN, int ClusterM>
struct Config {
  using Elem = T;
  static constexpr int kBlockN = BN, kClusterM = ClusterM, kStages = hopper::max_gemm_stages<T, BN>();
};

template <class T, int ClusterM, class Fn>
auto with_tile(const LaunchArgs& a, Fn&& fn) {
  const std::int64_t bn = a.tunable("n_tile");
  if (bn == 256) return fn(Config<T, 256, ClusterM>{});
  if (bn == 128) return fn(Config<T, 128, ClusterM>{});
  throw std::invalid_argument("fused_v4: n_tile must be 256 or 128");
}

template <class T, class Fn>
auto with_cluster(const LaunchArgs& a, Fn&& fn) {
  const std::int64_t cluster = a.tunable("cluster");
  if (cluster == 1) return with_tile<T, 1>(a, fn);
  if (cluster == 2) return with_tile<T, 2>(a, fn);
  throw std::invalid_argument("fused_v4: cluster must be 1 or 2");
}

template <class Fn>
auto with_config(const LaunchArgs& a, Fn&& fn) {
  if (a.dtype == DType::fp16) return with_cluster<__half>(a, fn);
  if (a.dtype == DType::bf16) return with_cluster<__nv_bfloat16>(a, fn);
  throw std::invalid_argument("fused_v4: bf16 and fp16 only");
}

KWB_REGISTER_VARIANT(Variant{
    .op = "linear_bias_relu",
    .name = "fused_v4_wgmma_tma_warp_specialized",
    .role = Role::fused,
    .description = "v4 (sm_90a): persistent, warp-specialised; TMA into a 128B-swizzled ring, wgmma m64n256k16 "
                   "from shared memory, bias + ReLU in the epilogue",
    .launch =
        [](const LaunchArgs& a) {
          with_config(a, [&]<class C>(C) { launch_config<C>(a); });
        },
    .refuse = [](const Shape& s, DType dtype) -> std::optional<std::string> {
      if (dtype == DType::fp32)
        return "wgmma's tf32 path truncates fp32 operands (the op's tf32 contract rounds them): fp32 runs in "
               "fused_v3_mma_sync_tf32_cp_async";
      const auto [m, n, k] = LinearAxes::of(s);
      if (k % 8 != 0 || n % 8 != 0)
        return "k and n must be multiples of 8: TMA needs the rows of x, W and y 16-byte aligned (v3 takes any)";
      if (m > (1 << 30) || n > (1 << 30) || k > (1 << 30))
        return "m, n and k must fit TMA's 32-bit coordinates";
      return std::nullopt;
    },
    .tunables = {{"n_tile", {256, 128}, "block tile width (the wgmma N): 128 x 256 (3-stage ring) or 128 x 128 (6)"},
                 {"cluster", {1, 2}, "blocks per cluster along M: 2 share each W tile, loaded once by TMA multicast "
                                     "(measured 1.75x slower on an H100: open)"},
                 {"group_m", {16, 8}, "tile rows visited together, so that blocks in flight share tiles in L2"}},
    .prepare =
        [](const LaunchArgs& a) {
          return with_config(a, [&]<class C>(C) { return prepare_config<C>(a); });
        },
});

}  // namespace
}  // namespace kwb
