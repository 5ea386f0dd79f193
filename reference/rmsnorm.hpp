// Constants of the rmsnorm_fwd contract that its kernels share with the oracle.
#pragma once

namespace kwb {
inline constexpr double kRmsNormEps = 1e-6;
}  // namespace kwb
