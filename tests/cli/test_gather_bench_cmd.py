"""gather-bench CLI: bad input, no GPU, table/JSON output and exit codes (bench faked where needed)."""

import json
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from gdrdiag.bench import gather
from gdrdiag.cli import app
from gdrdiag.model.params import GatherMetrics, GatherParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats, Status

runner = CliRunner()


@pytest.mark.parametrize(
    "args,needle",
    [
        (["-s", "0"], "must be greater than 0"),
        (["--kernels", "warp,turbo"], "unknown gather kernel 'turbo'"),
        (["--slots", "0"], "slots"),
        (["--pattern", "runs:500", "--slots", "100"], "runs of 500"),
        (["--pattern", "sequential", "--slots", "1000"], "sequential indices need 262144 slots"),
        (["-s", "1M", "--slots", "4000000000"], "host memory"),
        (["--stride", "64"], "smaller than the record size"),
        (["--sweep", "sideways"], "unknown sweep"),
        (["--sweep-kernels", "best,nope"], "unknown gather kernel"),
        (["--threads", "48"], "multiple of 32"),
        (["--sm-limit", "0"], "--sm-limit"),
        (["--rcb", "256"], "rcb must be 64 or 128"),
        (["--requests", "0"], "greater than 0"),
        (["--plan-reuse", "0"], "--plan-reuse"),
        (["--records-per-step", "16"], "--records-per-step"),
        (["--rounds", "0"], "--rounds"),
        (["--rounds", "2", "--min-rounds", "3"], "--min-rounds"),
        (["--min-rounds", "0"], "--min-rounds"),
        (["--json-out", "/nonexistent/dir/x.json"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle, monkeypatch):
    def no_run(*a, **k):  # nothing may be measured (or allocated) for bad input
        raise AssertionError("gather.run called on bad input")

    monkeypatch.setattr(gather, "run", no_run)
    res = runner.invoke(app, ["gather-bench", *args])
    assert res.exit_code == 2, res.output
    assert needle in res.output
    assert "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def _fake_run(status=Status.OK):
    def run(config, progress=None):
        ce = BenchResult(
            key="gather_ce_reference",
            status=Status.OK,
            stats=SampleStats.of([55.5]),
            params=GatherParams(copy_bytes=config.base.nbytes, record_bytes=config.base.record_bytes),
            metrics=GatherMetrics(ratio_to_raw=0.881),
            verified=True,
        )
        rows = [ce]
        for k, v in (("warp", 47.5), ("lines", 48.8)):
            params = GatherParams(
                kernel=k,
                record_bytes=640,
                stride_bytes=640,
                base_offset_bytes=16,
                pattern="random",
                sm_limit=None,
                sms_total=132,
                records=262144,
                slots=300000,
                mps_bytes=256,
                mrrs_bytes=4096,
                rcb_bytes=128,
            )
            rows.append(
                BenchResult(
                    key="gather_" + k,
                    status=status,
                    stats=SampleStats.of([v]),
                    params=params,
                    settings=RunSettings(sweep="ladder"),
                    metrics=GatherMetrics(
                        ratio_to_ce=v / 55.5,
                        model_ratio_to_ce=0.87,
                        layout_partial_line_loss=0.066,
                    ),
                    verified=status is Status.OK,
                    reason=None if status is Status.OK else "wrong data: record 3 byte 0",
                )
            )
        if progress:
            progress(1, 2, "ladder")
        return gather.GatherRun(results=rows, notes=["best kernel: lines"], gpu_name="Fake GPU", sm_count=132)

    return run


def test_table_output_with_findings(monkeypatch):
    monkeypatch.setattr(gather, "run", _fake_run())
    res = runner.invoke(app, ["gather-bench", "--kernels", "warp,lines"])
    assert res.exit_code == 0, res.output
    assert "Copy-engine reference" in res.output and "Kernel ladder" in res.output
    assert "ALIGN-01" in res.output and "best kernel: lines" in res.output


def test_json_output_and_file(monkeypatch, tmp_path):
    monkeypatch.setattr(gather, "run", _fake_run())
    out = tmp_path / "g.json"
    res = runner.invoke(app, ["--json", "gather-bench", "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data == json.loads(out.read_text())
    assert [r["key"] for r in data["results"]] == ["gather_ce_reference", "gather_warp", "gather_lines"]
    assert data["findings"][0]["code"] == "ALIGN-01"
    assert data["notes"] == ["best kernel: lines"]


def test_wrong_data_exits_1(monkeypatch):
    monkeypatch.setattr(gather, "run", _fake_run(Status.ERROR))
    res = runner.invoke(app, ["gather-bench"])
    assert res.exit_code == 1
    assert "wrong data: record 3 byte 0" in res.output


def test_options_reach_the_config(monkeypatch):
    seen = {}

    def run(config, progress=None):
        seen["config"] = config
        return gather.GatherRun(results=[], notes=[])

    monkeypatch.setattr(gather, "run", run)
    res = runner.invoke(
        app,
        [
            "gather-bench",
            "-s",
            "640",
            "--stride",
            "padded",
            "--base-offset",
            "16",
            "--pattern",
            "runs:8",
            "--sm-limit",
            "16",
            "--threads",
            "512",
            "--mps",
            "512",
            "--sweep",
            "sm,offset",
            "--seed",
            "3",
        ],
    )
    assert res.exit_code == 0, res.output
    c = seen["config"]
    assert (c.base.record_bytes, c.base.stride, c.base.base_offset) == (640, 640, 16)
    assert (c.base.pattern, c.base.run_length, c.base.seed) == ("runs", 8, 3)
    assert (c.sm_limit, c.threads, c.link.mps, c.link_explicit) == (16, 512, 512, True)
    assert c.sweeps == ("ladder", "sm", "offset")


def test_help_is_fast():
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "gdrdiag", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "gather-bench" in out.stdout
    assert time.perf_counter() - t0 < 2.0  # the 0.5 s budget, with interpreter start-up slack for CI


@pytest.mark.parametrize("flag,expected", [([], False), (["--ce-per-case"], True)])
def test_ce_per_case_reaches_the_config(flag, expected, monkeypatch):
    seen = []

    def run(config, progress=None):
        seen.append(config.ce_per_case)
        return gather.waived_run(config, "faked: no GPU in this test")

    monkeypatch.setattr(gather, "run", run)
    res = runner.invoke(app, ["gather-bench", "-k", "warp", *flag])
    assert res.exit_code == 0, res.output
    assert seen == [expected]
