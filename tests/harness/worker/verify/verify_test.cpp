// The Verifier's verdicts and statistics on hand-built outputs, and the choice of rows to verify.
#include "harness/worker/verify/verify.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/parallel_chunks.hpp"
#include "harness/catalogue/tolerance.hpp"

namespace kwb {
namespace {

// Seeded normal values, exactly representable in `dtype`, never zero.
std::vector<double> random_reference(DType dtype, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> out(count);
  for (auto& v : out) {
    do v = round_to_dtype(normal(rng), dtype);
    while (v == 0);
  }
  return out;
}

// The bytes a device would hold for `values` in `dtype`.
std::vector<unsigned char> encode(const std::vector<double>& values, DType dtype) {
  std::vector<unsigned char> bytes(values.size() * dtype_size(dtype));
  encode_dtype(values.data(), dtype, static_cast<std::int64_t>(values.size()), bytes.data());
  return bytes;
}

void poison(std::vector<unsigned char>& bytes, DType dtype, std::size_t index) {
  for (std::size_t b = 0; b < dtype_size(dtype); ++b) bytes[index * dtype_size(dtype) + b] = kPoisonByte;
}

VerifyResult verify_one(DType dtype, Tolerance tol, const std::vector<double>& got,
                        const std::vector<double>& expected) {
  Verifier v(dtype, tol);
  v.compare("y", encode(got, dtype), expected);
  return v.finish(1, 1);
}

// ---- verdicts ---------------------------------------------------------------------------

TEST(Verifier, ExactOutputPassesWithZeroError) {
  for (DType dtype : kAllDTypes) {
    // Prepare the reference.
    const std::vector<double> ref = random_reference(dtype, 1000, 7);
    // Run: the "kernel" wrote exactly the reference.
    Verifier v(dtype, default_tolerance(dtype));
    v.compare("y", encode(ref, dtype), ref);
    const VerifyResult r = v.finish(10, 10);
    // Verify.
    EXPECT_TRUE(r.passed) << to_string(dtype);
    EXPECT_EQ(r.elements_checked, 1000);
    EXPECT_EQ(r.mismatches, 0);
    EXPECT_EQ(r.nonfinite_mismatches, 0);
    EXPECT_EQ(r.unwritten, 0);
    EXPECT_FALSE(r.all_zero);
    EXPECT_EQ(r.max_abs_err, 0);
    EXPECT_EQ(r.max_rel_err, 0);
    EXPECT_EQ(r.rel_l2_err, 0);
    EXPECT_TRUE(r.first_mismatches.empty());
    EXPECT_EQ(r.rows_checked, 10);
    EXPECT_EQ(r.rows_total, 10);
    EXPECT_EQ(r.atol, default_tolerance(dtype).atol);
    EXPECT_EQ(r.rtol, default_tolerance(dtype).rtol);
  }
}

TEST(Verifier, AllZeroOutputFailsEvenWithAHugeAtol) {
  const std::vector<double> ref = random_reference(DType::bf16, 512, 11);
  const std::vector<double> zeros(ref.size(), 0.0);
  const VerifyResult r = verify_one(DType::bf16, {1e30, 0}, zeros, ref);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.all_zero);
  EXPECT_EQ(r.mismatches, 0);  // every element is within atol: only the all-zero rule catches it
}

TEST(Verifier, AllZeroOutputPassesWhereTheReferenceIsAllZeroToo) {
  const std::vector<double> zeros(64, 0.0);
  const VerifyResult r = verify_one(DType::fp32, default_tolerance(DType::fp32), zeros, zeros);
  EXPECT_TRUE(r.all_zero);
  EXPECT_TRUE(r.passed);
}

TEST(Verifier, NothingCheckedIsNotAPass) {
  Verifier v(DType::fp32, default_tolerance(DType::fp32));
  const VerifyResult r = v.finish(0, 0);
  EXPECT_EQ(r.elements_checked, 0);
  EXPECT_FALSE(r.passed);
}

TEST(Verifier, CountsUnwrittenPoisonedElements) {
  for (DType dtype : kAllDTypes) {
    const std::vector<double> ref = random_reference(dtype, 100, 3);
    std::vector<unsigned char> got = encode(ref, dtype);
    for (std::size_t i : {0u, 17u, 99u}) poison(got, dtype, i);
    Verifier v(dtype, default_tolerance(dtype));
    v.compare("y", got, ref);
    const VerifyResult r = v.finish(1, 1);
    EXPECT_FALSE(r.passed) << to_string(dtype);
    EXPECT_EQ(r.unwritten, 3);
    EXPECT_EQ(r.mismatches, 0);
    EXPECT_EQ(r.nonfinite_mismatches, 0);  // unwritten is its own count, not also a NaN mismatch
    ASSERT_EQ(r.first_mismatches.size(), 3u);
    EXPECT_EQ(r.first_mismatches[0].index, 0);
    EXPECT_EQ(r.first_mismatches[1].index, 17);
    EXPECT_EQ(r.first_mismatches[2].index, 99);
    EXPECT_TRUE(std::isnan(r.first_mismatches[1].got));
    EXPECT_EQ(r.first_mismatches[1].expected, ref[17]);
  }
}

TEST(Verifier, NanWhereReferenceIsFiniteIsANonfiniteMismatch) {
  for (DType dtype : kAllDTypes) {
    const std::vector<double> ref = random_reference(dtype, 50, 5);
    std::vector<double> got = ref;
    got[20] = std::nan("");  // a computed NaN, not the poison pattern
    const VerifyResult r = verify_one(dtype, {1e30, 1e30}, got, ref);
    EXPECT_FALSE(r.passed) << to_string(dtype);
    EXPECT_EQ(r.nonfinite_mismatches, 1);
    EXPECT_EQ(r.unwritten, 0);
    EXPECT_EQ(r.mismatches, 0);
    ASSERT_EQ(r.first_mismatches.size(), 1u);
    EXPECT_EQ(r.first_mismatches[0].index, 20);
    EXPECT_TRUE(std::isnan(r.first_mismatches[0].got));
  }
}

TEST(Verifier, InfWhereReferenceIsFiniteIsANonfiniteMismatch) {
  const std::vector<double> ref = {1.0, 2.0};
  const VerifyResult r = verify_one(DType::fp16, {1e30, 1e30}, {1.0, HUGE_VAL}, ref);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.nonfinite_mismatches, 1);
}

