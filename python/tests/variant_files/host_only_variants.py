"""A file of variants that imports nothing but kwb: what the CPU tests load (list, plan, tunables,
refuse). Its launcher does no work, so it never passes verification: it is never run."""
import kwb


@kwb.variant(op="rmsnorm_fwd", name="py_host_only", description="a test's variant: plans, never runs",
             tunables={"block": [128, 256]}, refuse=lambda shape, dtype: "over 8192 cols" if shape["cols"] > 8192 else None)
def py_host_only(case):
    return lambda stream: None
