"""A new op defined in Python, with its fp64 oracle in NumPy, and two variants of it: the eager
PyTorch expression (what a model runs: two kernels and an intermediate) and torch.compile's fused
kernel. kwb plans, verifies, times and reports it as any op of its catalogue.

    kwb run --python examples/python/squared_relu_op.py --op py_squared_relu --dtype bf16

Only `kwb` and NumPy are imported at the top: the op registers on a machine without torch.
"""
import numpy as np

import kwb


def tensors(shape, dtype):
    rows, cols = shape["rows"], shape["cols"]
    return [kwb.tensor("x", [rows, cols], sample_dim=0, init="normal", a=0.0, b=1.0),
            kwb.tensor("y", [rows, cols], output=True, sample_dim=0)]


def oracle(shape, inputs):
    """fp64, from the inputs as the device holds them (already rounded to the case's dtype)."""
    return {"y": np.square(np.maximum(inputs["x"], 0.0))}


def work(shape, dtype):
    """Read x once, write y once; a max and a product per element."""
    elements = shape["rows"] * shape["cols"]
    size = {"fp32": 4, "fp16": 2, "bf16": 2}[dtype]
    return 2 * elements * size, 2 * elements


kwb.op(name="py_squared_relu", description="squared ReLU, y = max(x, 0)^2, defined in Python",
       axes={"rows": 16384, "cols": 4096}, dtypes=["fp32", "fp16", "bf16"], tensors=tensors, oracle=oracle,
       work=work, default_shapes=[{"rows": 16384, "cols": 4096}, {"rows": 4096, "cols": 1000}],
       edge_shapes=[{"rows": 1, "cols": 1}, {"rows": 7, "cols": 33}], sample_axis="rows")


def _torch_tensors(case):
    import torch

    return torch.from_dlpack(case["x"]), torch.from_dlpack(case["y"])


@kwb.variant(op="py_squared_relu", name="eager_relu_square", role="baseline", uses=["PyTorch"], requires=["torch"],
             description="torch.square(torch.relu(x)): two kernels and an intermediate, as eager PyTorch runs it")
def eager_relu_square(case):
    import torch

    x, y = _torch_tensors(case)

    def launch(stream):
        with torch.cuda.stream(torch.cuda.ExternalStream(stream)):
            y.copy_(torch.square(torch.relu(x)))

    return launch


@kwb.variant(op="py_squared_relu", name="torch_compile_relu_square", role="fused", uses=["torch.compile"],
             requires=["torch"], description="torch.compile of the same expression: one fused kernel into y")
def torch_compile_relu_square(case):
    import torch

    x, y = _torch_tensors(case)

    def relu_square_into(x, y):
        y.copy_(torch.square(torch.relu(x)))

    torch.compiler.reset()  # one compile per case (see rmsnorm_variants.py)
    compiled = torch.compile(relu_square_into, dynamic=False)

    def launch(stream):
        with torch.cuda.stream(torch.cuda.ExternalStream(stream)):
            compiled(x, y)

    return launch