TEST(Verifier, MatchingInfinitiesAndNansAreFine) {
  const std::vector<double> ref = {1.5, HUGE_VAL, -HUGE_VAL, std::nan(""), -0.75};
  const VerifyResult r = verify_one(DType::bf16, default_tolerance(DType::bf16), ref, ref);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.nonfinite_mismatches, 0);
  EXPECT_EQ(r.max_abs_err, 0);  // the non-finite elements do not pollute the error figures
  EXPECT_EQ(r.rel_l2_err, 0);
}

TEST(Verifier, InfinityOfTheWrongSignOrFiniteWhereReferenceIsInfMismatches) {
  const std::vector<double> ref = {HUGE_VAL, HUGE_VAL, 1.0};
  const VerifyResult r = verify_one(DType::fp32, {1e30, 1e30}, {-HUGE_VAL, 3.0, 1.0}, ref);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.nonfinite_mismatches, 2);
}

TEST(Verifier, MismatchCountIsExactAndTheKeptListIsCappedInOrder) {
  // Prepare: 100 elements, 20 of them (every fifth) off by far more than the tolerance.
  const std::vector<double> ref = random_reference(DType::fp32, 100, 21);
  std::vector<double> got = ref;
  for (std::size_t i = 0; i < got.size(); i += 5) got[i] = ref[i] + 10.0;
  // Run.
  Verifier v(DType::fp32, default_tolerance(DType::fp32));
  v.compare("out", encode(got, DType::fp32), ref);
  const VerifyResult r = v.finish(4, 4);
  // Verify: all 20 counted, only the first kMismatchesKept kept, in index order, with values.
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.mismatches, 20);
  ASSERT_EQ(r.first_mismatches.size(), Verifier::kMismatchesKept);
  for (std::size_t k = 0; k < r.first_mismatches.size(); ++k) {
    const Mismatch& m = r.first_mismatches[k];
    EXPECT_EQ(m.tensor, "out");
    EXPECT_EQ(m.index, static_cast<std::int64_t>(5 * k));
    EXPECT_EQ(m.got, static_cast<double>(static_cast<float>(got[5 * k])));
    EXPECT_EQ(m.expected, ref[5 * k]);
  }
}

