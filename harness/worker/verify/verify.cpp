// Element-wise comparison against the fp64 oracle, and the choice of rows to verify.
#include "harness/worker/verify/verify.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "harness/catalogue/host_tensor.hpp"

namespace kwb {

Verifier::Verifier(DType dtype, Tolerance tolerance) : dtype_(dtype), tol_(tolerance) {}

void Verifier::compare(const std::string& tensor, std::span<const unsigned char> got,
                       std::span<const double> expected) {
  const auto n = static_cast<std::int64_t>(expected.size());
  compare(OutputToCheck{tensor, elem_type_of(dtype_), tol_, n, false, std::nullopt}, got, expected);
}

void Verifier::compare(const OutputToCheck& out, std::span<const unsigned char> got,
                       std::span<const double> expected) {
  const std::size_t esize = elem_size(out.elem);
  const Tolerance tol = out.tolerance;
  OutputCheck o;
  o.name = out.name;
  o.elem = out.elem;
  o.atol = tol.atol;
  o.rtol = tol.rtol;
  o.elements_total = out.elements_total;
  o.sampled = out.sampled;
  std::int64_t host_unwritten = 0, host_nonfinite = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const unsigned char* bytes = got.data() + i * esize;
    const double ref = expected[i];
    ++o.elements_checked;
    if (ref != 0) ++nonzero_refs_;
    bool bad = false;
    double value = 0;
    if (is_poison(bytes, out.elem)) {
      ++host_unwritten;
      bad = true;
      value = NAN;
    } else {
      decode_elements(bytes, out.elem, 1, &value);
      if (value != 0) ++nonzero_outputs_;
      if (!std::isfinite(value)) ++host_nonfinite;
      if (std::isfinite(value) != std::isfinite(ref) ||
          (!std::isfinite(ref) && !(std::isnan(ref) && std::isnan(value)) && value != ref)) {
        ++o.nonfinite_mismatches;
        bad = true;
      } else if (std::isfinite(ref)) {
        const double abs_err = std::fabs(value - ref);
        // Relative error against max(|ref|, atol): near zero the absolute tolerance governs.
        const double rel_err = abs_err / std::max(std::fabs(ref), std::max(tol.atol, 1e-300));
        o.max_abs_err = std::max(o.max_abs_err, abs_err);
        o.max_rel_err = std::max(o.max_rel_err, rel_err);
        err_sq_ += abs_err * abs_err;
        ref_sq_ += ref * ref;
        if (abs_err > tol.atol + tol.rtol * std::fabs(ref)) {
          ++o.mismatches;
          bad = true;
        }
      }
    }
    if (bad && result_.first_mismatches.size() < kMismatchesKept)
      result_.first_mismatches.push_back({out.name, static_cast<std::int64_t>(i), value, ref});
  }
  o.nonfinite = host_nonfinite;
  o.unwritten = host_unwritten;
  if (out.scan) {
    // The scan saw the whole tensor: its counts include what the comparison saw. Non-finite
    // elements beyond those sit where nothing was compared, against an oracle taken as finite.
    o.device_scanned = true;
    o.nonfinite = std::max(out.scan->nonfinite, host_nonfinite);
    o.unwritten = std::max(out.scan->unwritten, host_unwritten);
    o.nonfinite_mismatches += o.nonfinite - host_nonfinite;
  }
  o.passed = o.elements_checked > 0 && o.mismatches == 0 && o.nonfinite_mismatches == 0 && o.unwritten == 0;

  if (result_.outputs.empty()) {
    result_.atol = tol.atol;
    result_.rtol = tol.rtol;
  }
  result_.elements_checked += o.elements_checked;
  result_.mismatches += o.mismatches;
  result_.nonfinite_mismatches += o.nonfinite_mismatches;
  result_.unwritten += o.unwritten;
  result_.max_abs_err = std::max(result_.max_abs_err, o.max_abs_err);
  result_.max_rel_err = std::max(result_.max_rel_err, o.max_rel_err);
  result_.outputs.push_back(std::move(o));
}

VerifyResult Verifier::finish(std::int64_t rows_checked, std::int64_t rows_total) {
  VerifyResult r = result_;
  if (r.outputs.empty()) {
    r.atol = tol_.atol;
    r.rtol = tol_.rtol;
  }
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

std::string failure_reason(const VerifyResult& v) {
  std::string reason = fmt::format(
      "verification failed: {} of {} elements outside atol {:g} + rtol {:g}*|ref|, {} non-finite, "
      "{} unwritten{}; max abs err {:.3g}, rel L2 {:.3g}",
      v.mismatches, v.elements_checked, v.atol, v.rtol, v.nonfinite_mismatches, v.unwritten,
      v.all_zero ? ", output all zeros" : "", v.max_abs_err, v.rel_l2_err);
  for (const OutputCheck& o : v.outputs) {
    if (o.passed) continue;
    reason += fmt::format("; {}: {} mismatches (atol {:g}, rtol {:g}), {} non-finite{}, {} unwritten",
                          o.name, o.mismatches, o.atol, o.rtol, o.nonfinite,
                          o.device_scanned ? " in the device scan of all " + std::to_string(o.elements_total) +
                                                 " elements"
                                           : "",
                          o.unwritten);
  }
  return reason;
}

}  // namespace kwb
