"""The Python module kwb, checked against the command line it binds (the same plan, the same
report) on any machine; the run itself on a machine with a GPU, and its refusal without one."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

import kwb

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "h100-mean-pooling" / "report.json"


def kwb_cli(*args):
    """The command line the module binds, with no plugin inherited from the environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("KWB_PLUGINS", "KWB_PLUGINS_SHA256")}
    return subprocess.run([kwb.worker(), *args], capture_output=True, text=True, env=env)


def test_the_catalogue_lists_ops_with_their_axes_dtypes_and_variants():
    ops = {op["name"]: op for op in kwb.catalogue()}
    listed = {line.split()[0] for line in kwb_cli("list").stdout.splitlines() if line[:1].isalpha()}
    assert set(ops) == listed, "the module's catalogue is not the one `kwb list` shows"
    rms = ops["rmsnorm_fwd"]
    assert {"bf16", "fp16", "fp32"} <= set(rms["dtypes"])
    assert [a["name"] for a in rms["axes"]][:2] == ["rows", "cols"]
    roles = {v["role"] for v in rms["variants"]}
    assert "baseline" in roles and "fused" in roles
    assert not any(name.startswith("test_") for name in ops), "test-only ops listed without asking"
    assert any(op["name"].startswith("test_") for op in kwb.catalogue(include_test_variants=True))


def test_a_plan_is_the_one_kwb_run_makes_from_the_same_settings():
    ids = kwb.plan(ops="rmsnorm_fwd", dtypes=["bf16", "fp16"], axes={"rows": 1024, "cols": [512, 4096]})
    cli = kwb_cli("run", "--op", "rmsnorm_fwd", "--dtype", "bf16,fp16", "--axis", "rows=1024",
                  "--axis", "cols=512,4096", "--list-cases")
    assert cli.returncode == 0, cli.stderr
    assert ids == cli.stdout.split()
    assert len(ids) > 4 and all(i.startswith("rmsnorm_fwd:") for i in ids)
    # The other forms of axes: one assignment string, a list of them, any iterable of values.
    assert kwb.plan(ops="rmsnorm_fwd", dtypes="bf16,fp16", axes=["rows=1024", "cols=512,4096"]) == ids
    assert kwb.plan(ops="rmsnorm_fwd", dtypes="bf16,fp16", axes={"rows": (1024,), "cols": "512,4096"}) == ids
    one = kwb.plan(ops="rmsnorm_fwd", dtypes="bf16", axes="cols=512,4096")
    assert one == kwb_cli("run", "--op", "rmsnorm_fwd", "--dtype", "bf16", "--axis", "cols=512,4096",
                          "--list-cases").stdout.split()
    # A 0/1 switch takes True and False.
    causal = kwb.plan(ops="attention_fwd", dtypes="bf16", axes={"causal": [False, True]})
    assert causal == kwb_cli("run", "--op", "attention_fwd", "--dtype", "bf16", "--axis", "causal=0,1",
                             "--list-cases").stdout.split()
    # A whole suite file plans too.
    suite = kwb.plan(suite=str(ROOT / "suites" / "smoke.yaml"))
    cli = kwb_cli("run", "--suite", str(ROOT / "suites" / "smoke.yaml"), "--list-cases")
    assert suite == cli.stdout.split()


@pytest.mark.parametrize("settings, words", [
    (dict(ops="rmsnorm_fwdd"), "rmsnorm_fwdd"),
    (dict(ops="rmsnorm_fwd", dtypes="bf17"), "bf17"),
    (dict(ops="rmsnorm_fwd", axes=["rows=zero"]), "rows"),
    (dict(ops="rmsnorm_fwd", preset="fastest"), "fastest"),
])
def test_bad_settings_are_a_value_error_naming_what_is_wrong(settings, words):
    with pytest.raises(ValueError, match=words):
        kwb.plan(**settings)
    with pytest.raises(ValueError, match=words):
        kwb.Session(**settings)


def test_a_list_argument_of_another_type_is_a_type_error():
    with pytest.raises(TypeError, match="ops"):
        kwb.plan(ops=[1, 2])