TEST(Verifier, AccumulatesAcrossTensorsAndNamesEach) {
  Verifier v(DType::fp32, {0.0, 0.0});
  const std::vector<double> a = {1.0, 2.0}, b = {3.0, 4.0};
  v.compare("a", encode(a, DType::fp32), a);
  v.compare("b", encode({3.0, 5.0}, DType::fp32), b);
  const VerifyResult r = v.finish(1, 1);
  EXPECT_EQ(r.elements_checked, 4);
  EXPECT_EQ(r.mismatches, 1);
  ASSERT_EQ(r.first_mismatches.size(), 1u);
  EXPECT_EQ(r.first_mismatches[0].tensor, "b");
  EXPECT_EQ(r.first_mismatches[0].index, 1);  // index within its own tensor
  EXPECT_EQ(r.first_mismatches[0].got, 5.0);
  EXPECT_EQ(r.first_mismatches[0].expected, 4.0);
}

TEST(Verifier, ErrorFiguresOnAHandComputedCase) {
  // ref {1, 2, 3, 4}, got {1, 2.5, 3, 3}: absolute errors {0, 0.5, 0, 1}.
  const std::vector<double> ref = {1.0, 2.0, 3.0, 4.0};
  const VerifyResult r = verify_one(DType::fp32, {1e-5, 1e-5}, {1.0, 2.5, 3.0, 3.0}, ref);
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_FALSE(r.passed);
  EXPECT_DOUBLE_EQ(r.max_abs_err, 1.0);
  EXPECT_DOUBLE_EQ(r.max_rel_err, 0.25);                          // max(0.5 / 2, 1 / 4)
  EXPECT_DOUBLE_EQ(r.rel_l2_err, std::sqrt((0.25 + 1.0) / 30.0));  // ||err|| / ||ref||
}

TEST(Verifier, RelativeErrorNearZeroIsTakenAgainstAtol) {
  // |ref| = 2^-10 < atol = 2^-4: rel = 2^-6 / 2^-4 = 0.25, not 2^-6 / 2^-10 = 16.
  const VerifyResult r = verify_one(DType::fp32, {0x1p-4, 0.0}, {0x1p-10 + 0x1p-6}, {0x1p-10});
  EXPECT_TRUE(r.passed);
  EXPECT_DOUBLE_EQ(r.max_rel_err, 0.25);
}

TEST(Verifier, ToleranceBoundaryIsInclusive) {
  // atol + rtol * |ref| = 0.25 + 0.125 * 2 = 0.5 exactly, and every value below is binary-exact.
  const Tolerance tol{0.25, 0.125};
  const std::vector<double> ref = {2.0};
  for (DType dtype : kAllDTypes) {
    EXPECT_TRUE(verify_one(dtype, tol, {2.5}, ref).passed) << to_string(dtype);
    EXPECT_TRUE(verify_one(dtype, tol, {1.5}, ref).passed) << to_string(dtype);
    EXPECT_TRUE(verify_one(dtype, tol, {-1.5}, {-2.0}).passed) << to_string(dtype);
  }
  // The next representable value beyond the bound fails, in each dtype.
  EXPECT_FALSE(verify_one(DType::fp32, tol, {std::nextafter(2.5f, 3.0f)}, ref).passed);
  EXPECT_FALSE(verify_one(DType::fp32, tol, {std::nextafter(1.5f, 0.0f)}, ref).passed);
  EXPECT_FALSE(verify_one(DType::fp16, tol, {2.5 + 0x1p-9}, ref).passed);   // fp16 ulp at 2: 2^-9
  EXPECT_FALSE(verify_one(DType::bf16, tol, {2.5 + 0x1p-6}, ref).passed);   // bf16 ulp at 2: 2^-6
  EXPECT_FALSE(verify_one(DType::bf16, tol, {1.5 - 0x1p-7}, ref).passed);   // bf16 ulp at 1: 2^-7
}

