// How a variant launches flash_bwd_v2.cuh's kernel (sm_90a) between the passes of
// flash_bwd_passes.cuh: the case's four TMA tensor maps (Q, K, V, dO), built once in prepare()
// outside timing, then the preprocess, the main kernel and the last pass on a.stream.
// attention_bwd's fused_v2 runs it on dense sequences, attention_varlen_bwd's on packed ones (the
// params' cu_seqlens set: the maps span the packed tokens as one batch).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <stdexcept>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/elem_type.hpp"
#include "harness/catalogue/registry.hpp"
#include "kernels/attention_bwd/flash_bwd_passes.cuh"
#include "kernels/attention_bwd/flash_bwd_v2.cuh"
#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v2_launch.cuh"  // head_map

namespace kwb {
namespace flash {

// The four tensor maps of a case and the tensors they map (the harness keeps a case's tensors
// where prepare() saw them; the launch checks).
struct BwdV2State {
  const void *q = nullptr, *k = nullptr, *v = nullptr, *dout = nullptr;
  CUtensorMap q_map{}, k_map{}, v_map{}, do_map{};
};

inline std::shared_ptr<void> prepare_flash_bwd_v2(const LaunchArgs& a, const AttentionParams& params) {
  const AttentionParams p = as_one_sequence(params);  // packed: one batch of `total` rows
  const ElemType type = elem_type_of(a.dtype);
  auto st = std::make_shared<BwdV2State>();
  st->q = a.tensor<const void>("q");
  st->k = a.tensor<const void>("k");
  st->v = a.tensor<const void>("v");
  st->dout = a.tensor<const void>("do");
  if (p.seq == 0) return st;  // no tokens (every packed sequence empty): nothing to map or launch
  constexpr auto kBM = static_cast<std::uint32_t>(BwdV2Layout<64>::kBM);
  constexpr auto kBN = static_cast<std::uint32_t>(BwdV2Layout<64>::kBN);
  st->q_map = head_map(st->q, type, p, p.heads, kBM);
  st->do_map = head_map(st->dout, type, p, p.heads, kBM);
  st->k_map = head_map(st->k, type, p, p.kv_heads, kBN);
  st->v_map = head_map(st->v, type, p, p.kv_heads, kBN);
  return st;
}

template <class T, int D, bool kPacked>
void launch_flash_bwd_v2_main(const LaunchArgs& a, const AttentionParams& p, const BwdV2State& st,
                              const BwdWorkspace& ws) {
  using L = BwdV2Layout<D>;
  auto* kernel = &flash_bwd_v2<T, D, kPacked>;
  static const cudaError_t attribute =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmemBytes);
  cuda_check(attribute, "cudaFuncSetAttribute (flash_bwd_v2 shared memory)");
  // Key tiles of the (longest) sequence, kv heads, sequences.
  const dim3 grid(static_cast<unsigned>((p.seq + L::kBN - 1) / L::kBN), static_cast<unsigned>(p.kv_heads),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, L::kThreads, L::kSmemBytes, a.stream>>>(st.q_map, st.k_map, st.v_map, st.do_map,
                                                        a.tensor<const float>("lse"), ws.d_sum(a), ws.dq_accum(a),
                                                        a.tensor<T>("dk"), a.tensor<T>("dv"), p);
  cuda_check_launch("flash_bwd_v2");
}

// The three launches; ws is the variant's workspace (BwdWorkspace over its query rows).
template <class T>
void launch_flash_bwd_v2(const LaunchArgs& a, const AttentionParams& p, const BwdWorkspace& ws) {
  const BwdV2State& st = a.state_as<BwdV2State>();
  if (st.q != a.tensor<const void>("q") || st.k != a.tensor<const void>("k") || st.v != a.tensor<const void>("v") ||
      st.dout != a.tensor<const void>("do"))
    throw std::logic_error("fused_v2: tensors moved since prepare()");
  if (as_one_sequence(p).seq == 0) return;  // no tokens: dq, dk and dv are empty
  const bool packed = p.cu_seqlens != nullptr;
  auto run = [&]<int D>() {
    launch_bwd_preprocess<T, D>(a, p, ws, "flash_bwd_v2 preprocess");
    if (packed) launch_flash_bwd_v2_main<T, D, true>(a, p, st, ws);
    else launch_flash_bwd_v2_main<T, D, false>(a, p, st, ws);
    launch_bwd_convert_dq<T, D>(a, p, ws, "flash_bwd_v2 dq");
  };
  if (p.head_dim == 64) run.template operator()<64>();
  else run.template operator()<128>();
}

}  // namespace flash
}  // namespace kwb
