// Host copies of tensors as float64, and the conversions between dtype bits and float64.
//
// The oracle and the verifier work in float64 on values that are exactly representable in the
// case's dtype (decoded from what the device holds), so the comparison measures the kernel's
// error and nothing of the input rounding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/catalogue/elem_type.hpp"
#include "harness/catalogue/types.hpp"

namespace kwb {

struct HostTensor {
  std::string name;
  std::vector<std::int64_t> dims;
  std::vector<double> values;
  // Outputs of an oracle that gives error bounds (Tolerance::abs_sum_scale): per element, the
  // magnitudes of the terms it added to make it, sum |term| and sqrt(sum term^2). Empty: none.
  std::vector<double> abs_sum;
  std::vector<double> root_sum_sq;
};

float half_bits_to_float(std::uint16_t bits);
float bf16_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_half_bits(float value);  // round to nearest even; overflow -> inf
std::uint16_t float_to_bf16_bits(float value);  // round to nearest even; NaN stays NaN

// Decode `count` elements of `dtype` stored at `bytes` into float64.
void decode_dtype(const void* bytes, DType dtype, std::int64_t count, double* out);
// Encode float64 values into `dtype` bits (via float, rounding to nearest even).
void encode_dtype(const double* values, DType dtype, std::int64_t count, void* bytes);
// The value a dtype stores for `value`.
double round_to_dtype(double value, DType dtype);

// The same for every concrete element type. Integers decode exactly up to 2^53; bools decode
// as 0 or 1 (any non-zero byte is true) and encode non-zero as 1; encoding a non-integral value
// into an integer type truncates toward zero.
void decode_elements(const void* bytes, ElemType type, std::int64_t count, double* out);
void encode_elements(const double* values, ElemType type, std::int64_t count, void* bytes);

// The byte the verifier poisons outputs with: 0xFF... is a NaN in fp32, fp16 and bf16, so an
// element the kernel never wrote is both non-finite and recognisable by its exact bits.
inline constexpr unsigned char kPoisonByte = 0xFF;
bool is_poison(const void* element_bytes, DType dtype);
// Integer outputs are poisoned with 0x80 bytes instead (0x80808080 = -2139062144 in int32),
// since 0xFF... is -1, a value an integer output may well hold. Bools keep 0xFF (neither 0 nor 1).
inline constexpr unsigned char kIntegerPoisonByte = 0x80;
unsigned char poison_byte(ElemType type);
bool is_poison(const void* element_bytes, ElemType type);

}  // namespace kwb