TEST(Verifier, DefaultToleranceAcceptsOneRoundingOfTheOutput) {
  // The oracle's fp64 value rounded once to the dtype must pass: seeded normal references that
  // are not themselves representable.
  for (DType dtype : kAllDTypes) {
    std::mt19937_64 rng(42);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> ref(4096);
    for (auto& v : ref) {
      do v = normal(rng);
      while (v == 0);
    }
    const VerifyResult r = verify_one(dtype, default_tolerance(dtype), ref, ref);
    EXPECT_TRUE(r.passed) << to_string(dtype) << ": max rel " << r.max_rel_err;
    EXPECT_GT(r.max_abs_err, 0) << to_string(dtype);
  }
}

// ---- error bounds ------------------------------------------------------------------------

TEST(ErrorBound, EachElementIsCheckedAgainstItsOwnMagnitudes) {
  // Two fp32 elements with the same reference but very different term magnitudes: an error of
  // 1e-3 is inside the bound of the element whose terms were large, outside the other's.
  const std::vector<double> ref = {0.5, 0.5};
  const std::vector<double> abs_sum = {100.0, 1.0}, root_sum_sq = {10.0, 0.1};
  const Tolerance bound{.atol = 0, .rtol = 0, .abs_sum_scale = 1e-5, .root_sum_sq_scale = 1e-5};
  std::vector<double> got = {0.5 + 1e-3, 0.5};
  Verifier v;
  v.compare({"y", ElemType::fp32, bound, 2, false, std::nullopt}, encode(got, DType::fp32), ref,
            {abs_sum, root_sum_sq});
  VerifyResult r = v.finish(2, 2);
  EXPECT_TRUE(r.passed) << failure_reason(r);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].abs_sum_scale, 1e-5);
  // bound of element 0: 1e-5 * 100 + 1e-5 * 10 = 1.1e-3 (fp32 rounding of 0.501 aside).
  EXPECT_NEAR(r.outputs[0].worst_bound_fraction, 1e-3 / 1.1e-3, 1e-4);
  EXPECT_NEAR(r.worst_bound_fraction, r.outputs[0].worst_bound_fraction, 0);

  got = {0.5, 0.5 + 1e-3};  // the same error on the element with small terms
  Verifier w;
  w.compare({"y", ElemType::fp32, bound, 2, false, std::nullopt}, encode(got, DType::fp32), ref,
            {abs_sum, root_sum_sq});
  r = w.finish(2, 2);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_GT(r.outputs[0].worst_bound_fraction, 50);
  EXPECT_NE(failure_reason(r).find("error bound"), std::string::npos) << failure_reason(r);
}

TEST(ErrorBound, AFlatToleranceRecordsHowCloseItCame) {
  const std::vector<double> ref = {1.0, -2.0};
  const std::vector<double> got = {1.0 + 5e-6, -2.0};
  Verifier v;
  v.compare({"y", ElemType::fp32, Tolerance{1e-5, 0}, 2, false, std::nullopt}, encode(got, DType::fp32), ref);
  const VerifyResult r = v.finish(2, 2);
  EXPECT_TRUE(r.passed);
  EXPECT_GT(r.outputs[0].worst_bound_fraction, 0.4);
  EXPECT_LT(r.outputs[0].worst_bound_fraction, 0.6);
}

TEST(ErrorBound, ABoundWithoutMagnitudesIsTheOpsMistakeAndSaysSo) {
  const std::vector<double> ref = {1.0};
  Verifier v;
  try {
    v.compare({"dw", ElemType::fp32, Tolerance{.abs_sum_scale = 1e-6}, 1, false, std::nullopt},
              encode(ref, DType::fp32), ref);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("output 'dw'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("abs_sum"), std::string::npos) << e.what();
  }
}

// ---- rows_to_verify ---------------------------------------------------------------------

std::vector<std::int64_t> iota_rows(std::int64_t n) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = i;
  return out;
}

TEST(RowsToVerify, SmallTensorsAreCheckedCompletely) {
  EXPECT_EQ(rows_to_verify(1, 4096, 1), iota_rows(1));
  EXPECT_EQ(rows_to_verify(100, 4096, 1), iota_rows(100));
  EXPECT_EQ(rows_to_verify(16384, 1024, 1), iota_rows(16384));  // exactly 2^24 elements
  EXPECT_EQ(rows_to_verify(512, 1 << 20, 1), iota_rows(512));   // few rows, however long
  EXPECT_TRUE(sampled_block_starts(512, 1 << 20, 1).empty());
}

