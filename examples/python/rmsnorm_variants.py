"""Two RMSNorm forwards written in Python, run by kwb beside the catalogue's CUDA variants of
rmsnorm_fwd: timed by the same CUPTI timer under the same L2 flush, verified against the same fp64
oracle, in the same report.

    kwb run --python examples/python/rmsnorm_variants.py --op rmsnorm_fwd --dtype bf16

Each decorated function runs once per case, in prepare (outside timing). It takes the case's
tensors (kwb.Tensor, read without a copy through DLPack) and returns a launcher: a function of
the stream that enqueues one forward on it. kwb calls the launcher once in prepare, so Triton's
and Inductor's compiles happen there, then for the verified launch and every timed sample.

Only `kwb` is imported here: on a machine without torch or triton the variants still register
and list, and their cases are skipped saying which module is missing (requires=...).
"""
import kwb

EPS = 1e-6  # rmsnorm_fwd's epsilon: y = x * rsqrt(mean(x^2) + 1e-6) * weight


def _on_stream(torch, stream):
    """The torch stream context for kwb's stream (a cudaStream_t as int), made once per stream."""
    cache = _on_stream.__dict__.setdefault("streams", {})
    if stream not in cache:
        cache[stream] = torch.cuda.ExternalStream(stream)
    return torch.cuda.stream(cache[stream])


def _tensors(case):
    import torch

    return (torch.from_dlpack(case[name]) for name in ("x", "weight", "y"))


@kwb.variant(op="rmsnorm_fwd", name="triton_rmsnorm", role="fused", uses=["Triton"],
             requires=["torch", "triton"],
             refuse=lambda shape, dtype: None if shape["cols"] <= 65536 else "one Triton program holds a row of at most 65536",
             description="Triton: one program per row, the row in registers, fp32 sum of squares and scale")
def triton_rmsnorm(case):
    import torch
    from rmsnorm_triton import rmsnorm_rows

    x, weight, y = _tensors(case)

    def launch(stream):
        with _on_stream(torch, stream):
            rmsnorm_rows(x, weight, y, EPS)

    return launch


@kwb.variant(op="rmsnorm_fwd", name="torch_compile_rmsnorm", role="fused", uses=["torch.compile"],
             requires=["torch"],
             description="torch.compile (Inductor) of the eager formula, writing into the output in place")
def torch_compile_rmsnorm(case):
    import torch

    x, weight, y = _tensors(case)

    def rmsnorm_into(x, weight, y):
        xf = x.float()
        normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
        y.copy_(normed.to(x.dtype) * weight)  # Inductor stores into y in the fused kernel

    # One compile per case, for its shape: Dynamo counts each shape of the same code against its
    # recompile limit (8), after which it would run the eager code, so it starts afresh here.
    torch.compiler.reset()
    compiled = torch.compile(rmsnorm_into, dynamic=False)

    def launch(stream):
        with _on_stream(torch, stream):
            compiled(x, weight, y)

    return launch
