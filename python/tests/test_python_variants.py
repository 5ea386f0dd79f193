"""Python variants (@kwb.variant): a file of them is listed and planned beside the catalogue, by the
command line (through kwb's embedded interpreter) and by the module alike; a bad one is refused
where it is wrong; on a GPU they run verified and timed, and planted defects fail their own cases."""
import importlib.util
import os
import pathlib
import subprocess

import pytest

import kwb

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "python" / "rmsnorm_variants.py"
FILES = pathlib.Path(__file__).resolve().parent / "variant_files"
HOST_ONLY = FILES / "host_only_variants.py"
PLANTED = FILES / "planted_variants.py"


def cli(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("KWB_PLUGINS", "KWB_PLUGINS_SHA256")}
    return subprocess.run([kwb.worker(), *args], capture_output=True, text=True, env=env)


# Python variants are optional at configure time, as the module is: without DLPack's header the
# module has no kwb.variant, and without Python's embedding library kwb has no bridge.
if not hasattr(kwb, "variant"):
    pytest.skip("this build has no Python variants (no DLPack header: apt-get install libdlpack-dev)",
                allow_module_level=True)
_probe = cli("list", "--python", str(HOST_ONLY))
if "cannot load Python modules" in _probe.stderr:
    pytest.skip("this kwb has no Python bridge: " + _probe.stderr.strip(), allow_module_level=True)


def test_the_example_lists_and_plans_beside_the_catalogue_variants():
    listed = cli("list", "--op", "rmsnorm_fwd", "--python", str(EXAMPLE))
    assert listed.returncode == 0, listed.stderr
    assert "triton_rmsnorm" in listed.stdout and "torch_compile_rmsnorm" in listed.stdout
    assert "fused_v2_vec16" in listed.stdout, "the catalogue's own variants went missing"
    assert "uses Python+Triton" in listed.stdout
    assert "from Python file " + str(EXAMPLE.resolve()) in listed.stdout
    settings = dict(ops="rmsnorm_fwd", dtypes="bf16", axes={"rows": 1024, "cols": [512, 4096]})
    ids = kwb.plan(plugins=EXAMPLE, variants="fused_v2_vec16,triton_rmsnorm,torch_compile_rmsnorm", **settings)
    by_cli = cli("run", "--python", str(EXAMPLE), "--op", "rmsnorm_fwd", "--variant",
                 "fused_v2_vec16,triton_rmsnorm,torch_compile_rmsnorm", "--dtype", "bf16", "--axis", "rows=1024",
                 "--axis", "cols=512,4096", "--list-cases")
    assert by_cli.returncode == 0, by_cli.stderr
    assert ids == by_cli.stdout.split()
    assert {i.split(":")[1] for i in ids} == {"fused_v2_vec16", "triton_rmsnorm", "torch_compile_rmsnorm"}


def test_the_catalogue_names_the_file_each_python_variant_came_from():
    ops = {op["name"]: op for op in kwb.catalogue(plugins=[str(EXAMPLE)])}
    variants = {v["name"]: v for v in ops["rmsnorm_fwd"]["variants"]}
    assert variants["triton_rmsnorm"]["plugin"] == str(EXAMPLE.resolve())
    assert variants["triton_rmsnorm"]["uses"] == ["Python", "Triton"]
    assert variants["fused_v2_vec16"]["plugin"] is None


def test_tunables_sweep_and_refuse_reach_the_plan():
    ids = kwb.plan(plugins=HOST_ONLY, ops="rmsnorm_fwd", variants="py_host_only", dtypes="bf16",
                   axes={"rows": 64, "cols": 512, "block": [128, 256]})
    assert ids == cli("run", "--python", str(HOST_ONLY), "--op", "rmsnorm_fwd", "--variant", "py_host_only",
                      "--dtype", "bf16", "--axis", "rows=64", "--axis", "cols=512", "--axis", "block=128,256",
                      "--list-cases").stdout.split()
    assert len(ids) == 2 and all("block=" in i for i in ids)
    listed = cli("list", "--op", "rmsnorm_fwd", "--python", str(HOST_ONLY))
    assert "py_host_only" in listed.stdout and "block" in listed.stdout


