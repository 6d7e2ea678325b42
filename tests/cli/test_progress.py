"""Progress with count and ETA on stderr for every bench and report, TTY or not; --quiet silences it.

CliRunner's stderr is not a terminal, as under a pipe, CI or nohup, where runs used to be silent.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.cli.progress import Progress, format_seconds
from gdrdiag.errors import NotSupported

runner = CliRunner()
STEP = re.compile(r"^\[(\d+)/(\d+)\] (\S.*) \.\.\. ETA (.+)$")
REG_COST = [
    "mr-bench",
    "--provider",
    "soft",
    "--memory",
    "pageable",
    "--reg-cost",
    "--reg-sizes",
    "4K,64K,1M",
]


def steps(stderr: str) -> list[tuple[int, int, str, str]]:
    """(number, total, label, ETA) of every progress line."""
    return [(int(m[1]), int(m[2]), m[3], m[4]) for m in map(STEP.match, stderr.splitlines()) if m is not None]


def test_the_count_and_the_eta_follow_the_pace_so_far(capsys):
    now = [100.0]
    progress = Progress("x", 4, clock=lambda: now[0])
    progress.step("a")
    now[0] += 10  # the first step took 10 s: three remain
    progress.step("b")
    now[0] += 20  # 30 s for two steps: 15 s each, two remain
    progress.step("c")
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "[1/4] a ... ETA unknown (first step)",
        "[2/4] b ... ETA 30 s",
        "[3/4] c ... ETA 30 s",
    ]


def test_a_plan_that_runs_short_and_an_unknown_total_show_the_count_alone(capsys):
    progress = Progress("x", 1, clock=lambda: 0.0)
    progress.step("a")
    progress.step("b")
    Progress("x", None).step("c")
    assert capsys.readouterr().err.splitlines()[1:] == ["[2] b", "[1] c"]


def test_disabled_progress_writes_nothing(capsys):
    progress = Progress("x", 2, enabled=False)
    progress.step("a")
    progress.note("b")
    assert capsys.readouterr().err == "" and progress.done == 1


@pytest.mark.parametrize(
    "seconds,text", [(0.4, "0 s"), (59.6, "1 min 0 s"), (185, "3 min 5 s"), (3720, "1 h 2 min")]
)
def test_durations_read_at_a_glance(seconds, text):
    assert format_seconds(seconds) == text


def test_mr_bench_reg_cost_shows_every_point_on_stderr_and_leaves_stdout_alone():
    res = runner.invoke(app, REG_COST)
    assert res.exit_code == 0, res.output
    got = steps(res.stderr)
    assert [(n, total) for n, total, _, _ in got] == [(1, 3), (2, 3), (3, 3)]
    assert [label for _, _, label, _ in got] == [
        "mr_reg_pageable_mr 4 KiB",
        "mr_reg_pageable_mr 64 KiB",
        "mr_reg_pageable_mr 1 MiB",
    ]
    assert all(re.fullmatch(r"\d+ s", eta) for _, _, _, eta in got[1:])
    assert not steps(res.stdout) and "... ETA" not in res.stdout and "registration cost" in res.stdout


def test_mr_bench_json_stdout_still_parses_with_progress_on_stderr():
    res = runner.invoke(app, ["--json", *REG_COST])
    assert res.exit_code == 0, res.output
    assert len(steps(res.stderr)) == 3
    assert {r["key"] for r in json.loads(res.stdout)["results"]} == {
        "mr_reg_pageable_mr",
        "mr_reuse_pageable_mr",
    }


def test_quiet_silences_progress_and_changes_nothing_else():
    loud = runner.invoke(app, ["--json", *REG_COST])
    quiet = runner.invoke(app, ["--json", *REG_COST, "--quiet"])
    assert quiet.exit_code == loud.exit_code == 0
    assert quiet.stderr == "" and steps(loud.stderr)
    keys = [[r["key"] for r in json.loads(x.stdout)["results"]] for x in (loud, quiet)]
    assert keys[0] == keys[1]


def test_copy_bench_reports_each_case(monkeypatch):
    from gdrdiag.bench import copy

    def fake_run(opts, progress=None):
        for key in ("copy_h2d_pinned", "copy_d2h_pinned", "copy_bidir_pinned"):
            progress(key)
        return []

    monkeypatch.setattr(copy, "run_copy_bench", fake_run)
    monkeypatch.setattr(copy, "planned_case_count", lambda opts: 3)
    res = runner.invoke(app, ["copy-bench", "--memory", "pinned", "--parts", "sweep"])
    assert res.exit_code == 0, res.output
    assert [(n, t, label) for n, t, label, _ in steps(res.stderr)] == [
        (1, 3, "copy_h2d_pinned"),
        (2, 3, "copy_d2h_pinned"),
        (3, 3, "copy_bidir_pinned"),
    ]
    assert not steps(res.stdout) and "... ETA" not in res.stdout
    quiet = runner.invoke(app, ["copy-bench", "-G", "pinned", "--parts", "sweep", "--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_gather_bench_reports_each_case_with_its_own_count(monkeypatch):
    from gdrdiag.bench import gather

    def fake_run(config, progress=None):
        progress(1, 2, "ladder: warp R=656")
        progress(2, 2, "ladder: lines R=656")
        raise NotSupported("no GPU (test)")

    monkeypatch.setattr(gather, "run", fake_run)
    res = runner.invoke(app, ["gather-bench"])
    assert [(n, t, label) for n, t, label, _ in steps(res.stderr)] == [
        (1, 2, "ladder: warp R=656"),
        (2, 2, "ladder: lines R=656"),
    ]
    quiet = runner.invoke(app, ["gather-bench", "--quiet"])
    assert not steps(quiet.stderr)


def test_report_reports_each_part(tmp_path):
    res = runner.invoke(app, ["report", "--quick", "--no-rdma", "-o", str(tmp_path / "r.json")])
    assert res.exit_code in (0, 1), res.output
    got = steps(res.stderr)
    assert [label for _, _, label, _ in got] == [
        "inspect",
        "copy-bench",
        "gather-bench",
        "mr-bench",
        "peer-bench",
    ]
    assert {t for _, t, _, _ in got} == {5}
    quiet = runner.invoke(app, ["report", "--quick", "--no-rdma", "-o", str(tmp_path / "q.json"), "--quiet"])
    assert not steps(quiet.stderr)


@pytest.mark.parametrize(
    "mode",
    [
        ["-n", "100"],
        ["--latency", "-n", "50"],
        ["--blocks", "8", "-s", "4K", "-n", "64"],
    ],
)
def test_mr_bench_plans_as_many_steps_as_it_reports(mode):
    res = runner.invoke(
        app, ["mr-bench", "--provider", "soft", "--memory", "pageable", "--repeats", "1", *mode]
    )
    assert res.exit_code == 0, res.output
    got = steps(res.stderr)
    assert got and [n for n, _, _, _ in got] == list(range(1, len(got) + 1))
    assert {t for _, t, _, _ in got} == {len(got)}


def _gpu_absent() -> bool:
    from gdrdiag.errors import NotSupported
    from gdrdiag.hw import cuda

    try:
        cuda.get_device(0)
    except NotSupported:
        return True
    return False


@pytest.mark.parametrize(
    ("mode", "steps"),
    [(["-a", "-n", "20"], 23), (["--reg-cost", "--reg-sizes", "4K,64K"], 2)],
)
def test_waived_cases_take_no_progress_steps(mode, steps):
    """Without a GPU, -a stopped at [23/69] and --reg-cost said ETA 0 s too early."""
    if not _gpu_absent():
        pytest.skip("a GPU is here: the GPU kinds run")
    res = CliRunner().invoke(app, ["mr-bench", "--provider", "soft", "--repeats", "1", *mode])
    assert res.exit_code == 0, res.output
    counted = [ln.split("]")[0] + "]" for ln in res.stderr.splitlines() if ln.startswith("[")]
    assert counted == [f"[{i}/{steps}]" for i in range(1, steps + 1)], res.stderr


def test_a_plan_of_step_seconds_weighs_unequal_steps(capsys):
    """Steps planned at 1, 1, 4 and 4 s: the ETA is the remaining plan at the pace measured against it."""
    now = [0.0]
    progress = Progress("x", None, clock=lambda: now[0], plan=(1.0, 1.0, 4.0, 4.0))
    for label, took in (("a", 2.0), ("b", 2.0), ("c", 8.0), ("d", 8.0)):
        progress.step(label)
        now[0] += took  # every step takes twice its plan
    assert capsys.readouterr().err.splitlines() == [
        "[1/4] a ... ETA 10 s",  # the plan itself before any step finished
        "[2/4] b ... ETA 18 s",  # 9 s planned left, at 2 s per planned second
        "[3/4] c ... ETA 16 s",
        "[4/4] d ... ETA 8 s",
    ]


def _fake_loop_cost(monkeypatch, native_built: bool) -> list[float]:
    """Both loop-cost benches as fakes that advance a fake clock by each step's real length.

    Each fake takes exactly the seconds the real bench spends per post-list length: warm-up plus
    the timed runs (the C loop one timed-calls run more). Returns the ETA each step should show.
    """
    from gdrdiag.bench import loop_cost_native, mr, mr_loop_cost
    from gdrdiag.cli import progress as progress_mod
    from gdrdiag.errors import NotSupported as NS
    from gdrdiag.hw import verbs_native

    now = [0.0]
    monkeypatch.setattr(progress_mod, "monotonic", lambda: now[0])
    duration, repeats = 2.0, 2
    python_step, c_step = 0.1 + repeats * duration, 0.1 + repeats * duration + 0.5
    pls = mr_loop_cost.LOOP_COST_POST_LISTS

    def fake(key, step_s):
        def run(*, duration, tx_depth, repeats, link_gbps, progress):
            for pl in pls:
                progress(f"{key} post list {pl}")
                now[0] += step_s
            return []

        return run

    def no_lib():
        raise NS("libgdr_verbs.so not built (test)")

    def no_devices():
        raise NS("no RDMA devices: libibverbs lists none (test)")

    monkeypatch.setattr(verbs_native, "lib", (lambda: object()) if native_built else no_lib)
    # --provider auto asks the library for devices where a real one is built (CI's set-up builds it)
    monkeypatch.setattr(verbs_native, "list_device_names", no_devices)
    monkeypatch.setattr(mr, "loop_cost", fake("mr_loop_cost", python_step))
    if native_built:
        monkeypatch.setattr(loop_cost_native, "native_loop_cost", fake(loop_cost_native.KEY, c_step))
    else:
        monkeypatch.setattr(loop_cost_native, "native_loop_cost", lambda **kw: [])
    real = [python_step] * len(pls) + ([c_step] * len(pls) if native_built else [])
    return [sum(real[i:]) for i in range(len(real))]


@pytest.mark.parametrize("native_built", [True, False])
def test_loop_cost_eta_follows_the_steps_real_lengths(monkeypatch, native_built):
    """--loop-cost counted 8 equal steps (said 22 s with more to go, or ran 4 of 8)."""
    expected = _fake_loop_cost(monkeypatch, native_built)
    res = runner.invoke(app, ["mr-bench", "--loop-cost", "-D", "2", "--repeats", "2"])
    assert res.exit_code == 1 and "no case ran" in res.stderr, res.output  # the fakes measure nothing
    got = steps(res.stderr)
    assert [(n, t) for n, t, _, _ in got] == [(i, len(expected)) for i in range(1, len(expected) + 1)]
    shown = [_seconds(eta) for _, _, _, eta in got]
    assert all(abs(a - b) <= 0.5 + 1e-9 for a, b in zip(shown, expected, strict=True)), (shown, expected)


def _seconds(eta: str) -> int:
    """``12 s`` or ``1 min 5 s`` back to whole seconds."""
    m = re.fullmatch(r"(?:(\d+) min )?(\d+) s", eta)
    assert m is not None, eta
    return int(m[1] or 0) * 60 + int(m[2])
