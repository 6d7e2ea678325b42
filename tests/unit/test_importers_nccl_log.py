"""An NCCL INFO log imported alone (no nccl-tests table): one result of facts, no bandwidth, diagnosed.

The logs are the real runs' (tests/real/<machine>/runs/*-info/output.txt) with nccl-tests' own lines
taken out (its table rows and ``#`` lines), which leaves what a training job with NCCL_DEBUG=INFO
prints.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from gdrdiag.cli.reporting import results_report
from gdrdiag.diagnose import diagnose
from gdrdiag.errors import UserInputError
from gdrdiag.importers import detect, import_text
from gdrdiag.model.findings import Severity
from gdrdiag.model.path import Verdict
from gdrdiag.model.report import Report
from gdrdiag.model.results import Status
from tests.real.corpus import machine_of

REAL = Path(__file__).resolve().parents[1] / "real"
_TABLE = re.compile(r"^[ ]*[0-9]")

# run name -> the finding its log alone must give (None: no WARN/FAIL at all)
EXPECTED = {
    "fault-nccl-p2p-disable-all_reduce-info": "NCCL-LOG-NO-P2P",
    "fault-nccl-p2p-disable-sendrecv-info": "NCCL-LOG-NO-P2P",
    "fault-nccl-p2p-level-loc-all_gather-info": "NCCL-LOG-NO-P2P",
    "fault-nccl-socket-all_reduce-info": "NCCL-LOG-SOCKET-LOCAL",
    "fault-nccl-proto-ll-all_reduce-info": "NCCL-LOG-SETTING",
    "fault-nccl-one-channel-all_reduce-info": "NCCL-LOG-SETTING",
    "nccl-all_reduce-info": None,
    "nccl-sendrecv-info": None,
    "fault-nccl-busy-gpu-all_reduce-info": None,  # a busy GPU does not show in NCCL's log
}
LOGS = sorted(
    p.parent
    for p in REAL.glob("*/runs/*-info/output.txt")
    if p.parent.name in EXPECTED and (p.parents[2] / "bundle.tar.gz").exists()
)


def bare_log(run: Path) -> str:
    """The run's output without nccl-tests' table and ``#`` lines: NCCL's INFO log alone."""
    lines = (run / "output.txt").read_text().splitlines()
    return "\n".join(ln for ln in lines if not _TABLE.match(ln) and not ln.startswith("#")) + "\n"


def _diagnosed(run: Path) -> Report:
    results = import_text(bare_log(run), "train.log")
    bundle = run / "bundle.tar.gz"
    machine = machine_of(bundle if bundle.exists() else run.parents[1] / "bundle.tar.gz")
    report = results_report("import", results, machine=machine)
    return dataclasses.replace(report, findings=diagnose(report).findings)


def test_the_real_logs_are_there():
    assert len(LOGS) >= 9
    assert {p.name for p in LOGS} == set(EXPECTED)


@pytest.mark.parametrize("run", LOGS, ids=lambda p: f"{p.parents[1].name}/{p.name}")
def test_a_bare_log_is_detected_and_imported_as_facts_without_a_number(run):
    text = bare_log(run)
    assert "# size" not in text and detect(text) == "nccl-log-text"
    (r,) = import_text(text, "train.log")
    assert r.status is Status.OK and r.value is None and r.samples == () and r.provider == "nccl"
    facts = r.params.nccl
    assert facts is not None and facts.debug_info and facts.version and facts.version.startswith("2.")
    assert facts.ranks and facts.ranks >= 2 and facts.nodes == 1 and len(facts.hosts) == 1
    assert facts.transports, "each channel's transport"
    assert r.params.source_file == "train.log" and r.params.ranks == facts.ranks
    report = results_report("import", [r], machine=None)
    assert Report.from_json(report.to_json()) == report


@pytest.mark.parametrize("run", LOGS, ids=lambda p: f"{p.parents[1].name}/{p.name}")
def test_the_log_alone_states_what_its_facts_show(run):
    report = _diagnosed(run)
    (j,) = diagnose(report).judgements
    assert j.verdict is Verdict.UNJUDGED and j.ratio is None and j.measured_gbytes_per_s is None
    assert j.reason and j.reason.startswith("no bandwidth: an NCCL log")
    loud = [f for f in report.findings if f.severity in (Severity.WARN, Severity.FAIL)]
    want = EXPECTED[run.name]
    if want is None:
        assert loud == [], [(f.code, f.title) for f in loud]
        return
    assert [f.code for f in loud] == [want], [(f.code, f.title) for f in loud]
    f = loud[0]
    assert f.severity is Severity.WARN and f.explains is None and f.advice and "Unset" in f.advice
    assert any(line.startswith("NCCL INFO ") for line in f.evidence), f.evidence
    assert not any(f.code.startswith(("CAUSE-", "MEASURE-NCCL", "PERF-")) for f in report.findings)


def test_the_evidence_quotes_the_variable_and_the_channels():
    run = REAL / "h200x2-1128a/runs/fault-nccl-p2p-disable-all_reduce-info"
    (f,) = [f for f in _diagnosed(run).findings if f.code == "NCCL-LOG-NO-P2P"]
    assert "NCCL_P2P_DISABLE=1" in f.title
    assert "NCCL INFO NCCL_P2P_DISABLE set by environment to 1" in f.evidence
    assert any("via SHM/" in line for line in f.evidence)
    assert "NCCL_P2P_DISABLE" in f.advice and f.reference.startswith("docs/kb/causes.md#nccl-log-no-p2p")


def _log(lines: list[str]) -> str:
    return "\n".join(f"{h}:100:101 [{d}] NCCL INFO {m}" for h, d, m in lines) + "\n"


def test_a_run_across_hosts_gets_no_single_node_finding():
    text = _log(
        [
            ("n1", 0, "NCCL version 2.21.5+cuda12.4"),
            ("n1", 0, "NCCL_P2P_DISABLE set by environment to 1"),
            ("n1", 0, "comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0"),
            ("n2", 0, "comm 0x2 rank 1 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0"),
            ("n1", 0, "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA"),
        ]
    )
    (r,) = import_text(text, "job.log")
    assert r.params.nccl.nodes == 2
    report = results_report("import", [r], machine=None)
    assert not [f for f in diagnose(report).findings if f.code.startswith("NCCL-LOG-")]


def test_shm_without_a_variable_is_p2p_off_and_names_no_variable_to_unset():
    text = _log(
        [
            ("h", 0, "comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0"),
            ("h", 1, "comm 0x2 rank 1 nRanks 2 nNodes 1 localRanks 2 localRank 1 MNNVL 0"),
            ("h", 0, "Channel 00 : 0[0] -> 1[1] via SHM/direct/direct"),
        ]
    )
    report = results_report("import", import_text(text, "job.log"), machine=None)
    (f,) = [f for f in diagnose(report).findings if f.severity is Severity.WARN]
    assert f.code == "NCCL-LOG-NO-P2P" and "channels via SHM/direct/direct" in f.title
    assert "nvidia-smi topo -p2p r" in f.advice


def test_text_that_only_mentions_nccl_info_is_still_refused():
    with pytest.raises(UserInputError, match="NCCL_DEBUG=INFO log"):
        detect("grep 'NCCL INFO' train.log found nothing\n")
