// test_label_nll (TEST ONLY): per-row negative log-likelihood of int32 labels, with ignored rows.
//
//   loss[r] = logsumexp(logits[r, :]) - logits[r, labels[r]]   (fp32)
//   loss[r] = 0                                  where labels[r] == -100 (ignore index)
//
// Proves the integer generator (labels in [0, vocab) with a fraction set to -100), an int32
// input in a bf16/fp16 case, gathered with its rows when the case is sampled, and a tolerance
// that grows with the vocabulary the log-sum-exp reduces over.
#include <algorithm>
#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/testing/test_ops.hpp"

namespace kwb {
namespace {

constexpr double kIgnoredFraction = 0.1;

std::vector<TensorSpec> label_nll_tensors(const Shape& s, DType) {
  const auto [rows, vocab] = testing_ops::LabelNllAxes::of(s);
  return {
      {.name = "logits", .dims = {rows, vocab}, .sample_dim = 0, .init = Distribution::normal(0.0, 2.0)},
      {.name = "labels", .dims = {rows}, .sample_dim = 0,
       .init = Distribution::integers(0, vocab, kIgnoredFraction, testing_ops::kIgnoreIndex),
       .elem = ElemType::int32},
      {.name = "loss", .dims = {rows}, .is_output = true, .sample_dim = 0, .elem = ElemType::fp32,
       .tolerance = reduction_tolerance(ElemType::fp32, vocab)},
  };
}

void label_nll_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [rows, vocab] = testing_ops::LabelNllAxes::of(shape);
  const auto& logits = in[0].values;
  const auto& labels = in[1].values;
  auto& loss = out[0].values;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto label = static_cast<std::int64_t>(labels[r]);
    if (label == testing_ops::kIgnoreIndex) {
      loss[r] = 0;
      continue;
    }
    const double* row = logits.data() + r * vocab;
    const double max = *std::max_element(row, row + vocab);
    double sum = 0;
    for (std::int64_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - max);
    loss[r] = max + std::log(sum) - row[label];
  }
}

KWB_REGISTER_OP(Op{
    .name = testing_ops::kLabelNll,
    .description = "TEST ONLY: per-row NLL of int32 labels in [0, vocab), rows labelled -100 give 0",
    .axes = {{"rows", 1024, {}, "independent rows (tokens)"}, {"vocab", 1000, {}, "classes"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = label_nll_tensors,
    .work =
        [](const Shape& s, DType dtype) {
          const auto [rows, vocab] = testing_ops::LabelNllAxes::of(s);
          return WorkModel{tensor_bytes(label_nll_tensors(s, dtype), dtype),
                           4.0 * static_cast<double>(rows) * static_cast<double>(vocab)};
        },
    .oracle = label_nll_oracle,
    .sample_axis = "rows",
    .invalid =
        [](const Shape& s) -> std::optional<std::string> {
          const auto [rows, vocab] = testing_ops::LabelNllAxes::of(s);
          if (rows < 1 || vocab < 1) return "rows and vocab must be at least 1";
          if (vocab > 2147483647) return "vocab must fit int32 labels";
          return std::nullopt;
        },
    .test_only = true,
});

}  // namespace
}  // namespace kwb
