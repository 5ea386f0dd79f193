"""Variants with planted defects, for the GPU test of Python variants: one returns a wrong answer
(verification must fail it), one raises in its launch after prepare (its case must fail with the
traceback), one faults the device (its case fails, and the cases after it run in a new worker),
and one eager PyTorch forward that is right (it must pass)."""
import kwb

EPS = 1e-6


def _rmsnorm(torch, x, weight):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * weight


def _launcher(case, scale, raise_after):
    import torch

    x, weight, y = (torch.from_dlpack(case[n]) for n in ("x", "weight", "y"))
    calls = []

    def launch(stream):
        calls.append(stream)
        if raise_after is not None and len(calls) > raise_after:
            raise ValueError("planted: this launcher fails after its first call")
        with torch.cuda.stream(torch.cuda.ExternalStream(stream)):
            y.copy_(_rmsnorm(torch, x, weight) * scale)

    return launch


@kwb.variant(op="rmsnorm_fwd", name="py_eager_rmsnorm", role="baseline", uses=["PyTorch"], requires=["torch"],
             description="eager PyTorch, as written in a model")
def py_eager_rmsnorm(case):
    return _launcher(case, 1.0, None)


@kwb.variant(op="rmsnorm_fwd", name="py_wrong_rmsnorm", uses=["PyTorch"], requires=["torch"],
             description="planted: the right formula scaled by 1.01")
def py_wrong_rmsnorm(case):
    return _launcher(case, 1.01, None)


@kwb.variant(op="rmsnorm_fwd", name="py_raising_rmsnorm", uses=["PyTorch"], requires=["torch"],
             description="planted: raises on its second launch (the verified one)")
def py_raising_rmsnorm(case):
    return _launcher(case, 1.0, 1)


@kwb.variant(op="rmsnorm_fwd", name="py_faulting_rmsnorm", uses=["Triton"], requires=["torch", "triton"],
             description="planted: a Triton store 2 TB out of bounds (an illegal address: the context is lost)")
def py_faulting_rmsnorm(case):
    import torch
    from faulting_kernel import store_far_away

    y = torch.from_dlpack(case["y"])

    def launch(stream):
        with torch.cuda.stream(torch.cuda.ExternalStream(stream)):
            store_far_away[(1,)](y)

    return launch
