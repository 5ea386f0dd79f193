// Element-wise comparison against the fp64 oracle, and the choice of rows to verify.
#include "verify/verify.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "catalogue/host_tensor.hpp"

namespace kwb {

Verifier::Verifier(DType dtype, Tolerance tolerance) : dtype_(dtype), tol_(tolerance) {
  result_.atol = tolerance.atol;
  result_.rtol = tolerance.rtol;
}

void Verifier::compare(const std::string& tensor, std::span<const unsigned char> got,
                       std::span<const double> expected) {
  const std::size_t esize = dtype_size(dtype_);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const unsigned char* bytes = got.data() + i * esize;
    const double ref = expected[i];
    ++result_.elements_checked;
    if (ref != 0) ++nonzero_refs_;
    bool bad = false;
    double value = 0;
    if (is_poison(bytes, dtype_)) {
      ++result_.unwritten;
      bad = true;
      value = NAN;
    } else {
      decode_dtype(bytes, dtype_, 1, &value);
      if (value != 0) ++nonzero_outputs_;
      if (std::isfinite(value) != std::isfinite(ref) ||
          (!std::isfinite(ref) && !(std::isnan(ref) && std::isnan(value)) && value != ref)) {
        ++result_.nonfinite_mismatches;
        bad = true;
      } else if (std::isfinite(ref)) {
        const double abs_err = std::fabs(value - ref);
        // Relative error against max(|ref|, atol): near zero the absolute tolerance governs.
        const double rel_err = abs_err / std::max(std::fabs(ref), std::max(tol_.atol, 1e-300));
        result_.max_abs_err = std::max(result_.max_abs_err, abs_err);
        result_.max_rel_err = std::max(result_.max_rel_err, rel_err);
        err_sq_ += abs_err * abs_err;
        ref_sq_ += ref * ref;
        if (abs_err > tol_.atol + tol_.rtol * std::fabs(ref)) {
          ++result_.mismatches;
          bad = true;
        }
      }
    }
    if (bad && result_.first_mismatches.size() < kMismatchesKept)
      result_.first_mismatches.push_back({tensor, static_cast<std::int64_t>(i), value, ref});
  }
}

VerifyResult Verifier::finish(std::int64_t rows_checked, std::int64_t rows_total) {
  VerifyResult r = result_;
  r.rows_checked = rows_checked;
  r.rows_total = rows_total;
  r.rel_l2_err = ref_sq_ > 0 ? std::sqrt(err_sq_ / ref_sq_) : std::sqrt(err_sq_);
  r.all_zero = r.elements_checked > 0 && nonzero_outputs_ == 0 && r.unwritten == 0;
  const bool zero_where_reference_is_not = r.all_zero && nonzero_refs_ > 0;
  r.passed = r.elements_checked > 0 && r.mismatches == 0 && r.nonfinite_mismatches == 0 &&
             r.unwritten == 0 && !zero_where_reference_is_not;
  return r;
}

std::vector<std::int64_t> rows_to_verify(std::int64_t rows, std::int64_t row_elements) {
  constexpr std::int64_t kFullLimitElements = std::int64_t{1} << 24;  // 16M: under a second
  constexpr std::int64_t kBlock = 32, kBlocks = 16;
  std::vector<std::int64_t> out;
  if (rows * row_elements <= kFullLimitElements || rows <= kBlock * kBlocks) {
    out.resize(rows);
    for (std::int64_t r = 0; r < rows; ++r) out[r] = r;
    return out;
  }
  // Blocks start evenly from 0 to rows - kBlock, so the first and last rows are always in.
  for (std::int64_t b = 0; b < kBlocks; ++b) {
    const std::int64_t start = (rows - kBlock) * b / (kBlocks - 1);
    for (std::int64_t r = start; r < start + kBlock; ++r)
      if (out.empty() || r > out.back()) out.push_back(r);
  }
  return out;
}

}  // namespace kwb
