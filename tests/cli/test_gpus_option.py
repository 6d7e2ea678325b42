"""``--gpus`` on copy-bench, gather-bench, mr-bench and report: each GPU in turn, results that know their GPU.

The benches are replaced by fakes that return constructed rows (provider ``fixture``) for the GPU they
were asked to run on, on a machine CUDA says has four GPUs: what is tested is the loop, the tagging,
the per-GPU verdicts, the side-by-side table and the refusals, not a measurement.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gdrdiag.bench.gpus import GpuChoice, parse_gpus, resolve
from gdrdiag.cli import app
from gdrdiag.errors import UserInputError
from gdrdiag.model.params import CopyParams, GatherParams
from gdrdiag.model.vocabulary import Direction, MemoryKind
from tests.unit.diagnosis_scenarios import ok

runner = CliRunner()
MiB = 1 << 20
SPEED = {0: 53.0, 1: 53.5, 2: 30.0, 3: 52.8}  # GPU 2 below its siblings


@pytest.mark.parametrize(
    "text,count,expected",
    [
        ("all", 4, (0, 1, 2, 3)),
        ("ALL", 1, (0,)),
        ("0,2", 4, (0, 2)),
        ("1-3", 4, (1, 2, 3)),
        ("3,0-1,1", 4, (3, 0, 1)),
        ("all", None, (0,)),  # no usable CUDA: GPU 0's cases are WAIVED with the driver's reason
        ("2", None, (2,)),
    ],
)
def test_parse_and_resolve(text, count, expected):
    assert resolve(parse_gpus(text), count) == expected


@pytest.mark.parametrize("text", ["", ",", "x", "1-", "-1", "3-1", "0,a", "99999"])
def test_bad_lists_are_refused(text):
    with pytest.raises(UserInputError):
        parse_gpus(text)


def test_an_ordinal_cuda_does_not_list_is_refused_before_any_work():
    with pytest.raises(UserInputError, match="GPU 4 is not listed by CUDA here \\(4 GPU\\(s\\): 0-3\\)"):
        resolve(GpuChoice(ordinals=(0, 4)), 4)


@pytest.fixture
def four_gpus(monkeypatch):
    """CUDA lists four GPUs; copy-bench and gather-bench return one row per direction for the GPU asked."""
    from gdrdiag.bench import copy as copy_bench
    from gdrdiag.bench import gather, gpus

    monkeypatch.setattr(gpus, "cuda_gpu_count", lambda: 4)
    asked: list[int] = []

    def fake_copy(opts, progress=None):
        asked.append(opts.device)
        rows = []
        for d in (Direction.H2D, Direction.D2H):
            p = CopyParams(memory=MemoryKind.PINNED, direction=d, mode="async", size_bytes=256 * MiB)
            rows.append(ok(f"copy_{d.value}_pinned", SPEED[opts.device], "GB/s", p))
        return rows

    def fake_gather(config, progress=None):
        from gdrdiag.bench.gather_config import GatherRun

        asked.append(config.device)
        p = GatherParams(kernel="warp", record_bytes=656, slots=1 << 20)
        return GatherRun(
            results=[ok("gather_warp", SPEED[config.device] * 0.8, "GB/s", p)],
            notes=["n"],
            gpu_name="NVIDIA H100",
            sm_count=132,
        )

    def fake_together(ordinals, size, iterations=5, warmup=1):
        asked.append(tuple(ordinals))
        rows = []
        for d in (Direction.H2D, Direction.D2H):
            p = CopyParams(
                memory=MemoryKind.PINNED, direction=d, mode="together", size_bytes=size, streams=len(ordinals)
            )
            rows.append(ok(f"copy_{d.value}_pinned_together", 100.0, "GB/s", p))
        return rows

    from gdrdiag.bench import copy_together

    monkeypatch.setattr(copy_bench, "run_copy_bench", fake_copy)
    monkeypatch.setattr(gather, "run", fake_gather)
    monkeypatch.setattr(copy_together, "run_together", fake_together)
    return asked


def test_copy_bench_runs_each_gpu_in_turn_and_every_row_knows_its_gpu(four_gpus, tmp_path):
    out = tmp_path / "c.json"
    res = runner.invoke(app, ["copy-bench", "--gpus", "all", "--quiet", "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    assert four_gpus == [0, 1, 2, 3, (0, 1, 2, 3)]  # each GPU alone, then all four at once
    saved = json.loads(out.read_text())
    alone = [r for r in saved["results"] if not r["key"].endswith("_together")]
    assert sorted({r["params"].get("gpu", 0) for r in alone}) == [0, 1, 2, 3]
    together = {r["key"]: r for r in saved["results"] if r["key"].endswith("_together")}
    assert set(together) == {"copy_h2d_pinned_together", "copy_d2h_pinned_together"}
    h2d = together["copy_h2d_pinned_together"]
    assert h2d["params"]["gpu"] is None and h2d["settings"]["gpu_bdf"] is None  # no one GPU's row
    # 100 GB/s together over 53.0 + 53.5 + 30.0 + 52.8 alone
    assert h2d["metrics"]["ratio_to_sum_alone"] == pytest.approx(100.0 / sum(SPEED.values()), rel=1e-3)
    text = res.output
    for g in range(4):
        assert f"GPU {g}" in text
    assert "GPUs side by side" in text
    h2d = next(ln for ln in text.splitlines() if ln.startswith("copy_h2d_pinned"))
    assert "30.0 <" in h2d and "53.0 <" not in h2d
    assert "PERF-GPU-OUTLIER" in text and "GPU 2" in text.split("PERF-GPU-OUTLIER", 1)[1].splitlines()[0]


def test_copy_bench_a_list_runs_only_those(four_gpus):
    res = runner.invoke(app, ["copy-bench", "--gpus", "3,1", "--quiet"])
    assert res.exit_code == 0, res.output
    assert four_gpus == [3, 1, (3, 1)]


def test_gather_bench_runs_each_gpu_and_names_the_slow_one(four_gpus, tmp_path):
    out = tmp_path / "g.json"
    res = runner.invoke(app, ["gather-bench", "--gpus", "0-3", "--quiet", "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    assert four_gpus == [0, 1, 2, 3]
    saved = json.loads(out.read_text())
    assert [r["params"].get("gpu", 0) for r in saved["results"]] == [0, 1, 2, 3]
    assert [f["code"] for f in saved["findings"]][:1] == ["PERF-GPU-OUTLIER"]
    assert "GPU 2" in saved["findings"][0]["title"]
    assert "GPU 0: n" in saved["notes"]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["copy-bench", "--gpus", "0", "--device", "1"], "not both"),
        (["gather-bench", "--gpus", "0", "--device", "1"], "not both"),
        (["mr-bench", "--provider", "soft", "--gpus", "0", "--gpu", "1"], "not both"),
        (["copy-bench", "--gpus", "7"], "GPU 7 is not listed by CUDA here"),
        (["copy-bench", "--gpus", "zero"], "not a CUDA ordinal"),
        (["mr-bench", "--gpus", "all", "--loop-cost"], "--loop-cost measures no GPU"),
        (["mr-bench", "--provider", "soft", "--gpus", "all", "--server"], "one GPU per end"),
        (["report", "--gpus", "all", "--from-report", "x.json", "-o", "y.json"], "drop --gpus"),
    ],
)
def test_contradictions_and_bad_lists_are_one_line_exit_2(four_gpus, args, needle):
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert needle in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert four_gpus == []


def test_report_runs_the_per_gpu_benches_on_each_gpu_and_peer_bench_once(monkeypatch, tmp_path):
    from gdrdiag.bench import gpus
    from gdrdiag.cli import report_cmd

    monkeypatch.setattr(gpus, "cuda_gpu_count", lambda: 3)
    calls: list[tuple[str, int, bool]] = []

    def bench(name):
        def run(profile):
            calls.append((name, profile.gpu, profile.host_kinds))
            p = CopyParams(
                memory=MemoryKind.PINNED, direction=Direction.H2D, mode="async", size_bytes=256 * MiB
            )
            return [ok("copy_h2d_pinned", SPEED[profile.gpu], "GB/s", p)] if name == "copy-bench" else []

        return run

    monkeypatch.setattr(
        report_cmd,
        "PROFILE_BENCHES",
        tuple((n, bench(n)) for n in ("copy-bench", "gather-bench", "mr-bench", "peer-bench")),
    )
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["report", "--quiet", "--gpus", "all", "-o", str(out)])
    assert res.exit_code in (0, 1), res.output
    assert calls == [
        ("copy-bench", 0, True),
        ("copy-bench", 1, False),
        ("copy-bench", 2, False),
        ("gather-bench", 0, True),
        ("gather-bench", 1, False),
        ("gather-bench", 2, False),
        ("mr-bench", 0, True),
        ("mr-bench", 1, False),
        ("mr-bench", 2, False),
        ("peer-bench", 0, True),
    ]
    saved = json.loads(out.read_text())
    assert [r["params"].get("gpu", 0) for r in saved["results"]] == [0, 1, 2]
    assert "GPUs side by side" in res.output


@pytest.mark.parametrize(
    "gpus,args,expected_sizes",
    [
        (4, [], (64 << 20,)),  # a node: one size per ordered pair
        (2, [], (4096, 65536, 1 << 20, 16 << 20, 256 << 20)),  # a pair: the sweep
        (4, ["--sizes", "1M"], (1 << 20,)),  # asked for
        (4, ["--pairs", "0:1"], (4096, 65536, 1 << 20, 16 << 20, 256 << 20)),  # one pair: the sweep
    ],
)
def test_peer_bench_on_a_node_runs_one_size_per_pair_unless_asked(monkeypatch, gpus, args, expected_sizes):
    from gdrdiag.bench import peer
    from gdrdiag.cli import peer_bench_cmd

    seen = []

    def fake_run(opts, machine, progress=None):
        seen.append(opts)
        return []

    monkeypatch.setattr(peer_bench_cmd, "_gpu_count", lambda: gpus)
    monkeypatch.setattr(peer, "run_peer_bench", fake_run)
    res = runner.invoke(app, ["peer-bench", "--quiet", *args])
    assert res.exit_code == 0, res.output
    assert seen[0].sizes == expected_sizes
    if gpus > 2 and not args:
        assert seen[0].keys == (
            "peer_ce_off",
            "peer_ce_on",
            "peer_sm_read",
            "peer_all_to_one",
            "peer_all_to_all",
        )
        assert "each ordered pair at one size" in res.output
