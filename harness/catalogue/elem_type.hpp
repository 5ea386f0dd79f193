// Element types of tensors. A case has one dtype (DType: fp32, fp16 or bf16); each tensor of the
// op declares its own element type, which is the case dtype by default or a fixed type (an fp32
// weight gradient or log-sum-exp, int32 labels, int64 position ids, a bool mask).
//
// Host-only, like types.hpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "harness/catalogue/types.hpp"

namespace kwb {

enum class ElemType { case_dtype, fp32, fp16, bf16, int32, int64, boolean };

// Every concrete element type (case_dtype excluded), for parsers and tests.
inline constexpr ElemType kConcreteElemTypes[] = {ElemType::fp32,  ElemType::fp16,  ElemType::bf16,
                                                  ElemType::int32, ElemType::int64, ElemType::boolean};

std::string_view to_string(ElemType type);  // "case_dtype", "fp32", ..., "int64", "bool"
std::optional<ElemType> parse_elem_type(std::string_view text);
ElemType elem_type_of(DType dtype);
// The concrete type of a declared one in a case of `case_dtype`.
ElemType resolve(ElemType declared, DType case_dtype);
// Bytes per element of a concrete type (bool: one byte). Throws std::invalid_argument for
// case_dtype, which has no size until resolved.
std::size_t elem_size(ElemType type);
bool is_floating(ElemType type);  // fp32, fp16, bf16
bool is_integer(ElemType type);   // int32, int64

}  // namespace kwb
