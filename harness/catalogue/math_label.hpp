// What a case's arithmetic ran in, as a short label, and which libraries ran it: the two facts a
// reader needs before comparing two variants' times (a tf32 GEMM against a full-fp32 one is not
// the same contest). The one place that defines the labels.
//
// The labels (kMathLabels): "fp32" (CUDA cores, elements of any storage type widened to fp32),
// "tf32" (tensor cores on fp32 operands rounded to tf32, fp32 accumulate), "bf16, fp32 acc" and
// "fp16, fp32 acc" (tensor cores on bf16 / fp16 operands, fp32 accumulate).
//
// A case's label is the variant's Variant::math for the case dtype when it names one, else the
// default of the op's compute unit (Op::compute_unit) at that dtype. Variant::math is either one
// label, for every dtype the variant runs ("fp32": a CUDA-core kernel of a tensor op), or
// "DTYPE: LABEL" entries separated by ';' for the dtypes that differ, the others keeping the
// default ("fp32: fp32": a library GEMM that runs fp32 cases in full fp32 and bf16 on the
// tensor cores).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/catalogue/types.hpp"

namespace kwb {

struct Op;
struct Variant;

struct MathLabel {
  const char* label;
  const char* meaning;
};
// Every label a variant may declare, with what it means (kwb list --markdown prints them).
inline constexpr MathLabel kMathLabels[] = {
    {"fp32", "fp32 arithmetic on the CUDA cores (inputs of any storage type widened to fp32)"},
    {"tf32", "tensor cores on fp32 operands rounded to tf32 (10-bit mantissa), fp32 accumulate"},
    {"bf16, fp32 acc", "tensor cores on bf16 operands, fp32 accumulate"},
    {"fp16, fp32 acc", "tensor cores on fp16 operands, fp32 accumulate"},
};
bool is_math_label(std::string_view label);

// The label an op's compute unit implies at a case dtype: "fp32" -> "fp32"; "tensor" -> "tf32"
// for fp32 cases, else "<dtype>, fp32 acc"; "tensor_tf32" / "tensor_bf16" / "tensor_fp16" ->
// that precision at every dtype. An unknown unit is returned as it is.
std::string default_math_label(std::string_view compute_unit, DType dtype);

// The label of `variant` at `dtype`: its own declaration for that dtype, else the op's default.
std::string math_label(const Op& op, const Variant& variant, DType dtype);

// The variant's label at every dtype it runs (those it accepts at one of the op's default or edge
// shapes at least), for `kwb list` and the catalogue: "fp32" when one label covers them all, else
// "fp32: fp32; fp16: fp16, fp32 acc; bf16: bf16, fp32 acc" in the op's dtype order.
std::string math_summary(const Op& op, const Variant& variant);

// What is wrong with a variant's math declaration (an unknown label, a malformed entry, a dtype
// the op does not have, a dtype named twice), one line each saying how to fix it; empty when sound.
std::vector<std::string> math_declaration_problems(const Op& op, const Variant& variant);

// "tf32 vs fp32" when a variant's label differs from its baseline's; empty when they are the
// same or either is unknown (reports written before labels were recorded).
std::string math_comparison(std::string_view variant_math, std::string_view baseline_math);

// The libraries a variant calls, joined for a table cell: "cuBLASLt", "cuBLAS+cuDNN"; empty: none.
std::string uses_text(const std::vector<std::string>& uses);

}  // namespace kwb
