"""mr-bench refuses what it cannot do before any work, and a Ctrl-C keeps exactly what was measured.

Issue items: ``-s 1G -q 8`` was OOM-killed with no message, ``-n``/``--repeats`` had no bound,
``--link-gbps inf/nan/-5/0`` ran the whole ``--loop-cost`` first; Ctrl-C in ``--loop-cost`` kept
nothing, and WAIVED placeholders were counted (and reported) as measured results.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gdrdiag.bench import mr, mr_loop_cost
from gdrdiag.cli import app
from gdrdiag.errors import NotSupported
from gdrdiag.hw import memory, verbs_native, verbs_soft

runner = CliRunner()
SOFT = ["mr-bench", "--quiet", "--provider", "soft", "--memory", "pageable"]
GiB = 1 << 30


@pytest.fixture(autouse=True)
def no_leaks():
    yield
    assert verbs_soft.live_objects() == {}


@pytest.fixture
def no_work(monkeypatch):
    """Any device opened, buffer allocated or loop run fails the test: refusals come first."""

    def started(*args, **kwargs):
        raise AssertionError("work started before the refusal")

    from gdrdiag.bench import loop_cost_native, mr_setup
    from gdrdiag.hw import verbs_providers

    monkeypatch.setattr(verbs_providers, "open_device", started)
    monkeypatch.setattr(mr_setup, "Buffer", started)
    monkeypatch.setattr(mr, "loop_cost", started)
    monkeypatch.setattr(loop_cost_native, "native_loop_cost", started)
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 4 * GiB)


def _refused(args, tmp_path, needle):
    out = tmp_path / "never.json"
    res = runner.invoke(app, [*args, "--json-out", str(out)])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1, res.output
    assert needle in res.output, res.output
    assert not out.exists()
    return res.output


@pytest.mark.parametrize(
    "args,needle",
    [
        (["-s", "1G", "-q", "8"], "host memory"),
        (["-s", "1G", "-q", "8", "--memory", "pinned,pageable"], "host memory"),
        (["--latency", "-s", "3G"], "host memory"),
        (["--blocks", "100000000", "-s", "64"], "host memory"),
        (["-n", "99999999999999999999"], "-n 99999999999999999999"),
        (["--latency", "-n", "99999999999999999999"], "-n 99999999999999999999"),
        (["--repeats", "100000000"], "--repeats 100000000"),
        (["--repeats", "0"], "--repeats 0"),
        (["-D", "1e9"], "-D"),
        (["-D", "nan"], "-D"),
    ],
)
def test_what_the_user_picks_is_checked_before_any_work(no_work, tmp_path, args, needle):
    cmd = [*SOFT[:-2], *args] if "--memory" in args else [*SOFT, *args]
    _refused(cmd, tmp_path, needle)


def test_the_memory_refusal_names_both_numbers(no_work, tmp_path):
    line = _refused([*SOFT, "-s", "1G", "-q", "8"], tmp_path, "host memory")
    assert str(4 * GiB) in line and "-q" in line and "-s" in line


def test_what_fits_still_runs(monkeypatch):
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 4 * GiB)
    res = runner.invoke(app, [*SOFT, "-s", "64M", "-q", "2", "-n", "2", "--repeats", "1"])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("rate", ["inf", "nan", "-5", "0", "-inf"])
def test_a_link_rate_that_is_not_a_rate_is_refused_before_the_loop_cost_runs(no_work, tmp_path, rate):
    _refused(["mr-bench", "--loop-cost", "--link-gbps", rate], tmp_path, "--link-gbps")


def _interrupt_on_call(monkeypatch, module, name, nth):
    real = getattr(module, name)
    calls = []

    def nth_is_interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == nth:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, nth_is_interrupted)
    return calls


LOOP = ["mr-bench", "--quiet", "--loop-cost", "-D", "0.01", "--repeats", "1"]


def test_ctrl_c_in_the_python_loop_cost_keeps_the_post_lists_measured(monkeypatch, tmp_path):
    # two runs per post list (warm-up + 1 repeat): the 5th call is post list 16's warm-up
    _interrupt_on_call(monkeypatch, mr_loop_cost, "run_bw", 5)
    out = tmp_path / "loop.json"
    res = runner.invoke(app, [*LOOP, "--json-out", str(out)])
    assert res.exit_code == 130, res.output
    saved = json.loads(out.read_text())
    assert [(r["key"], r["params"]["post_list"]) for r in saved["results"]] == [
        ("mr_loop_cost", 1),
        ("mr_loop_cost", 4),
    ]
    assert "no case ran" not in res.output
    assert res.stderr.strip() == (
        "gdrdiag: interrupted; the 2 results measured before it were kept (the Report says it is partial)"
    )


def test_ctrl_c_in_the_c_loop_cost_keeps_the_python_loop_and_the_c_steps_done(monkeypatch, tmp_path):
    try:
        verbs_native.lib()
    except NotSupported as exc:
        pytest.skip(exc.reason)
    # three calls per post list (warm-up, 1 repeat, timed calls): the 4th is post list 4's warm-up
    _interrupt_on_call(monkeypatch, verbs_native, "null_loop", 4)
    out = tmp_path / "loop.json"
    res = runner.invoke(app, [*LOOP, "--json-out", str(out)])
    assert res.exit_code == 130, res.output
    saved = json.loads(out.read_text())["results"]
    assert [(r["key"], r["params"]["post_list"]) for r in saved] == [
        *(("mr_loop_cost", pl) for pl in mr_loop_cost.LOOP_COST_POST_LISTS),
        ("mr_loop_cost_native", 1),
    ]
    # the fit over the Python loop's post lists was made before the C loop began: it is kept too
    assert all(r["metrics"]["loop_us_per_post"] is not None for r in saved if r["key"] == "mr_loop_cost")
    assert "the 5 results measured before it were kept" in res.stderr


def test_ctrl_c_during_the_only_runnable_case_does_not_say_every_case_waived(monkeypatch, tmp_path):
    calls = []

    def waived_then_interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise NotSupported("no pinned memory here")
        raise KeyboardInterrupt

    monkeypatch.setattr(mr, "_bw_case", waived_then_interrupted)
    out = tmp_path / "partial.json"
    cmd = [*SOFT[:-1], "pinned,pageable", "-n", "20", "--repeats", "1", "--json-out", str(out)]
    res = runner.invoke(app, cmd)
    assert res.exit_code == 130, res.output
    assert "every case WAIVED" not in res.output and "nothing could be measured" not in res.output
    assert res.stderr.strip() == (
        "gdrdiag: interrupted before anything was measured; the 1 WAIVED case (it cannot run here) "
        "was kept (the Report says it is partial)"
    )
    saved = json.loads(out.read_text())
    assert [(r["key"], r["status"]) for r in saved["results"]] == [("rdma_write_pinned_mr", "WAIVED")]
    assert any(
        n.startswith("interrupted by Ctrl-C after 0 measured results and 1 WAIVED case:")
        for n in saved["notes"]
    ), saved["notes"]
