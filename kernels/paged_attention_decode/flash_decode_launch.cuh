// How fused_v1 and fused_v2 launch flash_decode.cuh's kernels: the split plan (how many key splits
// per sequence and kv head, from the GPU's SM count, made once in prepare()), the workspace of the
// split outputs, and the launch of the decode kernel and, with splits, the combine.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/typed_launch.cuh"
#include "kernels/paged_attention_decode/flash_decode.cuh"
#include "reference/paged_attention_decode.hpp"

namespace kwb {
namespace flash_decode {

using paged_decode::PagedDecodeAxes;

// The most blocks a split plan aims at (4 per SM on 256 SMs): bounds the workspace without the GPU.
constexpr std::int64_t kMaxBlocks = 1024;

inline std::int64_t m_tiles(const PagedDecodeAxes& a) { return (a.group() * a.q_len + kRows - 1) / kRows; }
inline std::int64_t base_blocks(const PagedDecodeAxes& a) { return a.batch * a.kv_heads * m_tiles(a); }

// The most splits any GPU's plan uses: one key tile each at least, and no more than kMaxBlocks
// blocks in all once the batch already gives one each.
inline std::int64_t max_splits(const PagedDecodeAxes& a) {
  const std::int64_t tiles = (a.context + kTileKeys - 1) / kTileKeys;
  return std::max<std::int64_t>(1, std::min(tiles, kMaxBlocks / base_blocks(a)));
}

// partial_o (D fp32 per split and output row) and partial_lse (one each), 256-byte aligned.
inline std::size_t split_workspace_bytes(const Shape& s, DType) {
  const auto a = PagedDecodeAxes::of(s);
  if (max_splits(a) == 1) return 0;
  const std::size_t rows = static_cast<std::size_t>(a.batch * a.q_len * a.heads * max_splits(a));
  return (rows * static_cast<std::size_t>(a.head_dim) * 4 + 255) / 256 * 256 + rows * 4;
}

inline std::optional<std::string> refuse(const Shape& s, DType) {
  const auto a = PagedDecodeAxes::of(s);
  if (a.batch > 65535 || a.kv_heads * m_tiles(a) > 65535)
    return "batch and kv_heads * ceil(heads / kv_heads * q_len / 16) must be at most 65535 (grid z and y)";
  return std::nullopt;
}

// Splits so that about sms * blocks_per_sm blocks run, none with less than one key tile; the keys
// of a split are a whole number of tiles.
inline DecodeParams plan(const PagedDecodeAxes& a, bool split, std::int64_t blocks_per_sm) {
  DecodeParams p;
  p.heads = a.heads;
  p.kv_heads = a.kv_heads;
  p.page_size = a.page_size;
  p.pages_per_seq = a.pages_per_seq();
  p.q_len = static_cast<int>(a.q_len);
  p.group = static_cast<int>(a.group());
  p.rows = p.group * p.q_len;
  p.m_tiles = static_cast<int>(m_tiles(a));
  std::int64_t splits = 1;
  if (split) {
    int device = 0, sms = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
    cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "SM count");
    const std::int64_t wanted = (sms * blocks_per_sm + base_blocks(a) - 1) / base_blocks(a);
    splits = std::clamp<std::int64_t>(wanted, 1, max_splits(a));
  }
  const std::int64_t tiles = (a.context + kTileKeys - 1) / kTileKeys;
  p.split_keys = (tiles + splits - 1) / splits * kTileKeys;
  p.splits = static_cast<int>((a.context + p.split_keys - 1) / p.split_keys);
  AttentionParams& m = p.mask;
  m.heads = a.heads;
  m.kv_heads = a.kv_heads;
  m.head_dim = a.head_dim;
  m.causal = true;
  m.scale = 1.0f / std::sqrt(static_cast<float>(a.head_dim));
  return p;
}

template <class T, int D>
void launch_d(const LaunchArgs& a, const DecodeParams& p, int stages) {
  const auto axes = PagedDecodeAxes::of(a.shape);
  auto* kernel = &flash_decode<T, D>;
  static const cudaError_t attribute =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes<D>(kMaxStages));
  cuda_check(attribute, "cudaFuncSetAttribute (flash_decode shared memory)");
  const std::int64_t out_rows = axes.batch * axes.q_len * axes.heads;
  float* partial_o = static_cast<float*>(a.workspace);
  float* partial_lse = p.splits > 1
      ? reinterpret_cast<float*>(static_cast<char*>(a.workspace) +
                                 (static_cast<std::size_t>(out_rows * max_splits(axes) * D) * 4 + 255) / 256 * 256)
      : nullptr;
  const dim3 grid(static_cast<unsigned>(p.splits), static_cast<unsigned>(axes.kv_heads * p.m_tiles),
                  static_cast<unsigned>(axes.batch));
  const auto* lengths = a.tensor<const std::int32_t>("context_lens");
  kernel<<<grid, kThreads, smem_bytes<D>(stages), a.stream>>>(
      a.tensor<const T>("q"), a.tensor<const T>("k_cache"), a.tensor<const T>("v_cache"),
      a.tensor<const std::int32_t>("block_tables"), lengths, a.tensor<T>("o"), partial_o, partial_lse, p, stages);
  if (p.splits > 1)
    combine_splits<T, D><<<static_cast<unsigned>((out_rows + kWarps - 1) / kWarps), kThreads, 0, a.stream>>>(
        partial_o, partial_lse, lengths, a.tensor<T>("o"), p, out_rows);
}

// prepare(): the plan, once per case (the SM count is a driver call).
inline std::shared_ptr<void> prepare(const LaunchArgs& a, bool split) {
  const std::int64_t blocks_per_sm = split ? a.tunable("blocks_per_sm") : 1;
  return std::make_shared<DecodeParams>(plan(PagedDecodeAxes::of(a.shape), split, blocks_per_sm));
}

template <class T>
void launch(const LaunchArgs& a) {
  const DecodeParams& p = a.state_as<DecodeParams>();
  const int stages = static_cast<int>(a.tunable("stages"));
  if (stages < 2 || stages > kMaxStages) throw std::invalid_argument("flash decode: stages must be 2, 3 or 4");
  if (a.shape.at("head_dim") == 64) launch_d<T, 64>(a, p, stages);
  else launch_d<T, 128>(a, p, stages);
}

}  // namespace flash_decode
}  // namespace kwb
