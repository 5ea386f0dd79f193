// newton_schulz fused_v2_symmetric_halves_tf32: v1 plus the symmetry of A and B. Both are
// symmetric (A = Y Y^T, B a polynomial in A), so of their 2 x 2 blocks (split at r1 ~ r / 2)
// only the top rows [A11 A12] and A22 are computed, the lower-left block being mirrored from
// the upper-right one by a small transpose kernel:
//
//   [A11 A12] = Y1 Y^T                     # GEMM r1 x r x c
//   A22       = Y2 Y2^T                    # GEMM r2 x r2 x c
//   A21       = A12^T                      # mirror (r1 r2 elements)
//   [B11 B12] = c A[0:r1, :] A + b A[0:r1, :]     # GEMM r1 x r x r, beta = b
//   B22       = c A[r1:, :] A[:, r1:] + b A22     # GEMM r2 x r2 x r, beta = b
//   B21       = B12^T                      # mirror
//   Y'        = B Y + a Y                  # v1's GEMM (the product with Y is not symmetric)
//
// 3/4 of the Gram and of the A A FLOPs: at 4096^2 a step is 3.4e11 FLOP instead of 4.1e11 (83%),
// ~2.25 ms for five steps at ~750 TFLOP/s against v1's ~2.7 ms, plus ten mirrors of 8 MB
// (~5 us each). Each block is rounded once, as in v1, so the error is v1's. The work model counts
// the full products (the op's math), so this variant's TFLOP/s reads up to 1.2x what it executes;
// it declares its executed FLOPs (newton_schulz_symmetric_halves_flops at its split), which its
// % of roof counts.
//
// cuBLASLt plans assume 256-byte-aligned pointers (its default minimum alignment), so r1 is a
// multiple of 128 and the variant refuses Gram matrices under 256 rows (nothing to gain there).
#include <cstdint>
#include <memory>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/newton_schulz/ns_common.cuh"
#include "reference/newton_schulz.hpp"

