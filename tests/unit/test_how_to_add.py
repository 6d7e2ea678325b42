"""The walks of docs/architecture.md ("How to add a case, an importer, a cause rule"), end to end.

A cause rule: one function and one catalogue entry make a finding that diagnose ranks and that
carries its KB reference. An importer: every module of gdrdiag/importers/ is wired into detection, and
every format is detected from a saved raw output. A bench case: one case object added to its bench
module's ``CASES`` is listed by ``--list``, selected by its key, counted by the progress line and run
by the bench's executor, with no change to the CLI or the registry; every real case's registry entry
is checked by tests/cli/test_case_selection.py (every listed case runs or says why).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag import diagnose as diagnose_pkg
from gdrdiag.diagnose import catalogue as catalogue_mod
from gdrdiag.diagnose._common import finding
from gdrdiag.diagnose.catalogue_entry import E
from gdrdiag.hw.memory import MemoryKind
from gdrdiag.model.findings import Severity
from gdrdiag.model.params import CopyParams
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult
from tests.unit.diagnosis_scenarios import ok

ROOT = Path(__file__).resolve().parents[2]


def test_a_cause_rule_is_one_function_and_one_catalogue_entry(monkeypatch):
    entry = E(
        "CAUSE-WALK-EXAMPLE",
        "causes",
        "WARN",
        "a walk-through's example",
        "shows the two places a rule lives",
        "nothing to fix",
        "https://docs.nvidia.com/cuda/",
    )
    monkeypatch.setattr(catalogue_mod, "_entries", lambda real=catalogue_mod._entries: (*real(), entry))

    def walk_rule(report, ctx):  # the rule: facts in, findings out
        if ctx.machine is not None:
            yield finding(
                "CAUSE-WALK-EXAMPLE", Severity.WARN, "an example", ["machine = present"], "none", ""
            )

    monkeypatch.setattr(diagnose_pkg, "RULES", [*diagnose_pkg.RULES, walk_rule])
    report = Report.from_json((ROOT / "tests/fixtures/reports/baremetal_hgx.json").read_text())
    found = [f for f in diagnose_pkg.diagnose(report).findings if f.code == "CAUSE-WALK-EXAMPLE"]
    assert len(found) == 1
    assert found[0].reference.startswith("docs/kb/causes.md#cause-walk-example")


IMPORTER_MODULES = sorted(
    p.stem for p in (ROOT / "gdrdiag" / "importers").glob("*.py") if p.stem not in ("__init__", "common")
)


@pytest.mark.parametrize("module", IMPORTER_MODULES)
def test_every_importer_module_is_wired_into_detection(module):
    init = (ROOT / "gdrdiag" / "importers" / "__init__.py").read_text()
    assert f"{module}." in init, f"importers/__init__.py does not call {module}"


def _saved_outputs():
    for folder in (ROOT / "tests" / "fixtures" / "imported", ROOT / "tests" / "real"):
        for path in folder.rglob("*"):
            if path.is_file() and path.suffix in (".txt", ".json", ".log", ".csv"):
                yield path


def test_every_format_is_detected_from_a_saved_raw_output():
    """A format no saved output exercises is an importer without its fixture."""
    from gdrdiag.errors import UserInputError
    from gdrdiag.importers import FORMATS, _detect

    seen = set()
    for path in _saved_outputs():
        try:
            seen.add(_detect(path.read_text(errors="replace"))[0])
        except UserInputError:
            continue
    assert seen >= set(FORMATS), set(FORMATS) - seen


WALK_KEY = "copy_walk_example"


def _walk_case(ran: list):
    """A copy-bench case as a newcomer would add it to bench/copy.py: two steps, two rows."""
    from gdrdiag.bench.cases import Case, Needs

    def steps(opts) -> int:
        return 2 if opts.selects(WALK_KEY) else 0

    def run(ctx, step) -> list[BenchResult]:
        rows = []
        for size in (4096, 65536):
            step(WALK_KEY)
            rows.append(ok(WALK_KEY, 1.0, "GB/s", CopyParams(size_bytes=size)))
        ran.append(ctx)
        return rows

    return Case(WALK_KEY, "a walk-through's example case", Needs.GPU, "walk", CopyParams(), steps, run)


def test_a_bench_case_is_one_object_in_its_bench_module(monkeypatch):
    """Listed, selected by its key, counted by progress and run, with the CLI and registry untouched."""
    from gdrdiag.bench import copy
    from gdrdiag.bench.copy_config import CopyContext
    from gdrdiag.cli import app

    ran: list = []
    monkeypatch.setattr(copy, "CASES", (*copy.CASES, _walk_case(ran)))
    runner = CliRunner()
    listed = runner.invoke(app, ["--json", "copy-bench", "--list"])
    assert listed.exit_code == 0, listed.output
    assert WALK_KEY in [row["key"] for row in json.loads(listed.stdout)]

    # The GPU is faked at the executor's one seam (the context the cases share); the rest is real.
    monkeypatch.setattr(copy.cuda, "init", lambda: None)
    monkeypatch.setattr(copy.cuda, "GpuContext", lambda ordinal: object())

    @contextmanager
    def session(gpu, opts):
        yield CopyContext(gpu=gpu, opts=opts, sweep_buffers=copy.SweepBuffers()), None

    monkeypatch.setattr(copy, "copy_session", session)
    res = runner.invoke(app, ["--json", "copy-bench", WALK_KEY, "--numa", "none"])
    assert res.exit_code == 0, res.output
    assert len(ran) == 1 and isinstance(ran[0], CopyContext)
    rows = json.loads(res.stdout)["results"]
    assert [(r["key"], r["params"]["size_bytes"]) for r in rows] == [(WALK_KEY, 4096), (WALK_KEY, 65536)]
    steps = [line.split(" ... ")[0] for line in res.stderr.splitlines() if line.startswith("[")]
    assert steps == [f"[1/2] {WALK_KEY}", f"[2/2] {WALK_KEY}"]


def test_peer_bench_steps_through_exactly_what_its_cases_count(monkeypatch):
    """Every peer case run over one pair (off, on, then after the pairs) takes the steps it counted."""
    from gdrdiag.bench import peer

    def row(*args, **kw) -> BenchResult:
        return ok("peer_row", 1.0, "GB/s", CopyParams())

    for body in (
        "ce_case",
        "bidir_case",
        "sm_case",
        "reference_case",
        "latency_case",
        "sm_latency_case",
        "block_results",
        "all_to_one_results",
    ):
        monkeypatch.setattr(peer, body, row)
    opts = peer.PeerBenchOptions(sizes=(4096, 65536))
    session = peer._Session(opts, None, None)
    ordered = ((0, 1), (1, 0))
    labels: list[str] = []
    stages = [peer.PairPhase(session, None, ordered, on) for on in (False, True)]
    stages.append(peer.AfterPairs(session, ordered, (0, 1)))
    for stage in stages:
        for case in peer.CASES:
            case.run(stage, labels.append)
    assert len(labels) == peer.planned_case_count(opts, 2)
    assert set(labels) == set(peer.ALL_KEYS)


def test_peer_cases_that_need_peer_access_are_waived_where_the_driver_refuses_it():
    from gdrdiag.bench import peer
    from gdrdiag.model.results import Status

    session = peer._Session(peer.PeerBenchOptions(), None, None)
    phase = peer.PairPhase(session, None, ((0, 1), (1, 0)), True, "no peer access here")
    rows = [r for case in peer.CASES for r in case.run(phase, lambda label: None)]
    assert [r.key for r in rows] == [
        "peer_ce_on",
        "peer_ce_bidir_on",
        "peer_sm_read",
        "peer_sm_write",
        "peer_lat_ce_on",
        "peer_lat_sm_on",
        "peer_blocks",
    ]
    assert all(r.status is Status.WAIVED and r.reason == "no peer access here" for r in rows)


GATHER_WALK_KEY = "gather_walk_example"


def _gather_walk_case(ran: list):
    """A gather-bench case as a newcomer would add it to bench/gather.py: two steps, two rows."""
    from gdrdiag.bench.cases import Case, Needs
    from gdrdiag.model.params import GatherParams

    def steps(config) -> int:
        return 2 if config.selects(GATHER_WALK_KEY) else 0

    def run(session, step) -> list[BenchResult]:
        rows = []
        for records in (1024, 2048):
            step(GATHER_WALK_KEY)
            rows.append(ok(GATHER_WALK_KEY, 1.0, "GB/s", GatherParams(kernel="walk", record_bytes=records)))
        ran.append(session)
        return rows

    return Case(GATHER_WALK_KEY, "a walk-through's example case", Needs.GPU, "walk", None, steps, run)


class _GatherGpu:
    """What gather-bench's executor asks of its GPU session, with a made-up copy engine: no CUDA."""

    sm_count = 8
    facts = type("Facts", (), {"name": "fake GPU"})()
    link, link_text = None, "fake link"

    def __init__(self, config):
        self.config = config

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def allocate_for(self, layouts) -> None:
        pass

    def sample_link(self) -> None:
        pass

    def ce_reference(self, nbytes, layout) -> BenchResult:
        from gdrdiag.model.params import GatherParams

        return ok("gather_ce_reference", 50.0, "GB/s", GatherParams(copy_bytes=nbytes))


