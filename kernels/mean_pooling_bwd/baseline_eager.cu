// mean_pooling_bwd baseline_eager_5_launches: the gradient of sentence-transformers' mean pooling
// as eager PyTorch's autograd runs it, with the forward's saved tensors made again (this op's
// inputs are dy and the mask alone).
//
//   mask_e = mask.unsqueeze(-1).expand(dy.size(0), seq, dy.size(1)).to(dy.dtype)  # [b, s, d]
//   count = torch.clamp(mask_e.sum(1), min=1)        # the forward's saved divisor
//   g = dy / count                                    # div's backward
//   dx = g.unsqueeze(1) * mask_e                      # sum's backward (expand) times the mask
//
// Five launches, the expanded mask materialised in the dtype (read back twice), the count stored in
// the dtype (one more rounding of dx: the op's bound counts it).
#include <cstdint>

#include "kernels/mean_pooling_fwd/pooling_eager_steps.cuh"

namespace kwb {

// The steps of this baseline alone, in launch order (the mask's three: pooling_eager_steps.cuh).
namespace step {
struct dy_divide_by_count;
struct expand_times_mask;
}  // namespace step

namespace {

template <class T>
void launch_typed(const LaunchArgs& a) {
  const PoolingAxes p = PoolingAxes::of(a.shape);
  const std::int64_t seq = p.seq, hidden = p.hidden, n = p.batch * seq * hidden, outputs = p.batch * hidden;
  const T* dy = a.tensor<const T>("dy");
  const bool* mask = a.tensor<const bool>("mask");
  T* dx = a.tensor<T>("dx");
  T* mask_e = static_cast<T*>(a.workspace);
  T* count = mask_e + n;
  T* g = count + outputs;
  pooling::expand_mask(mask, mask_e, p, a.stream);
  pooling::clamped_count(mask_e, count, p, a.stream);
  eager_map<step::dy_divide_by_count>(outputs, a.stream, [=] __device__(std::int64_t i) {
    g[i] = from_float<T>(to_float(dy[i]) / to_float(count[i]));
  });
  eager_map<step::expand_times_mask>(n, a.stream, [=] __device__(std::int64_t i) {
    const std::int64_t b = i / (seq * hidden), c = i % hidden;
    dx[i] = from_float<T>(to_float(g[b * hidden + c]) * to_float(mask_e[i]));
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mean_pooling_bwd",
    .name = "baseline_eager_5_launches",
    .role = Role::baseline,
    .description = "op by op as eager PyTorch's autograd: expand the mask, mask.sum(1), clamp, dy / count, "
                   "expand times the mask",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const PoolingAxes p = PoolingAxes::of(s);
          const auto n = static_cast<std::size_t>(p.batch * p.seq * p.hidden);
          return (n + 2 * static_cast<std::size_t>(p.batch * p.hidden)) * dtype_size(dtype);
        },
});

}  // namespace
}  // namespace kwb
