"""A Triton kernel that stores 2 TB past its output: an illegal address on any GPU, for the planted
variant py_faulting_rmsnorm (planted_variants.py)."""
import triton
import triton.language as tl


@triton.jit
def store_far_away(y_ptr):
    offsets = tl.arange(0, 128)
    tl.store(y_ptr + (1 << 40) + offsets, tl.zeros([128], tl.float32).to(y_ptr.dtype.element_ty))