def test_a_gather_case_is_one_object_in_its_bench_module(monkeypatch):
    """gather-bench's walk: listed, selected, counted and run beside the CE reference, the CLI untouched."""
    from gdrdiag.bench import gather, gather_session
    from gdrdiag.cli import app
    from gdrdiag.hw import cuda

    ran: list = []
    monkeypatch.setattr(gather, "CASES", (*gather.CASES, _gather_walk_case(ran)))
    runner = CliRunner()
    listed = runner.invoke(app, ["--json", "gather-bench", "--list"])
    assert listed.exit_code == 0, listed.output
    assert GATHER_WALK_KEY in [row["key"] for row in json.loads(listed.stdout)]

    # The GPU is faked at the executor's one seam (the session the cases share); the rest is real.
    monkeypatch.setattr(cuda, "init", lambda: None)
    monkeypatch.setattr(gather_session, "GatherSession", _GatherGpu)
    res = runner.invoke(app, ["--json", "gather-bench", GATHER_WALK_KEY, "--numa", "none"])
    assert res.exit_code == 0, res.output
    assert len(ran) == 1 and isinstance(ran[0], gather._Run)
    rows = json.loads(res.stdout)["results"]
    assert [(r["key"], r["params"].get("record_bytes")) for r in rows if r["key"] == GATHER_WALK_KEY] == [
        (GATHER_WALK_KEY, 1024),
        (GATHER_WALK_KEY, 2048),
    ]
    assert rows[0]["key"] == "gather_ce_reference"  # the reference runs with every selection
    steps = [line.split(" ... ")[0] for line in res.stderr.splitlines() if line.startswith("[")]
    assert steps == [f"[1/2] {GATHER_WALK_KEY}", f"[2/2] {GATHER_WALK_KEY}"]


