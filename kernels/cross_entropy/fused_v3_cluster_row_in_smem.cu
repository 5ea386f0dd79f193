// cross_entropy fused_v3_cluster_row_in_smem: logits read once, dlogits written once, as
// fused_v1, but each CTA of the row's cluster stages its slice in dynamic SHARED memory
// (16-byte cp.async) instead of registers, so that several small CTAs share an SM and overlap.
//
// Why fused_v1 stops near two thirds of copy (8192 x 128256 bf16): its CTAs hold the slice in
// registers (512 threads x 4 vectors, ~60 registers), 2 per SM, and each alternates load-all /
// cluster barrier / write-all. While a CTA waits at the barrier for the slowest CTA of its
// cluster, or drains its last loads, the SM has at most one other CTA issuing memory traffic;
// and 8-CTA clusters of big CTAs are hard to place (one GPC must hold all 8).
//
// Here (kernels/common/cluster_row_smem.cuh): a slice of 128256 bf16 / 8 = 2004 vectors is
// 31 KiB of shared memory and 256 threads x ~30 registers, so 6 CTAs fit per SM (228 KiB of
// shared memory; 1536 threads): while some wait at their cluster barrier or compute, the others
// have ~100 KiB of loads in flight per SM (Little: 3 TB/s x ~1 us / 132 SMs needs ~23 KiB).
// Clusters of small CTAs also pack into a GPC more easily. Stats are two passes over shared
// memory (max, then sum; shared memory has ~10x the SM's share of DRAM bandwidth), the
// gradient a third pass, written with 16-byte stores.
//
// Napkin math: traffic is the op's minimum (read T*V, write T*V, plus labels and T+1 floats):
// 4.2 GB at 8192 x 128256 bf16; at 90% of the 3031 GB/s copy ceiling that is ~1.54 ms. Expected:
// 85-90% of copy at 128256 and 151936 (6 and 5 CTAs per SM), ~85% at 262144 (64 KiB slices,
// 3 CTAs per SM; the cluster=16 tunable halves them), 80-85% at 32000 (a cluster of 4 with
// 16 KiB slices, rows short enough that the launch tail and the two extra launches show).
//
// Tunables: `cluster` (8, 2, 4, 16): CTAs per row for long rows (16 is non-portable, allowed on
// H100/H200; shorter rows use fewer CTAs, see crow::plan_for); `threads` per CTA (256, 128, 512).
// A configuration whose slice exceeds one CTA's shared memory (220 KiB) throws at launch; the
// default (8, 256) holds every row up to 220 KiB x 8 (> 262144 fp32) and is what refuse() checks.
//
// Launches (3), semantics and workspace as fused_v1: count valid labels, the cluster kernel,
// the mean of the row losses (kernels/cross_entropy/loss_reductions.cuh; deterministic, no
// float atomics). Ignored rows (-100) skip the load and write zeros. Workspace 4 * (tokens + 1)
// bytes. Rows need not be 16-byte aligned (odd vocab): rank 0 takes the scalar head and tail.
#include <cstdint>
#include <string>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/cluster_row_smem.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/cross_entropy/loss_reductions.cuh"
#include "reference/cross_entropy.hpp"

namespace kwb {
namespace {

constexpr int kDefaultCluster = 8;
constexpr int kDefaultThreads = 256;

// One cluster per row: blockIdx.x = row * C + rank. per_cta: body vectors per CTA.
template <class T>
__global__ void __launch_bounds__(512)
xent_v3_kernel(const T* __restrict__ logits, const int* __restrict__ labels, T* __restrict__ dlogits,
               float* __restrict__ row_loss, const float* __restrict__ n_valid, int vocab, int per_cta) {
  constexpr int E = 16 / sizeof(T);
  using P = Pack<T, E>;
  extern __shared__ uint4 slice[];  // this CTA's body vectors [v0, v1)
  __shared__ float scratch[32];
  __shared__ crow::MaxSum published, row_state;

  const crow::cg::cluster_group cluster = crow::cg::this_cluster();
  const int C = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  const std::int64_t row = blockIdx.x / C;
  const T* xr = logits + row * vocab;
  T* gr = dlogits + row * vocab;
  const int label = labels[row];
  const crow::Slice<T> s(xr, vocab, rank, per_cta);
  const int n = s.count();
  const bool has_edge = s.has_edge();
  const int edge_col = s.edge_col();
  uint4* gb = reinterpret_cast<uint4*>(gr + s.head) + s.v0;

  if (!cross_entropy_label_counts(label, vocab)) {
    // Ignored row (the same for the whole cluster, so no CTA waits at a barrier): zeros.
    for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) gb[i] = make_uint4(0, 0, 0, 0);
    if (has_edge) gr[edge_col] = from_float<T>(0.0f);
    if (rank == 0 && threadIdx.x == 0) row_loss[row] = 0.0f;
    return;
  }

