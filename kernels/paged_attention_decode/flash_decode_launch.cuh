// How fused_v1, fused_v2 and fused_v3 launch flash_decode.cuh's kernels: the plan (how many key
// splits per sequence and kv head, from the GPU's SM count and the kernel's occupancy, and whether
// the sequences run longest first; fused_v3's pieces; made once in prepare()), the workspace of the
// sequence order or the pieces, the split outputs and their arrival counters, and the launch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/paged_attention_decode/flash_decode.cuh"
#include "kernels/paged_attention_decode/split_plan.hpp"
#include "reference/paged_attention_decode.hpp"

namespace kwb {
namespace flash_decode {

inline std::optional<std::string> refuse(const Shape& s, DType) {
  const auto a = PagedDecodeAxes::of(s);
  if (a.batch > 65535 || a.kv_heads * row_blocks(a) > 65535)
    return "batch and kv_heads * ceil(heads / kv_heads * q_len / 32) must be at most 65535 (grid z and y)";
  return std::nullopt;
}

template <class T, int D, int M, bool kPieces>
auto* kernel_of() {
  auto* kernel = &flash_decode<T, D, M, kPieces>;
  // Once per instantiation: allow the largest ring any `stages` asks for.
  static const cudaError_t attribute =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes<D, M>(kMaxStages));
  cuda_check(attribute, "cudaFuncSetAttribute (flash_decode shared memory)");
  return kernel;
}

// Blocks of this configuration one SM holds at once (shared memory decides: 2 at 3 stages, d128).
template <class T, int D, int M, bool kPieces>
int resident_blocks(int stages) {
  int blocks = 0;
  cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel_of<T, D, M, kPieces>(), kWarps * 32 * M,
                                                           smem_bytes<D, M>(stages)),
             "flash_decode occupancy");
  return std::max(blocks, 1);
}

// The GPU's resident blocks of this configuration: SMs x blocks per SM.
template <class T, int D, int M, bool kPieces>
std::int64_t wave_slots(int stages) {
  int device = 0, sms = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "SM count");
  return static_cast<std::int64_t>(sms) * resident_blocks<T, D, M, kPieces>(stages);
}

// What every schedule's launch shares: the heads, pages and rows, and the causal mask's constants.
inline DecodeParams base_params(const PagedDecodeAxes& a) {
  DecodeParams p;
  p.heads = a.heads;
  p.kv_heads = a.kv_heads;
  p.page_size = a.page_size;
  p.pages_per_seq = a.pages_per_seq();
  p.q_len = static_cast<int>(a.q_len);
  p.group = static_cast<int>(a.group());
  p.rows = p.group * p.q_len;
  p.row_blocks = static_cast<int>(row_blocks(a));
  AttentionParams& m = p.mask;
  m.heads = a.heads;
  m.kv_heads = a.kv_heads;
  m.head_dim = a.head_dim;
  m.causal = true;
  m.scale = 1.0f / std::sqrt(static_cast<float>(a.head_dim));
  return p;
}

// fused_v1's and fused_v2's plan: with `waves` > 0, as many key splits as fill that many waves of
// the GPU's resident blocks (SMs x blocks per SM) without starting a partial one, whole key tiles
// each, counting the blocks that hold keys (plan_split, split_plan.hpp); else one. Splitting past a
// wave's slots leaves a tail wave of few blocks: b8 h32/8 (64 pairs) on an H100 (264 slots at 2 per
// SM) takes 4 splits (256 blocks), not 5 (320: a second wave of 56). Ragged lengths split finer: b16
// q4 ctx8192 h32/8 counts the short sequences' real splits only. A grid of ragged sequences longer
// than one wave runs them longest first (takes_longest_first).
template <class T, int D, int M>
DecodeParams plan(const PagedDecodeAxes& a, int waves, int stages) {
  DecodeParams p = base_params(a);
  const std::int64_t wave = wave_slots<T, D, M, false>(stages);
  const std::int64_t slots = waves > 0 ? waves * wave : 0;
  const KeySplit split = plan_split(a, slots);
  p.split_keys = split.split_keys;
  p.splits = split.splits;
  p.longest_first = takes_longest_first(a, base_blocks(a) * p.splits, wave);
  return p;
}

// Where the launch finds its order, pieces, partials and counters in the workspace.
struct WorkspaceParts {
  const std::int32_t* order = nullptr;
  const Piece* pieces = nullptr;
  const std::int32_t* worker_first = nullptr;
  float* partial_o = nullptr;
  float* partial_lse = nullptr;
  std::uint32_t* arrivals = nullptr;
};