def test_a_session_runs_its_plan_or_says_why_there_is_no_gpu(tmp_path):
    session = kwb.Session(ops="rmsnorm_fwd", variants="fused_v2_vec16", dtypes="bf16",
                          axes={"rows": 1024, "cols": 512}, preset="quick", out=str(tmp_path / "run"))
    assert session.cases == ["rmsnorm_fwd:fused_v2_vec16:bf16:1024x512"]
    assert session.progress() is None
    records, started = [], []
    result = session.run(on_record=lambda r, p: records.append((r, p)),
                         on_started=lambda c, p: started.append(c))
    if result["outcome"] == "no_gpu":
        assert result["message"], "no GPU, and no reason given"
        assert records == [] and started == []
        pytest.skip("needs a CUDA GPU: " + result["message"])
    assert result["outcome"] == "completed", result["message"]
    assert started == session.cases
    assert [r["variant"] for r, _ in records] == ["fused_v2_vec16"]
    record, progress = records[0]
    assert record["disposition"] == "passed" and record["timing"]["span"]["median"] > 0
    assert progress["done"] == 1 and progress["total"] == 1
    on_disk = kwb.load_report(str(tmp_path / "run" / "report.json"))
    assert [c["variant"] for c in on_disk["cases"]] == ["fused_v2_vec16"]
    assert result["report"]["cases"][0]["timing"]["span"]["median"] == on_disk["cases"][0]["timing"]["span"]["median"]


def test_an_exception_in_a_callback_stops_the_run_and_is_raised_again(tmp_path):
    session = kwb.Session(ops="rmsnorm_fwd", variants="fused_v2_vec16", dtypes="bf16",
                          axes={"rows": 1024, "cols": [512, 1024, 2048]}, preset="quick")
    seen = []

    def stop(record, progress):
        seen.append(record["variant"])
        raise RuntimeError("enough")

    try:
        result = session.run(on_record=stop)
    except RuntimeError as e:
        assert "enough" in str(e)
        assert len(seen) == 1, "the run went on after its callback raised"
        return
    assert result["outcome"] == "no_gpu", result
    pytest.skip("needs a CUDA GPU: " + result["message"])


def test_a_report_loads_as_the_json_it_is():
    assert kwb.load_report(SAMPLE) == kwb.load_report(str(SAMPLE)), "a pathlib.Path is a path too"
    report = kwb.load_report(str(SAMPLE))
    raw = json.loads(SAMPLE.read_text())
    assert len(report["cases"]) == len(raw["cases"]) > 0
    for got, want in zip(report["cases"], raw["cases"]):
        assert (got["op"], got["variant"], got["dtype"], got["disposition"]) == \
               (want["op"], want["variant"], want["dtype"], want["disposition"])
        if want.get("timing"):
            assert got["timing"]["span"]["median"] == want["timing"]["span"]["median"]
    assert report["run"]["device"]["name"] == raw["run"]["device"]["name"]


def test_a_bad_report_is_a_value_error_naming_the_file(tmp_path):
    bad = tmp_path / "report.json"
    bad.write_text('{"schema": "kwb.report/1", "cases": [}')
    with pytest.raises(ValueError, match="report.json"):
        kwb.load_report(str(bad))
    with pytest.raises(ValueError, match="nowhere.json"):
        kwb.load_report(str(tmp_path / "nowhere.json"))


def test_a_report_as_a_dataframe_has_a_row_per_case():
    pandas = pytest.importorskip("pandas", reason="pandas is not installed (python3-pandas)")
    frame = kwb.dataframe(str(SAMPLE))
    assert isinstance(frame, pandas.DataFrame)
    assert len(frame) == len(json.loads(SAMPLE.read_text())["cases"])
    assert "timing.span.median" in frame.columns


def test_the_worker_is_the_kwb_built_beside_the_module_unless_the_environment_names_another(tmp_path):
    assert os.path.basename(kwb.worker()) == "kwb" and os.access(kwb.worker(), os.X_OK)
    code = "import kwb; print(kwb.worker())"
    env = dict(os.environ, KWB_WORKER_EXE=str(tmp_path / "other-kwb"))
    named = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert named.stdout.strip() == str(tmp_path / "other-kwb"), named.stderr


def test_a_cancel_before_the_run_stops_it_before_its_first_case():
    session = kwb.Session(ops="rmsnorm_fwd", variants="fused_v2_vec16", dtypes="bf16",
                          axes={"rows": 1024, "cols": [512, 1024]}, preset="quick")
    session.cancel()
    records = []
    result = session.run(on_record=lambda r, p: records.append(r))
    assert records == []
    if result["outcome"] == "no_gpu":
        pytest.skip("needs a CUDA GPU: " + result["message"])
    assert result["outcome"] == "cancelled", result
    assert session.progress()["done"] == 0
