// Device-side view of the harness dtypes: the storage type of each, conversions through float,
// and a dispatcher from the runtime DType to a template instantiation.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>

#include <cstdint>

#include "harness/catalogue/elem_type.hpp"
#include "harness/catalogue/types.hpp"

namespace kwb {

template <class T>
__device__ __forceinline__ float to_float(T v);
template <>
__device__ __forceinline__ float to_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ float to_float<__half>(__half v) { return __half2float(v); }
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Calls fn(T{}) with T the storage type of `dtype`.
template <class Fn>
void dispatch_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::fp32: fn(float{}); return;
    case DType::fp16: fn(__half{}); return;
    case DType::bf16: fn(__nv_bfloat16{}); return;
  }
  throw std::invalid_argument("unsupported dtype");
}

// Calls fn(T{}) with T the storage type of a concrete element type (bool: `bool`, one byte).
template <class Fn>
void dispatch_elem(ElemType type, Fn&& fn) {
  switch (type) {
    case ElemType::fp32: fn(float{}); return;
    case ElemType::fp16: fn(__half{}); return;
    case ElemType::bf16: fn(__nv_bfloat16{}); return;
    case ElemType::int32: fn(std::int32_t{}); return;
    case ElemType::int64: fn(std::int64_t{}); return;
    case ElemType::boolean: fn(bool{}); return;
    case ElemType::case_dtype: break;
  }
  throw std::invalid_argument("unresolved element type");
}

}  // namespace kwb
