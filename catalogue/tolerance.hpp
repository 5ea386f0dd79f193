// The one tolerance table: per dtype, |got - ref| <= atol + rtol * |ref| against an fp64 oracle.
//
// The relative parts are a few units in the last place of each format (fp32 2^-23, fp16 2^-10,
// bf16 2^-7 mantissa steps) to leave room for one or two roundings of an fp32 intermediate; the
// absolute parts cover outputs near zero. An op overrides this only with a stated reason.
#pragma once

#include "catalogue/registry.hpp"

namespace kwb {

inline Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::fp32: return {1e-5, 1e-5};
    case DType::fp16: return {1e-3, 2e-3};
    case DType::bf16: return {8e-3, 1.6e-2};
  }
  return {};
}

}  // namespace kwb
