// Constants of the layernorm_fwd and layernorm_bwd contracts that their kernels share with the
// oracles.
#pragma once

namespace kwb {
// PyTorch's default (torch.nn.LayerNorm, F.layer_norm).
inline constexpr double kLayerNormEps = 1e-5;
}  // namespace kwb
