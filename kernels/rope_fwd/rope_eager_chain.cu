// The launch of the eager baseline (rope_fwd and rope_bwd): the dtype and direction dispatched.
// Its kernels are compiled in this file alone: the variants' registration files of rope_fwd and
// rope_bwd only declare the launcher (one copy of each kernel in the catalogue, not one per file).
#include "kernels/rope_fwd/rope_eager_chain.cuh"

namespace kwb::rope {

void launch_eager_chain(const LaunchArgs& a, bool backward) {
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (backward)
      eager_chain<T, true>(a);
    else
      eager_chain<T, false>(a);
  });
}

}  // namespace kwb::rope