TEST(RowsToVerify, LargeTensorsAreSampledFromFirstToLastRow) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {16385, 1024}, {65536, 4096}, {100003, 1000}, {513, 1 << 20}};
  for (const std::uint64_t seed : {1ull, 2ull, 0xdeadbeefull}) {
    for (const auto& [rows, cols] : shapes) {
      const auto sample = rows_to_verify(rows, cols, seed);
      ASSERT_FALSE(sample.empty());
      EXPECT_LT(sample.size(), static_cast<std::size_t>(rows)) << rows << "x" << cols;
      // The first and the last block are always in.
      for (std::int64_t r = 0; r < kSampleBlockRows; ++r) {
        EXPECT_EQ(sample[static_cast<std::size_t>(r)], r) << rows << "x" << cols;
        EXPECT_EQ(sample[sample.size() - 1 - static_cast<std::size_t>(r)], rows - 1 - r) << rows << "x" << cols;
      }
      for (std::size_t i = 1; i < sample.size(); ++i)
        ASSERT_LT(sample[i - 1], sample[i]) << "not sorted and unique at " << i;
      // The same seed samples the same rows; 16 blocks of kSampleBlockRows, each in the sample.
      EXPECT_EQ(rows_to_verify(rows, cols, seed), sample);
      const auto starts = sampled_block_starts(rows, cols, seed);
      ASSERT_EQ(starts.size(), 16u);
      for (const std::int64_t start : starts)
        for (std::int64_t r = start; r < start + kSampleBlockRows; ++r)
          EXPECT_TRUE(std::binary_search(sample.begin(), sample.end(), r)) << "row " << r << " of block " << start;
    }
  }
}

TEST(RowsToVerify, TheMiddleBlocksComeFromTheSeed) {
  // Each of the 14 strata between the first and the last block holds one block, drawn from the
  // seed: two seeds sample different rows, and over a few seeds every stratum moves.
  const auto one = sampled_block_starts(65536, 4096, 1), two = sampled_block_starts(65536, 4096, 2);
  EXPECT_NE(one, two);
  std::int64_t in_middle = 0;
  for (std::int64_t r : rows_to_verify(65536, 4096, 1)) in_middle += r > 16384 && r < 49152;
  EXPECT_GT(in_middle, 0);
  std::set<std::int64_t> seen_in_stratum_3;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) seen_in_stratum_3.insert(sampled_block_starts(65536, 4096, seed)[3]);
  EXPECT_GT(seen_in_stratum_3.size(), 4u);
  // A middle block never overlaps the first block: the row right after it is left to chance.
  for (std::uint64_t seed = 1; seed <= 64; ++seed) EXPECT_GE(sampled_block_starts(16385, 1024, seed)[1], kSampleBlockRows);
}

}  // namespace
}  // namespace kwb

namespace kwb {
namespace {

// ---- per-output accounting --------------------------------------------------------------

TEST(VerifierOutputs, EachOutputIsCheckedWithItsOwnTypeAndToleranceAndAccountedApart) {
  // Prepare: a bf16 output sampled at 100 of 1000 elements, and an fp32 reduction in full.
  const std::vector<double> y = random_reference(DType::bf16, 100, 21);
  const std::vector<double> sums = random_reference(DType::fp32, 16, 22);
  std::vector<double> sums_got = sums;
  sums_got[3] += 0.5;  // one element far outside any tolerance
  Verifier v;
  v.compare({"y", ElemType::bf16, {1e-2, 2e-2}, 1000, true, ScanCounts{0, 0}}, encode(y, DType::bf16), y);
  v.compare({"grad", ElemType::fp32, {1e-4, 1e-4}, 16, false, ScanCounts{0, 0}}, encode(sums_got, DType::fp32), sums);
  const VerifyResult r = v.finish(100, 1000);
  // Verify: totals, and each output on its own.
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.elements_checked, 116);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.atol, 1e-2) << "the flat columns hold the first output's tolerance";
  const OutputCheck& a = r.outputs[0];
  EXPECT_EQ(a.name, "y");
  EXPECT_EQ(a.elem, ElemType::bf16);
  EXPECT_TRUE(a.sampled);
  EXPECT_TRUE(a.device_scanned);
  EXPECT_EQ(a.elements_checked, 100);
  EXPECT_EQ(a.elements_total, 1000);
  EXPECT_TRUE(a.passed);
  const OutputCheck& b = r.outputs[1];
  EXPECT_EQ(b.name, "grad");
  EXPECT_EQ(b.elem, ElemType::fp32);
  EXPECT_FALSE(b.sampled);
  EXPECT_EQ(b.atol, 1e-4);
  EXPECT_EQ(b.mismatches, 1);
  EXPECT_NEAR(b.max_abs_err, 0.5, 1e-6);
  EXPECT_FALSE(b.passed);
  EXPECT_NE(failure_reason(r).find("grad: 1 mismatches"), std::string::npos) << failure_reason(r);
}

