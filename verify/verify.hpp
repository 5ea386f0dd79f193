// Compares a kernel's outputs with the oracle's: the verification half of every case.
//
// Per element |got - ref| <= atol + rtol*|ref|; besides, the relative L2 error, max abs and rel
// error, NaN/Inf mismatches and unwritten (still poisoned) elements. An output that is all zeros
// fails even where every element happens to sit within atol of a tiny reference.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "record/record.hpp"
#include "catalogue/registry.hpp"

namespace kwb {

// Accumulates the comparison of one or more output tensors into a VerifyResult.
class Verifier {
 public:
  Verifier(DType dtype, Tolerance tolerance);

  // `got` holds `expected.size()` elements of the dtype, as copied back from the device.
  void compare(const std::string& tensor, std::span<const unsigned char> got,
               std::span<const double> expected);

  // Final verdict; rows describe the sampling (rows_checked == rows_total: everything checked).
  VerifyResult finish(std::int64_t rows_checked, std::int64_t rows_total);

  static constexpr std::size_t kMismatchesKept = 8;

 private:
  DType dtype_;
  Tolerance tol_;
  VerifyResult result_;
  double err_sq_ = 0, ref_sq_ = 0;
  std::int64_t nonzero_outputs_ = 0, nonzero_refs_ = 0;
};

// Rows to check: all of them up to `full_limit_rows`, otherwise blocks of `block` rows spread
// evenly from the first to the last row. Deterministic: the same shape samples the same rows.
std::vector<std::int64_t> rows_to_verify(std::int64_t rows, std::int64_t row_elements);

}  // namespace kwb
