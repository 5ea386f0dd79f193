// The norm backward ops' sources of their row-summed gradients (reference/norm_grad_sources.hpp).
#include "reference/norm_grad_sources.hpp"

#include <utility>

#include "reference/layernorm.hpp"
#include "reference/norm_weight_grad_fp64_gpu.hpp"
#include "reference/qk_norm.hpp"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb::ref {

// x, weight, dy -> dx, dweight
std::vector<NormGradSource> rmsnorm_bwd_grad_sources(const Shape& shape) {
  const auto [rows, cols] = RowsCols::of(shape);
  return {{.x = 0,
           .dy = 2,
           .rows = rows,
           .cols = cols,
           .kind = NormStats::rms_mean,
           .eps = kRmsNormEps,
           .dweight = 1}};
}

// x, weight, dy -> dx, dweight, dbias
std::vector<NormGradSource> layernorm_bwd_grad_sources(const Shape& shape) {
  const auto [rows, cols] = RowsCols::of(shape);
  return {{.x = 0,
           .dy = 2,
           .rows = rows,
           .cols = cols,
           .kind = NormStats::centred,
           .eps = kLayerNormEps,
           .dweight = 1,
           .dbias = 2}};
}

// q, k, q_weight, k_weight, dq_out, dk_out -> dq, dk, dq_weight, dk_weight
std::vector<NormGradSource> qk_norm_bwd_grad_sources(const Shape& shape) {
  const QkNormDims d = QkNormDims::of(shape);
  return {{.x = 0,
           .dy = 4,
           .rows = d.q_vectors(),
           .cols = d.head_dim,
           .kind = NormStats::rms_sum,
           .eps = kQkNormEps,
           .dweight = 2,
           .dweight_magnitudes = false},
          {.x = 1,
           .dy = 5,
           .rows = d.k_vectors(),
           .cols = d.head_dim,
           .kind = NormStats::rms_sum,
           .eps = kQkNormEps,
           .dweight = 3,
           .dweight_magnitudes = false}};
}

void take_norm_grads(const NormGradSource& source, NormWeightGrads& grads,
                     std::vector<HostTensor>& expected) {
  HostTensor& dweight = expected.at(source.dweight);
  dweight.values = std::move(grads.dweight);
  if (source.dweight_magnitudes) {
    dweight.abs_sum = std::move(grads.dweight_abs);
    dweight.root_sum_sq = std::move(grads.dweight_rss);
  }
  if (source.dbias) {
    HostTensor& dbias = expected.at(*source.dbias);
    dbias.values = std::move(grads.dbias);
    dbias.abs_sum = std::move(grads.dbias_abs);
  }
}

void fill_norm_grads_on_device(const DeviceOracleArgs& args,
                               const std::vector<NormGradSource>& sources,
                               std::vector<HostTensor>& expected) {
  for (const NormGradSource& s : sources) {
    NormWeightGrads grads =
        norm_weight_grads_fp64_gpu(args.tensors.at(s.x), args.tensors.at(s.dy), args.dtype, s.rows,
                                   s.cols, s.kind, s.eps, args.stream);
    take_norm_grads(s, grads, expected);
  }
}

}  // namespace kwb::ref