TEST(VerifierOutputs, ANanTheScanFoundOutsideTheSampleFailsAndIsCounted) {
  const std::vector<double> y = random_reference(DType::fp16, 200, 31);
  Verifier v;
  // The sampled 200 elements are right; the scan of all 5000 found one NaN elsewhere.
  v.compare({"y", ElemType::fp16, default_tolerance(DType::fp16), 5000, true, ScanCounts{1, 0}},
            encode(y, DType::fp16), y);
  const VerifyResult r = v.finish(20, 500);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_EQ(r.nonfinite_mismatches, 1);
  EXPECT_EQ(r.outputs[0].nonfinite, 1);
  EXPECT_EQ(r.outputs[0].nonfinite_mismatches, 1);
  EXPECT_NE(failure_reason(r).find("1 non-finite in the device scan of all 5000 elements"), std::string::npos)
      << failure_reason(r);
}

// An lse of rows that see no key (block-sparse attention) holds -inf outside the sample: a value
// where the output declares it so, a fault where it does not; a NaN stays a fault either way, and
// a sampled -inf must still match the oracle's.
TEST(VerifierOutputs, MinusInfOutsideTheSampleIsAValueOnlyWhereTheOutputSaysSo) {
  std::vector<double> y = random_reference(DType::fp32, 100, 33);
  y[7] = -INFINITY;  // one empty row inside the sample, oracle and kernel agreeing
  auto check = [&](bool minus_inf_is_value, ScanCounts scan, const std::vector<double>& got) {
    Verifier v;
    OutputToCheck out{"lse", ElemType::fp32, default_tolerance(DType::fp32), 1000, true, scan};
    out.minus_inf_is_value = minus_inf_is_value;
    v.compare(out, encode(got, DType::fp32), y);
    return v.finish(10, 100);
  };
  // The scan found the sampled -inf and 5 more elsewhere.
  const ScanCounts five_more{.nonfinite = 6, .unwritten = 0, .minus_inf = 6};
  EXPECT_TRUE(check(true, five_more, y).passed);
  const VerifyResult undeclared = check(false, five_more, y);
  EXPECT_FALSE(undeclared.passed);
  EXPECT_EQ(undeclared.nonfinite_mismatches, 5);
  // A NaN elsewhere besides: one fault even where -inf is a value.
  const VerifyResult with_nan = check(true, {.nonfinite = 7, .unwritten = 0, .minus_inf = 6}, y);
  EXPECT_FALSE(with_nan.passed);
  EXPECT_EQ(with_nan.nonfinite_mismatches, 1);
  // A sampled row the kernel left finite where the oracle says -inf.
  std::vector<double> finite = y;
  finite[7] = -3.0;
  EXPECT_FALSE(check(true, {.nonfinite = 5, .unwritten = 0, .minus_inf = 5}, finite).passed);
}

TEST(VerifierOutputs, PoisonTheScanFoundOutsideTheSampleFails) {
  const std::vector<double> y = random_reference(DType::fp32, 64, 41);
  Verifier v;
  v.compare({"y", ElemType::fp32, default_tolerance(DType::fp32), 640, true, ScanCounts{0, 7}},
            encode(y, DType::fp32), y);
  const VerifyResult r = v.finish(1, 10);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.unwritten, 7);
  EXPECT_EQ(r.outputs[0].unwritten, 7);
}

