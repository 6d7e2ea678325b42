import json

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app

runner = CliRunner()


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--kinds", "bogus"], "unknown memory kind"),
        (["--directions", "sideways"], "unknown direction"),
        (["--sizes", "0"], "must be greater than 0"),
        (["--sizes", "-4K"], "cannot parse"),
        (["--sizes", "lots"], "cannot parse"),
        (["--sizes", "4000G"], "host memory"),
        (["--pin-size", "0"], "must be greater than 0"),
        (["--json-out", "/nonexistent/dir/x.json", "--parts", "sweep"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle):
    res = runner.invoke(app, ["copy-bench", *args])
    assert res.exit_code == 2, res.output
    assert needle in res.output
    assert "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_no_gpu_reports_waived_with_reason(tmp_path):
    from tests.conftest import gpu_absent_reason

    if gpu_absent_reason() is None:
        pytest.skip("a GPU is present; this checks the no-GPU path")
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["--json", "copy-bench", "--quick", "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data == json.loads(out.read_text())
    assert {r["status"] for r in data["results"]} == {"WAIVED"}
    assert all(r["reason"] for r in data["results"])
    table = runner.invoke(app, ["copy-bench", "--quick"])
    assert "WAIVED" in table.output and "driver" in table.output


@pytest.fixture
def captured(monkeypatch):
    """The options each copy-bench run was given (the run itself returns no results: no GPU needed)."""
    from gdrdiag.bench import copy as copy_bench

    seen = []

    def fake_run(opts, progress=None):
        seen.append(opts)
        return []

    monkeypatch.setattr(copy_bench, "run_copy_bench", fake_run)
    return seen


def _plan(captured, *args):
    res = runner.invoke(app, ["copy-bench", "--quiet", *args])
    assert res.exit_code == 0, res.output
    return captured[-1]


def test_the_default_is_the_first_look_a_user_needs(captured):
    """Pinned and pageable at one large size, each direction and both at once, a short block sweep."""
    from gdrdiag.bench.copy import planned_case_count, sweep_keys
    from gdrdiag.bench.copy_config import FIRST_LOOK
    from gdrdiag.model.vocabulary import MemoryKind
    from gdrdiag.units import KiB, MiB

    opts = _plan(captured)
    assert opts == FIRST_LOOK
    assert opts.kinds == (MemoryKind.PINNED, MemoryKind.PAGEABLE)
    assert opts.directions == ("h2d", "d2h", "bidir") and opts.modes == ("async",)
    assert opts.sizes == (256 * MiB,) and opts.parts == ("sweep", "blocks") and not opts.reference
    assert opts.block_sizes == (2 * KiB, 8 * KiB, 32 * KiB, 128 * KiB, 512 * KiB)
    assert sweep_keys(opts) == [
        "copy_h2d_pinned",
        "copy_d2h_pinned",
        "copy_bidir_pinned",
        "copy_h2d_pageable",
        "copy_d2h_pageable",
        "copy_bidir_pageable",
    ]
    assert planned_case_count(opts) == 6 + 1  # six sweep points, then the block sweep


def test_full_is_the_whole_matrix_that_report_full_runs(captured):
    from gdrdiag.bench.copy import planned_case_count
    from gdrdiag.bench.copy_config import CopyBenchOptions
    from gdrdiag.bench.profiles import Profile, _copy_results

    opts = _plan(captured, "--full")
    assert opts == CopyBenchOptions()
    # 5 kinds x (h2d, d2h: async and sync; bidir: async) x 10 sizes, the reference, 3 parts
    assert planned_case_count(opts) == 5 * 5 * 10 + 1 + 3
    _copy_results(Profile(level="full"))  # report --full's copy part: the same matrix
    assert captured[-1] == opts


def test_given_options_replace_the_first_look_s_defaults(captured):
    from gdrdiag.model.vocabulary import MemoryKind
    from gdrdiag.units import GiB, KiB

    opts = _plan(captured, "--kinds", "pinned-wc", "--sizes", "1G", "--block-sizes", "4K", "--reference")
    assert (opts.kinds, opts.sizes, opts.block_sizes) == ((MemoryKind.PINNED_WC,), (GiB,), (4 * KiB,))
    assert opts.reference and opts.modes == ("async",) and opts.parts == ("sweep", "blocks")
    full = _plan(captured, "--full", "--no-reference", "--modes", "sync")
    assert not full.reference and full.modes == ("sync",) and len(full.sizes) == 10


def test_quick_and_named_cases_keep_their_meaning(captured):
    """--quick is a small run of the whole matrix; named cases run at the whole matrix's sizes."""
    from gdrdiag.bench.copy_config import DEFAULT_SIZES, PARTS
    from gdrdiag.model.vocabulary import MemoryKind
    from gdrdiag.units import KiB, MiB

    quick = _plan(captured, "--quick")
    assert quick.parts == PARTS and quick.modes == ("async", "sync") and quick.reference
    assert quick.kinds == (MemoryKind.PINNED, MemoryKind.PAGEABLE)
    assert quick.sizes == (64 * KiB, 16 * MiB, 256 * MiB) and quick.iterations == 5
    managed = _plan(captured, "copy_h2d_managed")
    assert managed.kinds == (MemoryKind.MANAGED,) and managed.sizes == DEFAULT_SIZES
    assert managed.parts == ("sweep",) and managed.modes == ("async", "sync")


def test_quick_with_full_is_one_line_and_exit_2():
    res = runner.invoke(app, ["copy-bench", "--quick", "--full"])
    assert res.exit_code == 2 and "choose one" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_without_a_gpu_the_default_and_full_name_their_cases():
    """The WAIVED rows (one per case a run would make) show each plan on a machine with no GPU."""
    from tests.conftest import gpu_absent_reason

    if gpu_absent_reason() is None:
        pytest.skip("a GPU is present; this checks the no-GPU path")
    keys = {}
    for name, extra in (("default", []), ("full", ["--full"])):
        res = runner.invoke(app, ["--json", "copy-bench", "--quiet", *extra])
        assert res.exit_code == 0, res.output
        rows = json.loads(res.stdout)["results"]
        assert {r["status"] for r in rows} == {"WAIVED"}
        keys[name] = [r["key"] for r in rows]
    sweep = [f"copy_{d}_{k}" for k in ("pinned", "pageable") for d in ("h2d", "d2h", "bidir")]
    assert keys["default"] == [*sweep, "copy_blocks"]
    assert len(keys["full"]) == 15 + 1 + 3
    assert keys["full"][-4:] == ["copy_h2d_pinned_reference", "copy_pinning", "copy_overlap", "copy_blocks"]
