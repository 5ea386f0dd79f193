// Compares a kernel's outputs with the oracle's: the verification half of every case.
//
// Per element |got - ref| <= atol + rtol*|ref| (+ the error-bound terms of Tolerance, scaled by
// the magnitudes the oracle gave for that element), with each output's own element type and
// tolerance; besides, the relative L2 error, max abs and rel error, NaN/Inf mismatches and
// unwritten (still poisoned) elements, per output and in total. The device scan's counts of the
// whole tensor join the comparison: a non-finite element the scan found beyond the ones the
// comparison saw is a failure (outside the sample the oracle is taken as finite), and so is
// any poison anywhere. An output that is all zeros fails even where every element happens to
// sit within atol of a tiny reference.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <optional>

#include "harness/catalogue/registry.hpp"
#include "harness/record/record.hpp"
#include "harness/worker/verify/device_scan.hpp"

namespace kwb {

// One output as the verifier sees it.
struct OutputToCheck {
  std::string name;
  ElemType elem = ElemType::fp32;  // concrete
  Tolerance tolerance;
  std::int64_t elements_total = 0;  // of the whole tensor (>= the elements compared)
  bool sampled = false;
  std::optional<ScanCounts> scan;   // the device scan of the whole tensor, when it ran
  bool minus_inf_is_value = false;  // TensorSpec::minus_inf_is_value
};

// The oracle's per-element magnitudes of one output (HostTensor::abs_sum, ::root_sum_sq), one
// per expected element; empty spans when the oracle gives none.
struct ErrorMagnitudes {
  std::span<const double> abs_sum;
  std::span<const double> root_sum_sq;
};

// Accumulates the comparison of one or more output tensors into a VerifyResult.
class Verifier {
 public:
  Verifier() = default;
  // For outputs of the case dtype, all checked with one tolerance (the compare() below).
  Verifier(DType dtype, Tolerance tolerance);

  // `got` holds `expected.size()` elements of `out.elem`, as copied back from the device. An
  // output whose tolerance is an error bound needs the magnitudes (std::invalid_argument
  // naming it otherwise: the op declared a bound its oracle does not feed).
  void compare(const OutputToCheck& out, std::span<const unsigned char> got,
               std::span<const double> expected, const ErrorMagnitudes& magnitudes = {});
  // The same for an output of the constructor's dtype and tolerance, compared in full.
  void compare(const std::string& tensor, std::span<const unsigned char> got,
               std::span<const double> expected);

  // Final verdict; rows describe the sampling (rows_checked == rows_total: everything checked).
  VerifyResult finish(std::int64_t rows_checked, std::int64_t rows_total);

  static constexpr std::size_t kMismatchesKept = 8;

 private:
  DType dtype_ = DType::fp32;
  Tolerance tol_;
  VerifyResult result_;
  double err_sq_ = 0, ref_sq_ = 0;
  std::int64_t nonzero_outputs_ = 0, nonzero_refs_ = 0;
};

// Rows to check: all of them while the case is small (16M elements, or 512 rows), otherwise 16
// blocks of kSampleBlockRows rows: the first and the last block always, and one block drawn from
// the seed in each of 14 equal strata between them (so a defect that sits at fixed rows cannot
// hide from every run, and the same seed samples the same rows).
inline constexpr std::int64_t kSampleBlockRows = 32;
std::vector<std::int64_t> rows_to_verify(std::int64_t rows, std::int64_t row_elements, std::uint64_t seed);
// The first row of each block rows_to_verify() samples (empty when it checks every row).
std::vector<std::int64_t> sampled_block_starts(std::int64_t rows, std::int64_t row_elements, std::uint64_t seed);

// The reason a failed case shows: counts, tolerance, and which outputs failed how.
std::string failure_reason(const VerifyResult& result);

}  // namespace kwb
