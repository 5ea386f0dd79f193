// Bit-exact fp16/bf16 <-> float conversions for the host side of verification.
#include "harness/catalogue/host_tensor.hpp"

#include "harness/catalogue/parallel_chunks.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace kwb {

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1F;
  const std::uint32_t mant = h & 0x3FF;
  float magnitude;
  if (exp == 0) {
    magnitude = std::ldexp(static_cast<float>(mant), -24);  // subnormal
  } else if (exp == 31) {
    magnitude = mant ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  std::uint32_t bits;
  std::memcpy(&bits, &magnitude, 4);
  bits |= sign;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

float bf16_bits_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f)) return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // keep it a NaN
  const std::uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

std::uint16_t float_to_half_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000);
  if (std::isnan(f)) return sign | 0x7E00;
  const float a = std::fabs(f);
  if (a >= 65520.0f) return sign | 0x7C00;  // rounds to infinity
  if (a <= std::ldexp(1.0f, -25)) return sign;  // up to half the smallest subnormal (a tie: to even, 0)
  int exp;
  std::frexp(a, &exp);  // a = m * 2^exp, m in [0.5, 1)
  // Quantum of the target format at this magnitude: 2^(exp-11) for normals, 2^-24 below.
  const int quantum_exp = exp - 1 >= -14 ? exp - 11 : -24;
  const float scaled = std::ldexp(a, -quantum_exp);       // integer part = stored mantissa
  const float rounded = std::nearbyint(scaled);            // ties to even (default mode)
  const float value = std::ldexp(rounded, quantum_exp);
  // Re-encode the rounded value, which is exact in half precision.
  int vexp;
  const float vm = std::frexp(value, &vexp);
  if (vexp - 1 < -14) {  // subnormal
    return sign | static_cast<std::uint16_t>(std::ldexp(value, 24));
  }
  const std::uint16_t e = static_cast<std::uint16_t>(vexp - 1 + 15);
  const std::uint16_t m = static_cast<std::uint16_t>(std::ldexp(vm * 2.0f - 1.0f, 10));
  return sign | static_cast<std::uint16_t>(e << 10) | m;
}

void decode_dtype(const void* bytes, DType dtype, std::int64_t count, double* out) {
  switch (dtype) {
    case DType::fp32: {
      const auto* p = static_cast<const float*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) out[i] = p[i];
      break;
    }
    case DType::fp16: {
      const auto* p = static_cast<const std::uint16_t*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) out[i] = half_bits_to_float(p[i]);
      break;
    }
    case DType::bf16: {
      const auto* p = static_cast<const std::uint16_t*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) out[i] = bf16_bits_to_float(p[i]);
      break;
    }
  }
}

namespace {

void decode_run(const void* bytes, ElemType type, std::int64_t count, double* out) {
  switch (type) {
    case ElemType::fp32: return decode_dtype(bytes, DType::fp32, count, out);
    case ElemType::fp16: return decode_dtype(bytes, DType::fp16, count, out);
    case ElemType::bf16: return decode_dtype(bytes, DType::bf16, count, out);
    case ElemType::int32: {
      const auto* p = static_cast<const std::int32_t*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) out[i] = static_cast<double>(p[i]);
      return;
    }
    case ElemType::int64: {
      const auto* p = static_cast<const std::int64_t*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) out[i] = static_cast<double>(p[i]);
      return;
    }
    case ElemType::boolean: {
      const auto* p = static_cast<const unsigned char*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) out[i] = p[i] != 0 ? 1.0 : 0.0;
      return;
    }
    case ElemType::case_dtype: break;
  }
  throw std::invalid_argument("decode_elements: case_dtype must be resolved first");
}

}  // namespace

// A large tensor (a full [tokens, vocab] logits read back for the oracle: 10^9 elements) is
// decoded on every host core; each element's value does not depend on how the work is cut.
void decode_elements(const void* bytes, ElemType type, std::int64_t count, double* out) {
  if (type == ElemType::case_dtype) throw std::invalid_argument("decode_elements: case_dtype must be resolved first");
  const std::size_t esize = elem_size(type);
  parallel_chunks(count, [&](std::int64_t, std::int64_t begin, std::int64_t end) {
    decode_run(static_cast<const unsigned char*>(bytes) + begin * esize, type, end - begin, out + begin);
  });
}

void encode_elements(const double* values, ElemType type, std::int64_t count, void* bytes) {
  switch (type) {
    case ElemType::fp32: return encode_dtype(values, DType::fp32, count, bytes);
    case ElemType::fp16: return encode_dtype(values, DType::fp16, count, bytes);
    case ElemType::bf16: return encode_dtype(values, DType::bf16, count, bytes);
    case ElemType::int32: {
      auto* p = static_cast<std::int32_t*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) p[i] = static_cast<std::int32_t>(values[i]);
      return;
    }
    case ElemType::int64: {
      auto* p = static_cast<std::int64_t*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) p[i] = static_cast<std::int64_t>(values[i]);
      return;
    }
    case ElemType::boolean: {
      auto* p = static_cast<unsigned char*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) p[i] = values[i] != 0 ? 1 : 0;
      return;
    }
    case ElemType::case_dtype: break;
  }
  throw std::invalid_argument("encode_elements: case_dtype must be resolved first");
}

void encode_dtype(const double* values, DType dtype, std::int64_t count, void* bytes) {
  switch (dtype) {
    case DType::fp32: {
      auto* p = static_cast<float*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) p[i] = static_cast<float>(values[i]);
      break;
    }
    case DType::fp16: {
      auto* p = static_cast<std::uint16_t*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) p[i] = float_to_half_bits(static_cast<float>(values[i]));
      break;
    }
    case DType::bf16: {
      auto* p = static_cast<std::uint16_t*>(bytes);
      for (std::int64_t i = 0; i < count; ++i) p[i] = float_to_bf16_bits(static_cast<float>(values[i]));
      break;
    }
  }
}

double round_to_dtype(double value, DType dtype) {
  unsigned char buf[4];
  double out;
  encode_dtype(&value, dtype, 1, buf);
  decode_dtype(buf, dtype, 1, &out);
  return out;
}

bool is_poison(const void* element_bytes, DType dtype) {
  const auto* p = static_cast<const unsigned char*>(element_bytes);
  for (std::size_t i = 0; i < dtype_size(dtype); ++i)
    if (p[i] != kPoisonByte) return false;
  return true;
}

unsigned char poison_byte(ElemType type) { return is_integer(type) ? kIntegerPoisonByte : kPoisonByte; }

bool is_poison(const void* element_bytes, ElemType type) {
  const auto* p = static_cast<const unsigned char*>(element_bytes);
  const unsigned char byte = poison_byte(type);
  for (std::size_t i = 0; i < elem_size(type); ++i)
    if (p[i] != byte) return false;
  return true;
}

}  // namespace kwb
