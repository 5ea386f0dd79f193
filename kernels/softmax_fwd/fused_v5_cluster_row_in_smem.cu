// softmax_fwd fused_v5_cluster_row_in_smem: a row split over a thread-block cluster as in
// fused_v3, but each CTA stages its slice in dynamic SHARED memory (16-byte cp.async) instead of
// registers; x read once, y written once from shared memory with 16-byte stores.
//
// Why fused_v3 stops near two thirds of copy at 1024 x 262144 bf16: Nsight Compute shows 1024-thread
// CTAs, 64 registers each, ONE CTA per SM (50% occupancy), and each CTA alternating load-all /
// cluster barrier / write-all: nothing overlaps the barrier and the load drain on that SM.
// Here (kernels/common/cluster_row_smem.cuh) a slice is 256 threads x ~30 registers plus
// row / cluster bytes of shared memory, so the SM holds several CTAs whose phases interleave:
//   262144 bf16, cluster 8: 64 KiB slices, 3 CTAs per SM (cluster 16: 32 KiB, 6 per SM);
//   131072 bf16, cluster 8: 32 KiB, 6 per SM;   32000 bf16: cluster 4, 16 KiB, 8 per SM;
//   4096 bf16: one CTA per row (the cluster shrinks for short rows), 8 KiB, 8 per SM.
// Little's law wants ~23 KiB in flight per SM (3 TB/s x ~1 us / 132 SMs); with 3-8 CTAs per SM,
// one or two in their load phase already cover it while the others reduce, wait or write.
//
// Napkin math: traffic is the minimum (2 streams: read x, write y). At 1024 x 262144 bf16 that
// is 1.07 GB, 354 us at the 3031 GB/s copy ceiling. The remaining losses are the launch tail
// (1024 rows x 8 CTAs = 8192 CTAs over 132 SMs x 3: ~21 waves, the last partly empty, ~3%) and
// the cluster barrier where fewer than 2 CTAs per SM are in a load phase. Expected: 88-92% of
// copy at 131072 and 262144 bf16 (262144 likely best at cluster=16), ~90% at 4096..32000.
// Rows that do not fit on chip across one cluster (> 8 x 220 KiB = 1.76 MB: 880K bf16 / 440K
// fp32 elements at the default cluster of 8; 16 x 220 KiB with cluster=16) are refused:
// fused_v2_online_two_pass covers them, and they are capped by its 3 streams at ~2/3 of copy
// unless the re-read hits L2 (rows up to ~25 MiB across the grid's in-flight rows).
//
// Tunables: `cluster` (8, 2, 4, 16) CTAs per row for long rows (16 is non-portable, allowed on
// H100/H200; short rows take fewer, see crow::plan_for); `threads` per CTA (256, 128, 512);
// `max_slice_kib` (48, 220): the cluster is doubled (up to 16) while a CTA's slice would exceed
// this many KiB. A configuration whose slice exceeds one CTA's shared memory (220 KiB) throws at
// launch; the default (8, 256) holds every default and edge shape and is what refuse() checks
// (the doubling only starts from a plan that exists, so it never changes what is refused).
// Why the slice rule (H100, bf16, same session): 32 KiB slices (6 CTAs per SM) beat both 64 KiB
// ones (3 per SM; 1024 x 262144 at cluster 8) and 16 KiB ones (2048 x 131072 at cluster 16);
// measured: docs/results.md. With the
// default of 48 KiB, rows whose 8-way slices would exceed 48 KiB (more than 196608 bf16 or
// 98304 fp32 elements) take 16 CTAs; every shorter row keeps 8. `max_slice_kib=220` is the
// previous behaviour (the cluster tunable as given).
//
// Numerics: exp(x - M) as exp2f(x log2e - M log2e) (fp32, no flush to zero), (max, sum) per
// slice by block butterfly reductions, combined across the cluster in rank order: the same bits
// in every CTA and every run.
#include <cstdint>
#include <string>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/cluster_row_smem.cuh"
#include "kernels/common/vector_pack.cuh"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kDefaultCluster = 8;
constexpr int kDefaultThreads = 256;
constexpr int kDefaultMaxSliceKib = 48;
constexpr int kDefaultSliceAlign = crow::kSliceAlignBytes;