namespace kwb {
namespace {

using ns::Dims;

std::optional<std::string> refuse(const Shape& s, DType) {
  if (ns::dims_of(s).r < 2 * ns::kSplitAlign)
    return "the symmetric split needs min(rows, cols) >= 256 (halves at a multiple of 128 rows, for cuBLASLt's "
           "256-byte pointer alignment)";
  return std::nullopt;
}

struct Plans {
  std::int64_t r1, r2;
  std::unique_ptr<LtMatmul> gram_top, gram_corner, poly_top, poly_corner, update;
};

// Y's rows [i0, ...) as a GEMM operand: wide, Y = X (r x c, ld c) itself; tall, Y = X^T, so Y's
// rows are X's columns: stored transposed at column offset i0 of X (c x r, ld r).
struct YRows {
  bool transposed;
  std::int64_t ld;
  std::int64_t offset(std::int64_t i0) const { return transposed ? i0 : i0 * ld; }
};
YRows y_rows(const Dims& d) { return d.tall ? YRows{true, d.r} : YRows{false, d.c}; }

std::shared_ptr<void> prepare(const LaunchArgs& args) {
  const Dims d = ns::dims_of(args.shape);
  const DType t = args.dtype;
  const bool tf32 = t == DType::fp32;
  const YRows y = y_rows(d);
  auto p = std::make_shared<Plans>();
  p->r1 = ns::symmetric_split(d.r);
  p->r2 = d.r - p->r1;
  const std::int64_t r = d.r, r1 = p->r1, r2 = p->r2;
  // [A11 A12] = Y1 Y^T: P = Y1 (r1 x c), Q = Y^T (c x r), which is Y's storage read the other way.
  p->gram_top = std::make_unique<LtMatmul>(ns::row_major(r1, r, d.c, y.transposed, y.ld, !y.transposed, y.ld, r, t, tf32));
  p->gram_corner = std::make_unique<LtMatmul>(ns::row_major(r2, r2, d.c, y.transposed, y.ld, !y.transposed, y.ld, r, t, tf32));
  // [B11 B12] = A[0:r1, :] A, B22 = A[r1:, :] A[:, r1:]: plain row-major submatrices of ld r.
  p->poly_top = std::make_unique<LtMatmul>(ns::row_major(r1, r, r, false, r, false, r, r, t, tf32));
  p->poly_corner = std::make_unique<LtMatmul>(ns::row_major(r2, r2, r, false, r, false, r, r, t, tf32));
  p->update = std::make_unique<LtMatmul>(d.tall ? ns::update_tall_in_place_layout(d, t, tf32) : ns::update_contig(d, t, tf32));
  return p;
}

// m[r1 + i][j] = m[j][r1 + i] for i < r2, j < r1 (ld ld): the lower-left block from the
// upper-right one, through a 32 x 33 shared tile so that both sides are read and written along
// rows.
template <class T>
__global__ void mirror_upper_right(T* m, std::int64_t ld, std::int64_t r1, std::int64_t r2) {
  __shared__ T tile[32][33];  // (source row j, source column i), padded against bank conflicts
  const std::int64_t j0 = std::int64_t{blockIdx.y} * 32, i0 = std::int64_t{blockIdx.x} * 32;
  for (int dy = threadIdx.y; dy < 32; dy += 8) {
    const std::int64_t j = j0 + dy, i = i0 + threadIdx.x;
    if (j < r1 && i < r2) tile[dy][threadIdx.x] = m[j * ld + r1 + i];
  }
  __syncthreads();
  for (int dy = threadIdx.y; dy < 32; dy += 8) {
    const std::int64_t i = i0 + dy, j = j0 + threadIdx.x;
    if (i < r2 && j < r1) m[(r1 + i) * ld + j] = tile[threadIdx.x][dy];
  }
}

template <class T>
void mirror(T* m, std::int64_t ld, std::int64_t r1, std::int64_t r2, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((r2 + 31) / 32), static_cast<unsigned>((r1 + 31) / 32));
  mirror_upper_right<<<grid, dim3(32, 8), 0, stream>>>(m, ld, r1, r2);
}

// What this variant executes: G in and X out as the op's model counts them, and the FLOPs of the
// blocks it computes at its split (the mirrored blocks cost no arithmetic).
WorkModel executed_work(const Shape& s, DType dtype) {
  const Dims d = ns::dims_of(s);
  return {2.0 * static_cast<double>(d.m * d.n) * static_cast<double>(dtype_size(dtype)),
          newton_schulz_symmetric_halves_flops(d.m, d.n, ns::symmetric_split(d.r))};
}

template <class T>
void launch(const LaunchArgs& args) {
  const Dims d = ns::dims_of(args.shape);
  const ns::FusedLayout l = ns::fused_layout(d, args.dtype);
  char* ws = static_cast<char*>(args.workspace);
  const T* g = args.tensor<const T>("G");
  T* out = args.tensor<T>("X");
  float* partials = reinterpret_cast<float*>(ws + l.partials);
  T* a = reinterpret_cast<T*>(ws + l.a);
  T* b = reinterpret_cast<T*>(ws + l.b);
  T* xbuf = reinterpret_cast<T*>(ws + l.x);
  const Plans& p = args.state_as<Plans>();
  const YRows y = y_rows(d);
  const std::int64_t mn = d.m * d.n, r = d.r, r1 = p.r1;
  const std::int64_t corner = r1 * r + r1;  // element offset of the (r1, r1) block
  const float ca = static_cast<float>(kNsA), cb = static_cast<float>(kNsB), cc = static_cast<float>(kNsC);
  cudaStream_t st = args.stream;
  void* lt_ws = args.workspace;

  ns::launch_sum_squares(g, mn, partials, st);
  ns::launch_scale_by_inverse_norm(g, partials, mn, xbuf, st);

  static_assert(kNsSteps % 2 == 1, "the ping-pong below ends in the output for an odd step count");
  T* x[2] = {xbuf, out};
  for (int step = 0; step < kNsSteps; ++step) {
    const T* cur = x[step % 2];
    T* next = x[(step + 1) % 2];
    const T* y1 = cur;
    const T* y2 = cur + y.offset(r1);
    p.gram_top->run(cur, y1, a, lt_ws, st);              // [A11 A12] = Y1 Y^T (run(Q, P, C))
    p.gram_corner->run(y2, y2, a + corner, lt_ws, st);   // A22 = Y2 Y2^T
    mirror(a, r, r1, p.r2, st);                          // A21 = A12^T
    p.poly_top->run(a, a, b, lt_ws, st, cc, cb, a);      // [B11 B12] = c A[0:r1,:] A + b A[0:r1,:]
    p.poly_corner->run(a + r1, a + r1 * r, b + corner, lt_ws, st, cc, cb, a + corner);  // B22
    mirror(b, r, r1, p.r2, st);                          // B21 = B12^T
    if (d.tall)  // X' = X B^T + a X, as v1
      p.update->run(b, cur, next, lt_ws, st, 1.0f, ca, cur);
    else
      p.update->run(cur, b, next, lt_ws, st, 1.0f, ca, cur);
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "newton_schulz",
    .name = "fused_v2_symmetric_halves_tf32",
    .role = Role::fused,
    .description = "v1 computing only 3 of the 4 blocks of the symmetric A and B (2 GEMMs each, a mirror kernel "
                   "for the 4th): 83% of v1's FLOPs at square shapes, fp32 in tf32",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = refuse,
    .workspace_bytes = [](const Shape& s, DType dtype) { return ns::fused_layout(ns::dims_of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .executed_work = executed_work,
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