TEST(VerifierOutputs, ANonFiniteTheSampleAlreadyCountedIsNotCountedTwice) {
  std::vector<double> y = random_reference(DType::fp32, 10, 51);
  std::vector<double> got = y;
  got[4] = INFINITY;
  Verifier v;
  v.compare({"y", ElemType::fp32, default_tolerance(DType::fp32), 10, false, ScanCounts{1, 0}},
            encode(got, DType::fp32), y);
  const VerifyResult r = v.finish(1, 1);
  EXPECT_EQ(r.nonfinite_mismatches, 1);
  EXPECT_EQ(r.outputs[0].nonfinite, 1);
}

TEST(VerifierOutputs, IntegerOutputsAreComparedExactlyAndMinusOneIsNotPoison) {
  const std::vector<double> ref = {3, -1, 7, -100, 0, 12};
  std::vector<unsigned char> bytes(ref.size() * 4);
  encode_elements(ref.data(), ElemType::int32, 6, bytes.data());
  Verifier ok;
  ok.compare({"idx", ElemType::int32, default_tolerance(ElemType::int32), 6, false, std::nullopt}, bytes, ref);
  EXPECT_TRUE(ok.finish(1, 1).passed);
  std::vector<double> off = ref;
  off[2] = 8;
  encode_elements(off.data(), ElemType::int32, 6, bytes.data());
  Verifier bad;
  bad.compare({"idx", ElemType::int32, default_tolerance(ElemType::int32), 6, false, std::nullopt}, bytes, ref);
  const VerifyResult r = bad.finish(1, 1);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.unwritten, 0);
}

}  // namespace
}  // namespace kwb

namespace kwb {
namespace {

// An output of several host chunks (harness/catalogue/parallel_chunks.hpp) is compared on every
// core: the counts, the first mismatches in element order and the error sums are those of one
// element-by-element pass, whatever the number of threads.
TEST(VerifierChunks, ALargeOutputGivesTheCountsAndFirstMismatchesOfOneOrderedPass) {
  const DType dtype = DType::fp32;
  const std::size_t n = static_cast<std::size_t>(3 * kHostChunkElements + 12345);
  const auto ref = random_reference(dtype, n, 41);
  std::vector<double> got = ref;
  // Planted faults in chunks 0, 1, 2 and 3, out of order of their writing.
  const std::vector<std::size_t> wrong{static_cast<std::size_t>(2 * kHostChunkElements + 5), 17,
                                       static_cast<std::size_t>(kHostChunkElements + 1), n - 1};
  for (std::size_t i : wrong) got[i] = round_to_dtype(ref[i] * 1.5 + 1.0, dtype);
  auto bytes = encode(got, dtype);
  const std::size_t unwritten = static_cast<std::size_t>(kHostChunkElements - 1);
  poison(bytes, dtype, unwritten);
  Verifier v(dtype, Tolerance{1e-6, 1e-6});
  v.compare("y", bytes, ref);
  const VerifyResult r = v.finish(1, 1);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.elements_checked, static_cast<std::int64_t>(n));
  EXPECT_EQ(r.mismatches, static_cast<std::int64_t>(wrong.size()));
  EXPECT_EQ(r.unwritten, 1);
  std::vector<std::int64_t> expected_order{17, static_cast<std::int64_t>(unwritten),
                                           static_cast<std::int64_t>(kHostChunkElements + 1),
                                           static_cast<std::int64_t>(2 * kHostChunkElements + 5),
                                           static_cast<std::int64_t>(n - 1)};
  ASSERT_EQ(r.first_mismatches.size(), expected_order.size());
  for (std::size_t i = 0; i < expected_order.size(); ++i) EXPECT_EQ(r.first_mismatches[i].index, expected_order[i]);
  double worst = 0;
  for (std::size_t i : wrong) worst = std::max(worst, std::fabs(got[i] - ref[i]));
  EXPECT_EQ(r.max_abs_err, worst);
  // Twice, the same bits: the chunk partials are combined in chunk order.
  Verifier again(dtype, Tolerance{1e-6, 1e-6});
  again.compare("y", bytes, ref);
  EXPECT_EQ(again.finish(1, 1).rel_l2_err, r.rel_l2_err);
}

}  // namespace
}  // namespace kwb