// crow::plan_for at `cluster`, then the cluster doubled (up to crow::kMaxCluster) while a slice
// exceeds max_slice_kib KiB and the larger cluster still plans.
std::optional<crow::Plan> plan_v5(std::int64_t rows, std::int64_t cols, std::size_t elem_bytes, int cluster,
                                  int threads, std::int64_t max_slice_kib, int align_bytes, std::string* why) {
  auto plan = crow::plan_for(rows, cols, elem_bytes, cluster, threads, why, align_bytes);
  while (plan && static_cast<std::int64_t>(plan->smem_bytes) > max_slice_kib * 1024 && plan->cluster == cluster &&
         cluster < crow::kMaxCluster) {
    cluster *= 2;
    auto larger = crow::plan_for(rows, cols, elem_bytes, cluster, threads, nullptr, align_bytes);
    if (!larger) break;
    plan = larger;
  }
  return plan;
}

// One cluster per row: blockIdx.x = row * C + rank. per_cta: body vectors per CTA.
template <class T>
__global__ void __launch_bounds__(512)
softmax_fwd_v5(const T* __restrict__ x, T* __restrict__ y, int cols, int per_cta) {
  constexpr int E = 16 / sizeof(T);
  using P = Pack<T, E>;
  extern __shared__ uint4 slice[];  // this CTA's body vectors [v0, v1)
  __shared__ float scratch[32];
  __shared__ crow::MaxSum published, row_state;

  const crow::cg::cluster_group cluster = crow::cg::this_cluster();
  const int C = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  const std::int64_t row = blockIdx.x / C;
  const T* xr = x + row * cols;
  T* yr = y + row * cols;
  const crow::Slice<T> s(xr, cols, rank, per_cta);
  const int n = s.count();
  const bool has_edge = s.has_edge();
  const int edge_col = s.edge_col();

  crow::load_slice_async(slice, reinterpret_cast<const uint4*>(xr + s.head) + s.v0, n);
  const float edge = has_edge ? to_float(xr[edge_col]) : -INFINITY;
  const crow::MaxSum mine = crow::slice_max_sum<T>(slice, n, has_edge, edge, scratch);
  const crow::MaxSum total = crow::cluster_combine(mine, &published, &row_state);  // arrived; finish below

  const float inv_sum = 1.0f / total.sum;
  const float max_l2 = total.max * crow::kLog2e;
  if (has_edge) yr[edge_col] = from_float<T>(exp2f(fmaf(edge, crow::kLog2e, -max_l2)) * inv_sum);
  crow::write_slice<T>(reinterpret_cast<uint4*>(yr + s.head) + s.v0, slice, n, [&](const P& in, int, P& out) {
#pragma unroll
    for (int e = 0; e < E; ++e) out.v[e] = from_float<T>(exp2f(fmaf(to_float(in.v[e]), crow::kLog2e, -max_l2)) * inv_sum);
  });
  crow::cluster_finish();
}

template <class T>
void launch(const LaunchArgs& a) {
const auto [rows, cols] = RowsCols::of(a.shape);
  std::string why;
  const auto plan = plan_v5(rows, cols, sizeof(T), static_cast<int>(a.tunable("cluster")),
                            static_cast<int>(a.tunable("threads")), a.tunable("max_slice_kib"),
                            static_cast<int>(a.tunable("slice_align")), &why);
  if (!plan) throw std::runtime_error("softmax_fwd fused_v5: " + why);
  crow::launch_clustered(softmax_fwd_v5<T>, *plan, rows, a.stream, a.tensor<const T>("x"),
                         a.tensor<T>("y"), static_cast<int>(cols), plan->per_cta);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "softmax_fwd",
    .name = "fused_v5_cluster_row_in_smem",
    .role = Role::fused,
    .description = "a row split over a cluster of CTAs staged in shared memory (cp.async), several CTAs per SM "
                   "overlap load / DSMEM combine / write; one read, one write",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          std::string why;
          const auto [rows, cols] = RowsCols::of(s);
          if (!crow::plan_for(rows, cols, dtype_size(dtype), kDefaultCluster, kDefaultThreads, &why))
            return why + "; fused_v2_online_two_pass covers any length";
          return std::nullopt;
        },
    .tunables = {{"cluster", {kDefaultCluster, 2, 4, 16},
                  "CTAs per row for long rows (16: non-portable cluster size); shorter rows take fewer"},
                 {"threads", {kDefaultThreads, 128, 512}, "threads per CTA"},
                 {"max_slice_kib", {kDefaultMaxSliceKib, 220},
                  "the cluster doubles (up to 16) while a CTA's slice would exceed this many KiB (220: never)"},
                 {"slice_align", {kDefaultSliceAlign, 16},
                  "bytes between slice starts rounded up to a multiple of this (128: whole cache lines)"}},
});

}  // namespace
}  // namespace kwb