MR_WALK_KEY = "rdma_write_walk_example"


def _mr_walk_case(ran: list):
    """An mr-bench case as a newcomer would add it to bench/mr.py: a mode, a kind and path, two steps."""
    from gdrdiag.bench.cases import Case, Needs
    from gdrdiag.bench.mr_config import MrMode
    from gdrdiag.model.params import MrParams
    from gdrdiag.model.vocabulary import RegPath

    params = MrParams(memory=MemoryKind.PAGEABLE, reg_path=RegPath.MR, mode="bw")

    def steps(plan) -> int:
        only = plan.cfg.only
        return 2 if plan.mode is MrMode.BW and only is not None and MR_WALK_KEY in only else 0

    def run(session, step) -> list[BenchResult]:
        rows = []
        for size in (4096, 65536):
            step(MR_WALK_KEY)
            rows.append(ok(MR_WALK_KEY, 1.0, "Gb/s", MrParams(memory=params.memory, size_bytes=size)))
        ran.append(session)
        return rows

    return Case(MR_WALK_KEY, "a walk-through's example case", Needs.RDMA, MrMode.BW, params, steps, run)


def test_an_mr_case_is_one_object_in_its_bench_module(monkeypatch):
    """mr-bench's walk: listed, selected (its params set the run's options), counted and run, on soft."""
    from gdrdiag.bench import mr
    from gdrdiag.cli import app

    ran: list = []
    monkeypatch.setattr(mr, "CASES", (*mr.CASES, _mr_walk_case(ran)))
    runner = CliRunner()
    listed = runner.invoke(app, ["--json", "mr-bench", "--list"])
    assert listed.exit_code == 0, listed.output
    assert MR_WALK_KEY in [row["key"] for row in json.loads(listed.stdout)]

    res = runner.invoke(app, ["--json", "mr-bench", MR_WALK_KEY, "--provider", "soft", "--numa", "none"])
    assert res.exit_code == 0, res.output
    assert len(ran) == 1 and isinstance(ran[0], mr.MrSession)
    assert ran[0].cfg.kinds == (MemoryKind.PAGEABLE,) and ran[0].cfg.only == frozenset({MR_WALK_KEY})
    rows = json.loads(res.stdout)["results"]
    assert [(r["key"], r["params"]["size_bytes"]) for r in rows] == [
        (MR_WALK_KEY, 4096),
        (MR_WALK_KEY, 65536),
    ]
    steps = [line.split(" ... ")[0] for line in res.stderr.splitlines() if line.startswith("[")]
    assert steps == [f"[1/2] {MR_WALK_KEY}", f"[2/2] {MR_WALK_KEY}"]