template <bool kPieces>
WorkspaceParts workspace_parts(const PagedDecodeAxes& axes, const DecodeParams& p, void* workspace_ptr) {
  char* workspace = static_cast<char*>(workspace_ptr);
  WorkspaceParts w;
  if constexpr (kPieces) {
    w.worker_first = reinterpret_cast<const std::int32_t*>(workspace);
    w.pieces = reinterpret_cast<const Piece*>(workspace + sk_pieces_offset(axes));
    w.partial_o = reinterpret_cast<float*>(workspace + sk_partial_o_offset(axes));
    w.partial_lse = reinterpret_cast<float*>(workspace + sk_partial_lse_offset(axes));
    w.arrivals = reinterpret_cast<std::uint32_t*>(workspace + sk_counters_offset(axes));
    return w;
  }
  if (p.longest_first) w.order = reinterpret_cast<const std::int32_t*>(workspace);
  if (p.splits > 1) {
    w.partial_o = reinterpret_cast<float*>(workspace + partial_o_offset(axes));
    w.partial_lse = reinterpret_cast<float*>(workspace + partial_lse_offset(axes));
    w.arrivals = reinterpret_cast<std::uint32_t*>(workspace + counters_offset(axes));
  }
  return w;
}

// Each variant's file compiles the kernel of its own schedule only (kPieces: fused_v3's).
template <class T, int D, int M, bool kPieces>
void launch_config(const LaunchArgs& a, const DecodeParams& p, int workers, int stages) {
  const auto axes = PagedDecodeAxes::of(a.shape);
  const WorkspaceParts w = workspace_parts<kPieces>(axes, p, a.workspace);
  const dim3 grid = kPieces ? dim3(static_cast<unsigned>(workers), static_cast<unsigned>(axes.kv_heads * p.row_blocks), 1)
                               : dim3(static_cast<unsigned>(p.splits), static_cast<unsigned>(axes.kv_heads * p.row_blocks),
                                      static_cast<unsigned>(axes.batch));
  auto* kernel = kernel_of<T, D, M, kPieces>();
  kernel<<<grid, kWarps * 32 * M, smem_bytes<D, M>(stages), a.stream>>>(
      a.tensor<const T>("q"), a.tensor<const T>("k_cache"), a.tensor<const T>("v_cache"),
      a.tensor<const std::int32_t>("block_tables"), a.tensor<const std::int32_t>("context_lens"), a.tensor<T>("o"),
      w.order, w.pieces, w.worker_first, w.partial_o, w.partial_lse, w.arrivals, p, stages);
}

// Calls fn.template operator()<T, D, M>() for the case's dtype, head_dim and tiles per block.
template <class Fn>
decltype(auto) dispatch(const LaunchArgs& a, Fn&& fn) {
  const auto axes = PagedDecodeAxes::of(a.shape);
  const bool two = tiles_per_block(axes) == 2;
  auto by_d = [&]<class T>() -> decltype(auto) {
    if (axes.head_dim == 64) return two ? fn.template operator()<T, 64, 2>() : fn.template operator()<T, 64, 1>();
    return two ? fn.template operator()<T, 128, 2>() : fn.template operator()<T, 128, 1>();
  };
  if (a.dtype == DType::bf16) return by_d.template operator()<__nv_bfloat16>();
  if (a.dtype == DType::fp16) return by_d.template operator()<__half>();
  throw std::invalid_argument("flash decode: bf16 and fp16 only");
}

inline int checked_stages(const LaunchArgs& a) {
  const int stages = static_cast<int>(a.tunable("stages"));
  if (stages < 2 || stages > kMaxStages) throw std::invalid_argument("flash decode: stages must be 2, 3 or 4");
  return stages;
}

// The `l2_hint` tunable: plain cp.async, an L2 evict_first policy on K and V, or auto
// (l2_hint.hpp): evict_first where the K and V of the batch's contexts are at most 6x the L2.
inline bool kv_evict_first(const LaunchArgs& a, const PagedDecodeAxes& axes) {
  const auto asked = static_cast<l2::Hint>(a.tunable("l2_hint"));
  if (asked == l2::Hint::kStreaming)
    throw std::invalid_argument("flash decode: l2_hint 2 (ld.global.cs) has no cp.async form; give 1, 3 or 4");
  double keys = 0;
  for (std::int64_t b = 0; b < axes.batch; ++b) keys += static_cast<double>(axes.length(b));
  const double kv_bytes = 2 * keys * static_cast<double>(axes.kv_heads * axes.head_dim * dtype_size(a.dtype));
  return l2::resolve(asked, l2::Hint::kEvictFirst, kv_bytes, l2_cache_bytes()) == l2::Hint::kEvictFirst;
}

