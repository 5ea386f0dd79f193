// The wgmma instructions (sm_90a) the Hopper kernels issue, one wrapper per tile width N and
// operand type: Wgmma<N, T>::ss (A and B from shared memory, through descriptors) and ::rs (A
// from registers, bf16/fp16 only). D is 64 x N fp32, spread over the warpgroup's 128 threads as
// N/2 registers each (kernels/common/hopper/wgmma.cuh says which element is where).
//
// TransB = 1 reads B as MN-major (N contiguous) instead of K-major: bf16/fp16 only, what a
// row-major V of attention needs. `accumulate` = 0 overwrites D (the first K step), 1 adds.
// An asm statement takes its operands as a literal list, so each width's accumulator list is
// spelled out once (KWB_WGMMA_D<N>_*) and the types are stamped out from it by macros.
// Compiled only in sm_90a translation units (kernels/**/*_sm90a.cu).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace kwb::hopper {

template <int N, class T>
struct Wgmma;

// m64n64: 32 accumulator registers, then the instruction's other operands from %32 on.
#define KWB_WGMMA_D64_REGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define KWB_WGMMA_D64_OPERANDS \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

// m64n128: 64 accumulator registers, then the instruction's other operands from %64 on.
#define KWB_WGMMA_D128_REGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define KWB_WGMMA_D128_OPERANDS \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// m64n256: 128 accumulator registers, then the instruction's other operands from %128 on.
#define KWB_WGMMA_D256_REGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
#define KWB_WGMMA_D256_OPERANDS \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// Wgmma<N, CTYPE> for a 16-bit type whose PTX name is PTX ("bf16", "f16"): k16, ss and rs.
#define KWB_WGMMA_16BIT(N, CTYPE, PTX)                                                                   \
  template <>                                                                                          \
  struct Wgmma<N, CTYPE> {                                                                             \
    template <int TransB = 0>                                                                          \
    static __device__ __forceinline__ void ss(float (&d)[N / 2], std::uint64_t a, std::uint64_t b,     \
                                              int accumulate) {                                        \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" KWB_WGMMA_ARG(N, 2) ", 0;\n"                     \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " " KWB_WGMMA_D##N##_REGS \
                   ", %" KWB_WGMMA_ARG(N, 0) ", %" KWB_WGMMA_ARG(N, 1) ", p, 1, 1, 0, %" KWB_WGMMA_ARG(N, 3) \
                   ";\n}\n"                                                                            \
                   : KWB_WGMMA_D##N##_OPERANDS                                                         \
                   : "l"(a), "l"(b), "r"(accumulate), "n"(TransB));                                    \
    }                                                                                                  \
    template <int TransB = 0>                                                                          \
    static __device__ __forceinline__ void rs(float (&d)[N / 2], const std::uint32_t (&a)[4], std::uint64_t b, \
                                              int accumulate) {                                        \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" KWB_WGMMA_ARG(N, 5) ", 0;\n"                     \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " " KWB_WGMMA_D##N##_REGS \
                   ", {%" KWB_WGMMA_ARG(N, 0) ", %" KWB_WGMMA_ARG(N, 1) ", %" KWB_WGMMA_ARG(N, 2) ", %"   \
                   KWB_WGMMA_ARG(N, 3) "}, %" KWB_WGMMA_ARG(N, 4) ", p, 1, 1, %" KWB_WGMMA_ARG(N, 6)      \
                   ";\n}\n"                                                                            \
                   : KWB_WGMMA_D##N##_OPERANDS                                                         \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate), "n"(TransB));  \
    }                                                                                                  \
  };

// Wgmma<N, float>: tf32, k8, both operands K-major from shared memory (no transpose, no rs).
#define KWB_WGMMA_TF32(N)                                                                                \
  template <>                                                                                          \
  struct Wgmma<N, float> {                                                                             \
    template <int TransB = 0>                                                                          \
    static __device__ __forceinline__ void ss(float (&d)[N / 2], std::uint64_t a, std::uint64_t b,     \
                                              int accumulate) {                                        \
      static_assert(TransB == 0, "tf32 wgmma reads K-major operands only");                            \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" KWB_WGMMA_ARG(N, 2) ", 0;\n"                     \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 " KWB_WGMMA_D##N##_REGS      \
                   ", %" KWB_WGMMA_ARG(N, 0) ", %" KWB_WGMMA_ARG(N, 1) ", p, 1, 1;\n}\n"                 \
                   : KWB_WGMMA_D##N##_OPERANDS                                                         \
                   : "l"(a), "l"(b), "r"(accumulate));                                                 \
    }                                                                                                  \
  };

// The operand number of the i-th operand after the accumulators, as a string literal.
#define KWB_WGMMA_ARG(N, i) KWB_WGMMA_ARG_##N##_##i
#define KWB_WGMMA_ARG_64_0 "32"
#define KWB_WGMMA_ARG_64_1 "33"
#define KWB_WGMMA_ARG_64_2 "34"
#define KWB_WGMMA_ARG_64_3 "35"
#define KWB_WGMMA_ARG_64_4 "36"
#define KWB_WGMMA_ARG_64_5 "37"
#define KWB_WGMMA_ARG_64_6 "38"
#define KWB_WGMMA_ARG_128_0 "64"
#define KWB_WGMMA_ARG_128_1 "65"
#define KWB_WGMMA_ARG_128_2 "66"
#define KWB_WGMMA_ARG_128_3 "67"
#define KWB_WGMMA_ARG_128_4 "68"
#define KWB_WGMMA_ARG_128_5 "69"
#define KWB_WGMMA_ARG_128_6 "70"
#define KWB_WGMMA_ARG_256_0 "128"
#define KWB_WGMMA_ARG_256_1 "129"
#define KWB_WGMMA_ARG_256_2 "130"
#define KWB_WGMMA_ARG_256_3 "131"
#define KWB_WGMMA_ARG_256_4 "132"
#define KWB_WGMMA_ARG_256_5 "133"
#define KWB_WGMMA_ARG_256_6 "134"

KWB_WGMMA_16BIT(64, __nv_bfloat16, "bf16")
KWB_WGMMA_16BIT(64, __half, "f16")
KWB_WGMMA_TF32(64)
KWB_WGMMA_16BIT(128, __nv_bfloat16, "bf16")
KWB_WGMMA_16BIT(128, __half, "f16")
KWB_WGMMA_TF32(128)
KWB_WGMMA_16BIT(256, __nv_bfloat16, "bf16")
KWB_WGMMA_16BIT(256, __half, "f16")
KWB_WGMMA_TF32(256)

}  // namespace kwb::hopper
