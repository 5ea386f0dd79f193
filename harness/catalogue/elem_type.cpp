// Names, sizes and resolution of element types.
#include "harness/catalogue/elem_type.hpp"

#include <stdexcept>

namespace kwb {

std::string_view to_string(ElemType type) {
  switch (type) {
    case ElemType::case_dtype: return "case_dtype";
    case ElemType::fp32: return "fp32";
    case ElemType::fp16: return "fp16";
    case ElemType::bf16: return "bf16";
    case ElemType::int32: return "int32";
    case ElemType::int64: return "int64";
    case ElemType::boolean: return "bool";
  }
  return "?";
}

std::optional<ElemType> parse_elem_type(std::string_view text) {
  if (text == "case_dtype") return ElemType::case_dtype;
  for (ElemType t : kConcreteElemTypes)
    if (text == to_string(t)) return t;
  return std::nullopt;
}

ElemType elem_type_of(DType dtype) {
  switch (dtype) {
    case DType::fp32: return ElemType::fp32;
    case DType::fp16: return ElemType::fp16;
    case DType::bf16: return ElemType::bf16;
  }
  return ElemType::fp32;
}

ElemType resolve(ElemType declared, DType case_dtype) {
  return declared == ElemType::case_dtype ? elem_type_of(case_dtype) : declared;
}

std::size_t elem_size(ElemType type) {
  switch (type) {
    case ElemType::fp32: return 4;
    case ElemType::fp16: return 2;
    case ElemType::bf16: return 2;
    case ElemType::int32: return 4;
    case ElemType::int64: return 8;
    case ElemType::boolean: return 1;
    case ElemType::case_dtype: break;
  }
  throw std::invalid_argument("elem_size: case_dtype must be resolved against the case dtype first");
}

bool is_floating(ElemType type) {
  return type == ElemType::fp32 || type == ElemType::fp16 || type == ElemType::bf16;
}

bool is_integer(ElemType type) { return type == ElemType::int32 || type == ElemType::int64; }

}  // namespace kwb