inline Tunable kv_l2_hint() {
  return {"l2_hint",
          {static_cast<std::int64_t>(l2::Hint::kAuto), static_cast<std::int64_t>(l2::Hint::kNormal),
           static_cast<std::int64_t>(l2::Hint::kEvictFirst)},
          "L2 hint on the K and V copies: 1 none, 3 an L2 evict_first policy, 4 auto: evict_first where the "
          "K and V read are at most 6x the L2 (kernels/common/l2_hint.hpp says why; 2, ld.global.cs, has no "
          "cp.async form)"};
}

// prepare(): the plan, once per case (the SM count and the occupancy are driver calls); the
// sequence order (fused_v2) or the pieces (fused_v3) copied to the workspace from vectors that live
// as long as the case, and the split counters cleared, which every launch leaves cleared.
struct DecodePlan {
  DecodeParams params;
  std::vector<std::int32_t> order;
  StreamKPlan stream_k;
};

enum class Schedule { one_split, split_kv, stream_k };

// fused_v3's plan reads the lengths back from the device, as a serving stack's planner takes them
// from the host copy it already has: the pieces must end where the sequences end.
inline std::vector<std::int64_t> device_lengths(const LaunchArgs& a, std::int64_t batch) {
  std::vector<std::int32_t> lengths(static_cast<std::size_t>(batch));
  cuda_check(cudaMemcpyAsync(lengths.data(), a.tensor<const std::int32_t>("context_lens"), lengths.size() * 4,
                             cudaMemcpyDeviceToHost, a.stream),
             "read the context lengths back for the stream-K plan");
  cuda_check(cudaStreamSynchronize(a.stream), "read the context lengths back for the stream-K plan");
  return {lengths.begin(), lengths.end()};
}

template <Schedule kSchedule>
std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const int stages = checked_stages(a);
  const int waves = kSchedule == Schedule::one_split ? 0 : static_cast<int>(a.tunable("waves"));
  const auto axes = PagedDecodeAxes::of(a.shape);
  auto plan = std::make_shared<DecodePlan>();
  char* workspace = static_cast<char*>(a.workspace);
  if constexpr (kSchedule == Schedule::stream_k) {
    DecodeParams& p = plan->params;
    p = base_params(axes);
    p.piece_cap = static_cast<int>(max_pieces(axes));
    const std::int64_t slots =
        dispatch(a, [&]<class T, int D, int M>() { return flash_decode::wave_slots<T, D, M, true>(stages); });
    plan->stream_k = stream_k_plan(axes, device_lengths(a, axes.batch), waves * slots / (axes.kv_heads * p.row_blocks));
    const StreamKPlan& sk = plan->stream_k;
    cuda_check(cudaMemcpyAsync(workspace, sk.worker_first.data(), sk.worker_first.size() * 4, cudaMemcpyHostToDevice,
                               a.stream),
               "copy the stream-K workers");
    cuda_check(cudaMemcpyAsync(workspace + sk_pieces_offset(axes), sk.pieces.data(), sk.pieces.size() * sizeof(Piece),
                               cudaMemcpyHostToDevice, a.stream),
               "copy the stream-K pieces");
    cuda_check(cudaMemsetAsync(workspace + sk_counters_offset(axes), 0, counters_bytes(axes), a.stream),
               "clear the stream-K counters");
  } else {
    plan->params =
        dispatch(a, [&]<class T, int D, int M>() { return flash_decode::plan<T, D, M>(axes, waves, stages); });
    if (plan->params.longest_first) {
      plan->order = longest_first(axes);
      cuda_check(cudaMemcpyAsync(workspace, plan->order.data(), plan->order.size() * sizeof(std::int32_t),
                                 cudaMemcpyHostToDevice, a.stream),
                 "copy the flash-decoding sequence order");
    }
    if (plan->params.splits > 1)
      cuda_check(cudaMemsetAsync(workspace + counters_offset(axes), 0, counters_bytes(axes), a.stream),
                 "clear the flash-decoding split counters");
  }
  plan->params.kv_evict_first = kv_evict_first(a, axes);
  return plan;
}

template <Schedule kSchedule>
void launch(const LaunchArgs& a) {
  constexpr bool kPieces = kSchedule == Schedule::stream_k;
  const DecodePlan& plan = a.state_as<DecodePlan>();
  const int stages = checked_stages(a);
  dispatch(a, [&]<class T, int D, int M>() {
    launch_config<T, D, M, kPieces>(a, plan.params, kPieces ? plan.stream_k.workers() : 0, stages);
  });
}

}  // namespace flash_decode
}  // namespace kwb
