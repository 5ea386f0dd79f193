// mean_pooling_fwd baseline_eager_6_launches: masked mean pooling as sentence-transformers writes
// it in eager PyTorch.
//
//   mask_e = mask.unsqueeze(-1).expand(x.size()).to(x.dtype)   # expand kernel: [b, s, d] materialised
//   summed = torch.sum(x * mask_e, 1)                          # mul kernel, then a sum over dim 1
//   count = torch.clamp(mask_e.sum(1), min=1)                  # a sum over dim 1, then clamp
//   y = summed / count                                         # div kernel
//
// Six launches, two [b, s, d] intermediates in the dtype (the expanded mask and the product), every
// token read whether the mask keeps it or not. The sums over dim 1 accumulate in fp32 and store the
// dtype, as PyTorch's reductions do; the count is stored in the dtype too (bf16 holds integers
// exactly only up to 256: one more rounding of y, which the op's bound counts).
#include <cstdint>

#include "kernels/mean_pooling_fwd/pooling_eager_steps.cuh"

namespace kwb {

// The steps of this baseline alone, in launch order (the mask's three: pooling_eager_steps.cuh).
namespace step {
struct x_times_mask;
struct product_sum_over_seq;
struct divide_by_count;
}  // namespace step

namespace {

template <class T>
void launch_typed(const LaunchArgs& a) {
  const PoolingAxes p = PoolingAxes::of(a.shape);
  const std::int64_t tokens = p.batch * p.seq, n = tokens * p.hidden, hidden = p.hidden;
  const T* x = a.tensor<const T>("x");
  const bool* mask = a.tensor<const bool>("mask");
  T* y = a.tensor<T>("y");
  T* mask_e = static_cast<T*>(a.workspace);
  T* product = mask_e + n;
  T* summed = product + n;
  T* count = summed + p.batch * hidden;
  pooling::expand_mask(mask, mask_e, p, a.stream);
  eager_map<step::x_times_mask>(n, a.stream, [=] __device__(std::int64_t i) {
    product[i] = from_float<T>(to_float(x[i]) * to_float(mask_e[i]));
  });
  pooling::sum_over_seq<step::product_sum_over_seq>(product, summed, p, a.stream);
  pooling::clamped_count(mask_e, count, p, a.stream);
  const std::int64_t outputs = p.batch * hidden;
  eager_map<step::divide_by_count>(outputs, a.stream, [=] __device__(std::int64_t i) {
    y[i] = from_float<T>(to_float(summed[i]) / to_float(count[i]));
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mean_pooling_fwd",
    .name = "baseline_eager_6_launches",
    .role = Role::baseline,
    .description = "op by op as sentence-transformers in eager PyTorch: expand the mask, x * mask, sum(1), "
                   "mask.sum(1), clamp, divide",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const PoolingAxes p = PoolingAxes::of(s);
          const auto n = static_cast<std::size_t>(p.batch * p.seq * p.hidden);
          return (2 * n + 2 * static_cast<std::size_t>(p.batch * p.hidden)) * dtype_size(dtype);
        },
});

}  // namespace
}  // namespace kwb