def test_the_decorator_records_a_variant_and_refuses_bad_arguments_where_written():
    spec = importlib.util.spec_from_file_location("host_only_for_test", HOST_ONLY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    mine = [v for v in kwb.registered_variants() if v["name"] == "py_host_only"]
    assert mine and mine[-1]["factory"] is module.py_host_only and mine[-1]["tunables"] == {"block": [128, 256]}
    with pytest.raises(TypeError, match="uses takes a list"):
        kwb.variant(op="rmsnorm_fwd", name="x", uses="Triton")
    with pytest.raises(ValueError, match="role 'fast'"):
        kwb.variant(op="rmsnorm_fwd", name="x", role="fast")
    with pytest.raises(ValueError, match="positive integers"):
        kwb.variant(op="rmsnorm_fwd", name="x", tunables={"block": [0]})
    with pytest.raises(TypeError, match="non-empty string"):
        kwb.variant(op="", name="x")
    with pytest.raises(TypeError, match="decorates a function"):
        kwb.variant(op="rmsnorm_fwd", name="x")(42)


@pytest.mark.parametrize("source, words", [
    ("import kwb\nraise RuntimeError('broken on purpose')\n", ["line 2", "broken on purpose", "Traceback"]),
    ("import kwb\n@kwb.variant(op='no_such_op', name='v')\ndef v(case):\n    pass\n", ["no_such_op", "not registered"]),
    ("import kwb\n@kwb.variant(op='rmsnorm_fwd', name='fused_v2_vec16')\ndef v(case):\n    pass\n",
     ["fused_v2_vec16", "built into kwb"]),
    ("import kwb\n", ["registered no variant", "@kwb.variant"]),
])
def test_a_bad_file_is_refused_with_exit_2_saying_why(tmp_path, source, words):
    bad = tmp_path / "bad_variants.py"
    bad.write_text(source)
    result = cli("list", "--python", str(bad))
    assert result.returncode == 2
    for word in words + [str(bad)]:
        assert word in result.stderr, result.stderr
    with pytest.raises(ValueError) as raised:
        kwb.plan(plugins=bad, ops="rmsnorm_fwd")
    for word in words:
        assert word in str(raised.value)


def test_a_missing_file_is_refused():
    result = cli("list", "--python", "/no/such/variants.py")
    assert result.returncode == 2 and "no such file" in result.stderr


def test_a_plugin_library_loads_into_the_module_too():
    directory = os.environ.get("KWB_TEST_PLUGIN_DIR")
    if not directory:
        pytest.skip("KWB_TEST_PLUGIN_DIR not set (CTest sets it to the build's test plugins)")
    ops = {op["name"] for op in kwb.catalogue(plugins=[os.path.join(directory, "libkwb_test_good_plugin.so")])}
    assert "plugin_test_copy" in ops


def test_python_variants_run_verified_and_timed_beside_the_catalogue(tmp_path):
    session = kwb.Session(plugins=[EXAMPLE, PLANTED], ops="rmsnorm_fwd", dtypes="bf16",
                          variants="fused_v2_vec16,triton_rmsnorm,torch_compile_rmsnorm,py_eager_rmsnorm,"
                                   "py_wrong_rmsnorm,py_raising_rmsnorm,py_faulting_rmsnorm",
                          axes={"rows": 4096, "cols": [1000, 4096]}, preset="quick", out=tmp_path / "run")
    result = session.run()
    if result["outcome"] == "no_gpu":
        pytest.skip("needs a CUDA GPU: " + result["message"])
    assert result["outcome"] == "completed", result["message"]
    records = {(c["variant"], c["shape"]["cols"]): c for c in result["report"]["cases"]}
    if any("needs the Python module" in (c.get("reason") or "") for c in records.values()):
        pytest.skip("the bridge's Python lacks torch or triton: " + next(
            c["reason"] for c in records.values() if "needs the Python module" in (c.get("reason") or "")))
    for cols in (1000, 4096):
        for name in ("fused_v2_vec16", "triton_rmsnorm", "torch_compile_rmsnorm", "py_eager_rmsnorm"):
            record = records[(name, cols)]
            assert record["disposition"] == "passed", (name, cols, record.get("reason"))
            assert record["timing"]["span"]["median"] > 0
        assert records[("triton_rmsnorm", cols)]["plugin"]["path"] == str(EXAMPLE.resolve())
        wrong = records[("py_wrong_rmsnorm", cols)]
        assert wrong["disposition"] == "failed" and "timing" not in wrong
        raising = records[("py_raising_rmsnorm", cols)]
        assert raising["disposition"] == "failed"
        assert "Traceback" in raising["reason"] and "planted: this launcher fails" in raising["reason"]
        faulting = records[("py_faulting_rmsnorm", cols)]
        assert faulting["disposition"] == "failed" and "illegal" in faulting["reason"].lower(), faulting["reason"]
    # The first fault (cols=1000) cost its worker; the cases planned after it (cols=4096, asserted
    # passed above) ran in a new one. The last fault is the plan's last case: nothing runs after it.
    assert int(result["report"]["run"]["settings"]["worker_restarts"]) >= 1
    journal = (tmp_path / "run" / "journal.jsonl").read_text()
    assert str(PLANTED.resolve()) in journal, "the journal does not keep the Python files for --resume"


def test_a_suite_that_names_a_python_file_plans_the_same_in_the_module_and_the_cli(tmp_path):
    suite = tmp_path / "python.yaml"
    suite.write_text(f"name: python\nplugins: {HOST_ONLY}\nentries:\n  - ops: rmsnorm_fwd\n"
                     f"    variants: py_host_only\n    dtypes: bf16\n    shapes: edge\n")
    ids = kwb.plan(suite=suite)
    by_cli = cli("run", "--suite", str(suite), "--list-cases")
    assert by_cli.returncode == 0, by_cli.stderr
    assert ids == by_cli.stdout.split() and ids and all(":py_host_only:" in i for i in ids)


OP_EXAMPLE = ROOT / "examples" / "python" / "squared_relu_op.py"


def test_an_op_defined_in_python_lists_and_plans_with_its_variants():
    ops = {op["name"]: op for op in kwb.catalogue(plugins=[OP_EXAMPLE])}
    op = ops["py_squared_relu"]
    assert [a["name"] for a in op["axes"]] == ["rows", "cols"]
    assert {v["name"] for v in op["variants"]} == {"eager_relu_square", "torch_compile_relu_square"}
    ids = kwb.plan(plugins=OP_EXAMPLE, ops="py_squared_relu", dtypes="bf16")
    assert ids == cli("run", "--python", str(OP_EXAMPLE), "--op", "py_squared_relu", "--dtype", "bf16",
                      "--list-cases").stdout.split()
    assert len(ids) == 4


BAD_OP_DEFAULTS = dict(
    tensors="lambda s, d: [kwb.tensor('x', [s['rows']]), kwb.tensor('y', [s['rows']], output=True)]",
    oracle="lambda s, i: {'y': i['x']}", work="lambda s, d: (8 * s['rows'], 0)",
    default_shapes="[{'rows': 8}]", edge_shapes="[{'rows': 3}]")


def write_op_file(path, **overrides):
    args = dict(BAD_OP_DEFAULTS, **overrides)
    path.write_text("import kwb\nkwb.op(name='py_bad_op', axes={'rows': 8}, dtypes=['fp32'], " +
                    ", ".join(f"{k}={v}" for k, v in args.items()) + ")\n")
    return path


@pytest.mark.parametrize("overrides, words", [
    (dict(tensors="lambda s, d: 1 / 0"), ["ZeroDivisionError", "tensors()"]),
    (dict(tensors="lambda s, d: [kwb.tensor('x', [s['n']])]"), ["KeyError", "'n'"]),
    (dict(work="lambda s, d: 1 / 0"), ["ZeroDivisionError", "work()"]),
    (dict(oracle="lambda s, i: 1 / 0"), ["ZeroDivisionError", "oracle()"]),
    (dict(oracle="lambda s, i: {}"), ["returned no 'y'"]),
    (dict(oracle="lambda s, i: {'y': i['x'].reshape(1, -1)}"), ["of shape (1, 3)", "not its dims (3,)"]),
    (dict(default_shapes="{'rows': 8}"), ["TypeError", "list of {axis: value} dicts"]),
    (dict(edge_shapes="[(3,)]"), ["TypeError", "not a dict"]),
])
def test_a_python_op_whose_functions_fail_is_refused_at_start_up(tmp_path, overrides, words):
    bad = write_op_file(tmp_path / "bad_op.py", **overrides)
    result = cli("list", "--python", str(bad))
    assert result.returncode == 2, result.stdout
    for word in words:
        assert word in result.stderr, result.stderr


def test_a_shape_a_python_ops_work_refuses_refuses_the_plan_before_anything_runs(tmp_path):
    op = write_op_file(tmp_path / "picky_op.py",
                       work="lambda s, d: (8 * s['rows'], 0) if s['rows'] % 2 == 0 or s['rows'] == 3 else 1 / 0")
    result = cli("run", "--python", str(op), "--op", "py_bad_op", "--axis", "rows=7", "--list-cases")
    assert result.returncode == 2 and "work()" in result.stderr and "ZeroDivisionError" in result.stderr, result.stderr
    with pytest.raises(ValueError, match="work"):
        kwb.plan(plugins=op, ops="py_bad_op", axes={"rows": 7})
