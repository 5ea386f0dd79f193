// Element-wise comparison against the fp64 oracle, and the choice of rows to verify.
#include "harness/worker/verify/verify.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/parallel_chunks.hpp"
#include "harness/worker/prepare/draws.hpp"

namespace kwb {

Verifier::Verifier(DType dtype, Tolerance tolerance) : dtype_(dtype), tol_(tolerance) {}

void Verifier::compare(const std::string& tensor, std::span<const unsigned char> got,
                       std::span<const double> expected) {
  const auto n = static_cast<std::int64_t>(expected.size());
  compare(OutputToCheck{tensor, elem_type_of(dtype_), tol_, n, false, std::nullopt}, got, expected);
}

namespace {

// The magnitude at element i, or 0 when the tolerance does not scale with it.
double magnitude_at(std::span<const double> m, double scale, std::size_t i) { return scale > 0 ? m[i] : 0.0; }

void check_magnitudes(const OutputToCheck& out, std::size_t n, const ErrorMagnitudes& m) {
  const auto need = [&](std::span<const double> values, double scale, const char* what) {
    if (scale > 0 && values.size() != n)
      throw std::invalid_argument(fmt::format(
          "output '{}': its tolerance scales with {} but the oracle gave {} of them for {} elements; fill "
          "HostTensor::{} in the op's oracle (harness/catalogue/tolerance.hpp)",
          out.name, what, values.size(), n, what));
  };
  need(m.abs_sum, out.tolerance.abs_sum_scale, "abs_sum");
  need(m.root_sum_sq, out.tolerance.root_sum_sq_scale, "root_sum_sq");
}

// What one chunk of an output's elements contributes; chunks are combined in order
// (harness/catalogue/parallel_chunks.hpp), so the sums and the first mismatches do not depend on
// the number of host threads.
struct ChunkTally {
  std::int64_t checked = 0, unwritten = 0, nonfinite = 0, minus_inf = 0, nonfinite_mismatches = 0, mismatches = 0;
  std::int64_t nonzero_refs = 0, nonzero_outputs = 0;
  double max_abs_err = 0, max_rel_err = 0, worst_bound_fraction = 0, err_sq = 0, ref_sq = 0;
  std::vector<Mismatch> first_mismatches;  // at most kMismatchesKept, in element order
};

ChunkTally tally_chunk(const OutputToCheck& out, std::span<const unsigned char> got, std::span<const double> expected,
                       const ErrorMagnitudes& magnitudes, std::int64_t begin, std::int64_t end, std::size_t keep) {
  const std::size_t esize = elem_size(out.elem);
  const Tolerance& tol = out.tolerance;
  ChunkTally t;
  std::vector<double> values(static_cast<std::size_t>(end - begin));
  decode_elements(got.data() + begin * esize, out.elem, end - begin, values.data());
  for (std::int64_t i = begin; i < end; ++i) {
    const unsigned char* bytes = got.data() + i * esize;
    const double ref = expected[i];
    ++t.checked;
    if (ref != 0) ++t.nonzero_refs;
    bool bad = false;
    double value = values[i - begin];
    if (is_poison(bytes, out.elem)) {
      ++t.unwritten;
      bad = true;
      value = NAN;
    } else {
      if (value != 0) ++t.nonzero_outputs;
      if (!std::isfinite(value)) ++t.nonfinite;
      if (value == -INFINITY) ++t.minus_inf;
      if (std::isfinite(value) != std::isfinite(ref) ||
          (!std::isfinite(ref) && !(std::isnan(ref) && std::isnan(value)) && value != ref)) {
        ++t.nonfinite_mismatches;
        bad = true;
      } else if (std::isfinite(ref)) {
        const double abs_err = std::fabs(value - ref);
        // Relative error against max(|ref|, atol): near zero the absolute tolerance governs.
        const double rel_err = abs_err / std::max(std::fabs(ref), std::max(tol.atol, 1e-300));
        t.max_abs_err = std::max(t.max_abs_err, abs_err);
        t.max_rel_err = std::max(t.max_rel_err, rel_err);
        t.err_sq += abs_err * abs_err;
        t.ref_sq += ref * ref;
        const auto at = static_cast<std::size_t>(i);
        const double bound = tol.atol + tol.rtol * std::fabs(ref) +
                             tol.abs_sum_scale * magnitude_at(magnitudes.abs_sum, tol.abs_sum_scale, at) +
                             tol.root_sum_sq_scale * magnitude_at(magnitudes.root_sum_sq, tol.root_sum_sq_scale, at);
        // A zero bound (an exact integer output, a term-free element) admits no error at all.
        const double fraction = bound > 0 ? abs_err / bound : (abs_err > 0 ? INFINITY : 0.0);
        t.worst_bound_fraction = std::max(t.worst_bound_fraction, fraction);
        if (abs_err > bound) {
          ++t.mismatches;
          bad = true;
        }
      }
    }
    if (bad && t.first_mismatches.size() < keep) t.first_mismatches.push_back({out.name, i, value, ref});
  }
  return t;
}

}  // namespace

void Verifier::compare(const OutputToCheck& out, std::span<const unsigned char> got,
                       std::span<const double> expected, const ErrorMagnitudes& magnitudes) {
  const Tolerance tol = out.tolerance;
  check_magnitudes(out, expected.size(), magnitudes);
  OutputCheck o;
  o.name = out.name;
  o.elem = out.elem;
  o.atol = tol.atol;
  o.rtol = tol.rtol;
  o.abs_sum_scale = tol.abs_sum_scale;
  o.root_sum_sq_scale = tol.root_sum_sq_scale;
  o.elements_total = out.elements_total;
  o.sampled = out.sampled;
  const auto n = static_cast<std::int64_t>(expected.size());
  std::vector<ChunkTally> tallies(static_cast<std::size_t>(chunk_count(n)));
  const std::size_t keep = kMismatchesKept;
  parallel_chunks(n, [&](std::int64_t c, std::int64_t begin, std::int64_t end) {
    tallies[static_cast<std::size_t>(c)] = tally_chunk(out, got, expected, magnitudes, begin, end, keep);
  });
  std::int64_t host_unwritten = 0, host_nonfinite = 0, host_minus_inf = 0;
  for (const ChunkTally& t : tallies) {
    o.elements_checked += t.checked;
    host_unwritten += t.unwritten;
    host_nonfinite += t.nonfinite;
    host_minus_inf += t.minus_inf;
    o.nonfinite_mismatches += t.nonfinite_mismatches;
    o.mismatches += t.mismatches;
    o.max_abs_err = std::max(o.max_abs_err, t.max_abs_err);
    o.max_rel_err = std::max(o.max_rel_err, t.max_rel_err);
    o.worst_bound_fraction = std::max(o.worst_bound_fraction, t.worst_bound_fraction);
    err_sq_ += t.err_sq;
    ref_sq_ += t.ref_sq;
    nonzero_refs_ += t.nonzero_refs;
    nonzero_outputs_ += t.nonzero_outputs;
    for (const Mismatch& m : t.first_mismatches)
      if (result_.first_mismatches.size() < kMismatchesKept) result_.first_mismatches.push_back(m);
  }
  o.nonfinite = host_nonfinite;
  o.unwritten = host_unwritten;
  if (out.scan) {
    // The scan saw the whole tensor: its counts include what the comparison saw. Non-finite
    // elements beyond those sit where nothing was compared, against an oracle taken as finite
    // (-inf excepted where the output declares it a value).
    o.device_scanned = true;
    o.nonfinite = std::max(out.scan->nonfinite, host_nonfinite);
    o.unwritten = std::max(out.scan->unwritten, host_unwritten);
    const std::int64_t unseen_nonfinite = o.nonfinite - host_nonfinite;
    const std::int64_t unseen_minus_inf = std::max<std::int64_t>(0, out.scan->minus_inf - host_minus_inf);
    o.nonfinite_mismatches +=
        out.minus_inf_is_value ? std::max<std::int64_t>(0, unseen_nonfinite - unseen_minus_inf) : unseen_nonfinite;
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
  result_.worst_bound_fraction = std::max(result_.worst_bound_fraction, o.worst_bound_fraction);
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

std::vector<std::int64_t> sampled_block_starts(std::int64_t rows, std::int64_t row_elements, std::uint64_t seed) {
  constexpr std::int64_t kFullLimitElements = std::int64_t{1} << 24;  // 16M: under a second
  constexpr std::int64_t kBlocks = 16, kStrata = kBlocks - 2;
  if (rows * row_elements <= kFullLimitElements || rows <= kSampleBlockRows * kBlocks) return {};
  // Middle blocks start in [kSampleBlockRows, last - kSampleBlockRows]: they never overlap the
  // first or the last block, so a row just past the first block is sampled only by its stratum.
  const std::int64_t last = rows - kSampleBlockRows;
  const std::int64_t lo = kSampleBlockRows, span = last - kSampleBlockRows - lo + 1;
  std::vector<std::int64_t> starts{0};
  const std::uint64_t key = draws::splitmix64(seed ^ 0x73616d706c65ull);  // "sample"
  for (std::int64_t b = 0; b < kStrata; ++b) {
    const std::int64_t from = lo + span * b / kStrata, to = lo + span * (b + 1) / kStrata;  // [from, to)
    const auto width = static_cast<std::uint64_t>(std::max<std::int64_t>(to - from, 1));
    starts.push_back(from + static_cast<std::int64_t>(draws::element_bits(key, static_cast<std::uint64_t>(b)) % width));
  }
  starts.push_back(last);
  return starts;
}

std::vector<std::int64_t> rows_to_verify(std::int64_t rows, std::int64_t row_elements, std::uint64_t seed) {
  const auto starts = sampled_block_starts(rows, row_elements, seed);
  std::vector<std::int64_t> out;
  if (starts.empty()) {
    out.resize(static_cast<std::size_t>(std::max<std::int64_t>(rows, 0)));
    for (std::int64_t r = 0; r < rows; ++r) out[static_cast<std::size_t>(r)] = r;
    return out;
  }
  for (const std::int64_t start : starts)  // sorted; blocks of neighbouring strata may touch
    for (std::int64_t r = start; r < start + kSampleBlockRows; ++r)
      if (out.empty() || r > out.back()) out.push_back(r);
  return out;
}

std::string failure_reason(const VerifyResult& v) {
  std::string reason = fmt::format(
      "verification failed: {} of {} elements outside their tolerance, {} non-finite, "
      "{} unwritten{}; max abs err {:.3g}, rel L2 {:.3g}",
      v.mismatches, v.elements_checked, v.nonfinite_mismatches, v.unwritten,
      v.all_zero ? ", output all zeros" : "", v.max_abs_err, v.rel_l2_err);
  for (const OutputCheck& o : v.outputs) {
    if (o.passed) continue;
    const std::string bound =
        o.abs_sum_scale > 0 || o.root_sum_sq_scale > 0
            ? fmt::format("error bound atol {:g} + rtol {:g}*|ref| + {:.3g}*sum|term| + {:.3g}*sqrt(sum term^2), worst "
                          "element {:.3g}x its bound",
                          o.atol, o.rtol, o.abs_sum_scale, o.root_sum_sq_scale, o.worst_bound_fraction)
            : fmt::format("atol {:g}, rtol {:g}, worst element {:.3g}x its bound", o.atol, o.rtol,
                          o.worst_bound_fraction);
    reason += fmt::format("; {}: {} mismatches ({}), {} non-finite{}, {} unwritten", o.name, o.mismatches, bound,
                          o.nonfinite,
                          o.device_scanned ? " in the device scan of all " + std::to_string(o.elements_total) +
                                                 " elements"
                                           : "",
                          o.unwritten);
  }
  return reason;
}

}  // namespace kwb
