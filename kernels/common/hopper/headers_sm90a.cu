// Compiled for sm_90a with the Hopper kernels: checks that the wgmma and bulk-copy headers build
// on their own, and gives the sm_90a object library a source on every checkout.
#include "kernels/common/hopper/mbarrier.cuh"
#include "kernels/common/hopper/tma.cuh"
#include "kernels/common/hopper/wgmma.cuh"