  crow::load_slice_async(slice, reinterpret_cast<const uint4*>(xr + s.head) + s.v0, n);
  const float edge = has_edge ? to_float(xr[edge_col]) : -INFINITY;
  const crow::MaxSum mine = crow::slice_max_sum<T>(slice, n, has_edge, edge, scratch);
  const crow::MaxSum total = crow::cluster_combine(mine, &published, &row_state);  // arrived; finish below

  const float inv_n = 1.0f / *n_valid;  // >= 1: this row counts
  if (rank == 0 && threadIdx.x == 0) row_loss[row] = total.max + logf(total.sum) - to_float(xr[label]);
  // dlogits = exp(x - M) / (S n_valid) - onehot(label) / n_valid
  const float scale = inv_n / total.sum;
  const float max_l2 = total.max * crow::kLog2e;
  if (has_edge)
    gr[edge_col] =
        from_float<T>(exp2f(fmaf(edge, crow::kLog2e, -max_l2)) * scale - (edge_col == label ? inv_n : 0.0f));
  const int col_base = s.head + s.v0 * E;
  crow::write_slice<T>(gb, slice, n, [&](const P& in, int i, P& out) {
    const int col0 = col_base + i * E;
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const float p = exp2f(fmaf(to_float(in.v[e]), crow::kLog2e, -max_l2)) * scale;
      out.v[e] = from_float<T>(col0 + e == label ? p - inv_n : p);
    }
  });
  crow::cluster_finish();
}

std::size_t workspace_bytes(const Shape& s, DType) {
  return (static_cast<std::size_t>(CrossEntropyAxes::of(s).tokens) + 1) * sizeof(float);
}

template <class T>
void launch(const LaunchArgs& a) {
  const auto [tokens, vocab] = CrossEntropyAxes::of(a.shape);
  float* row_loss = static_cast<float*>(a.workspace);
  float* n_valid = row_loss + tokens;
  const auto* labels = a.tensor<const std::int32_t>("labels");
  std::string why;
  const auto plan = crow::plan_for(tokens, vocab, sizeof(T), static_cast<int>(a.tunable("cluster")),
                                   static_cast<int>(a.tunable("threads")), &why);
  if (!plan) throw std::runtime_error("cross_entropy fused_v3: " + why);
  xent::count_valid_kernel<<<1, 1024, 0, a.stream>>>(labels, tokens, vocab, n_valid);
  crow::launch_clustered(xent_v3_kernel<T>, *plan, tokens, a.stream, a.tensor<const T>("logits"), labels,
                         a.tensor<T>("dlogits"), row_loss, static_cast<const float*>(n_valid),
                         static_cast<int>(vocab), plan->per_cta);
  xent::mean_loss_kernel<<<1, 1024, 0, a.stream>>>(row_loss, tokens, n_valid, a.tensor<float>("loss"));
}

KWB_REGISTER_VARIANT(Variant{
    .op = "cross_entropy",
    .name = "fused_v3_cluster_row_in_smem",
    .role = Role::fused,
    .description = "a cluster of CTAs stages each row in shared memory (cp.async), several CTAs per SM overlap "
                   "load / DSMEM combine / write; one read, one write; label count and mean loss in one-block launches",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          std::string why;
          const auto [tokens, vocab] = CrossEntropyAxes::of(s);
          if (!crow::plan_for(tokens, vocab, dtype_size(dtype), kDefaultCluster, kDefaultThreads, &why))
            return why;
          return std::nullopt;
        },
    .workspace_bytes = workspace_bytes,
    .tunables = {{"cluster", {kDefaultCluster, 2, 4, 16},
                  "CTAs per row for long rows (16: non-portable cluster size); shorter rows take fewer"},
                 {"threads", {kDefaultThreads, 128, 512}, "threads per CTA"}},
});

}  // namespace
}  // namespace kwb
