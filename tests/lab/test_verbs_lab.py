"""What the QEMU lab's verbs plan produced on a real verbs stack (Soft-RoCE rxe in a 6.1 guest).

``scripts/lab/run.sh verbs`` leaves every command's output in out/lab/verbs (``LAB_OUT``); these
tests judge it on the host. Marked ``lab``: they skip, with the reason, where the lab has not
run (``.ci/run`` runs it first, so in CI they run).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from gdrdiag.model.report import Report

REPO = Path(__file__).resolve().parents[2]
LAB = Path(os.environ.get("LAB_OUT", REPO / "out/lab"))
RES = LAB / "verbs"

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(
        not (RES / "exit-status").is_file(),
        reason=f"the lab's verbs plan has not run here (no {RES}/exit-status; run scripts/lab/run.sh verbs)",
    ),
]
GPU_KINDS = {"device", "managed", "pinned", "pinned-wc", "registered"}


def wait_factor(res: Path) -> int:
    """The factor the guest multiplied its waits by (scripts/lab/guest/lib.sh); 1 before it had one."""
    path = res / "wait-factor"
    return int(path.read_text().strip() or 1) if path.is_file() else 1


def _report(name: str) -> Report:
    path = RES / f"{name}.json"
    assert path.is_file(), f"{path} missing; {name}.err: {(RES / f'{name}.err').read_text()[-300:]}"
    return Report.from_json(path.read_text())


def _ok_verified(report: Report) -> list:
    ok = [r for r in report.results if r.status.value == "OK"]
    assert ok, [(r.key, r.status.value, r.reason) for r in report.results]
    for r in ok:
        assert r.provider == "pyverbs", r.key
        assert r.verified is not False, (r.key, r.reason)
    return ok


def test_plan_steps_all_passed():
    steps = [line.split("\t") for line in (RES / "steps.tsv").read_text().splitlines()]
    # "*-probe" steps record what this kernel cannot do (rxe across network namespaces): not judged.
    failed = [(name, rc) for name, _secs, rc in steps if rc != "0" and not name.endswith("-probe")]
    assert not failed, failed
    assert (RES / "exit-status").read_text().strip() == "0"


def test_inspect_lists_rxe0_with_real_attributes():
    machine = json.loads((RES / "inspect.json").read_text())["machine"]
    (nic,) = [n for n in machine["nics"] if n["name"] == "rxe0"]
    parent = (RES / "rxe0-parent.txt").read_text().strip()
    assert nic["netdevs"] == [parent] and re.match(r"^[0-9a-f]{4}:", nic["bdf"] or "")
    (port,) = nic["ports"]
    assert port["state"] == "ACTIVE" and port["link_layer"] == "Ethernet"
    assert port["active_mtu"] in (256, 512, 1024, 2048, 4096)
    assert "0000:0000:0000:0000:0000:ffff:0a00:020f" in port["gids"]  # 10.0.2.15, IPv4-mapped
    assert "RoCE v2" in port["gid_types"]
    assert int(nic["verbs"]["max_qp"]) > 0 and int(nic["verbs"]["max_mr_size"]) > 0
    assert machine["virt"]["is_vm"] is True
    text = (RES / "inspect.txt").read_text()
    assert "rxe0" in text and "Traceback" not in text


@pytest.mark.parametrize("name,ro", [("mr-kinds-ro-off", False), ("mr-kinds-ro-on", True)])
def test_every_memory_kind_with_ro_off_and_on(name, ro):
    report = _report(name)
    for r in report.results:
        kind = r.params.memory
        if kind in GPU_KINDS:
            assert r.status.value == "WAIVED" and "GPU" in (r.reason or ""), (r.key, r.reason)
        else:
            assert r.status.value == "OK" and r.verified, (r.key, r.reason)
            assert r.params.relaxed_ordering is ro
    assert {r.params.memory for r in report.results} == GPU_KINDS | {"pageable"}


def test_ro_ab_and_matrix_are_verified_and_one_sample_gets_no_verdict():
    from gdrdiag.diagnose.rdma_rules import ro_pairs

    ab = _ok_verified(_report("mr-ro-ab"))
    assert sorted(r.params.relaxed_ordering for r in ab) == [False, True]
    _ok_verified(_report("mr-matrix"))
    one = _report("mr-matrix-1rep")
    pairs = ro_pairs(one.results)
    assert pairs and all(p.verdict.code == "inconclusive" for p in pairs), [p.verdict.words for p in pairs]
    assert not [f for f in one.findings if f.code.startswith("RO-") and f.severity.value != "INFO"]


@pytest.mark.parametrize("name", ["mr-reg-cost", "mr-latency", "mr-blocks", "mr-sweep", "mr-imm"])
def test_other_modes_measure_and_verify(name):
    report = _report(name)
    ok = _ok_verified(report)
    if name == "mr-sweep":
        sizes = {r.params.size_bytes for r in ok}
        errors = [r for r in report.results if r.status.value == "ERROR"]
        # A size that did not finish in --timeout is reported as that size's error; the sizes
        # measured before it stand (one timed-out size used to discard them all).
        assert len(sizes) >= 10 and len(errors) <= 1, [(r.params.size_bytes, r.reason) for r in errors]


def _resources(name: str, res: Path = RES) -> dict[str, str]:
    out = {}
    for line in (res / f"resource-{name}.txt").read_text().splitlines():
        m = re.match(r"^\d+: (\S+): (.*)$", line.strip())
        if m:
            out[m.group(1)] = m.group(2)
    return out


def test_no_resource_left_behind():
    # rxe holds one PD, CQ and QP of its own (the GSI QP1); after every run the counts are back.
    before = _resources("before")["rxe0"]
    for after in ("after-loopback", "after-two-process", "after"):
        assert _resources(after)["rxe0"] == before, after
    assert "mr 0" in before


def test_two_processes_on_one_device():
    assert (RES / "proc-64k.rc").read_text().split() == ["client", "0", "server", "0"]
    _ok_verified(_report("proc-64k-client"))


TWO = pytest.mark.skipif(
    not (LAB / "twohost-client" / "exit-status").is_file(),
    reason=f"the lab's two-host plan has not run here (run scripts/lab/run.sh twohost; results in {LAB})",
)


@TWO
@pytest.mark.parametrize("name", ["64k", "ro-on"])
def test_two_hosts_two_guests_joined_by_a_wire(name):
    # "ro-on" runs with --secret-file on both sides (scripts/lab/guest/twohost.sh): its results
    # exist only if the shared-secret handshake passed over the wire between the guests.
    server, client = LAB / "twohost-server", LAB / "twohost-client"
    for side in (server, client):
        assert (side / "exit-status").read_text().strip() == "0", (side / "guest.log").read_text()[-2000:]
    report = Report.from_json((client / f"two-{name}-client.json").read_text())
    ok = _ok_verified(report)
    (r,) = ok
    assert r.params.relaxed_ordering is (name == "ro-on")
    assert all(r.params.topology != "loopback" for r in ok), [r.params.topology for r in ok]
    for side in (server, client):
        assert _resources("before", side)["rxe0"] == _resources("after", side)["rxe0"]


def _error_entries(text: str) -> list[str]:
    """Each top-level "ERROR:" entry of a rendered table, its wrapped continuation lines joined."""
    entries: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("ERROR:"):
            entries.append(line)
            inside = True
        elif inside and line.startswith(" ") and line.strip():
            entries[-1] += " " + line.strip()
        else:
            inside = False
    return entries


@pytest.mark.parametrize(
    "name,limit_s",
    [("no-remote-write", 120), ("bad-device", 60), ("bad-port", 60), ("server-killed", 120)],
)
def test_faults_give_one_line_bounded_and_no_traceback(name, limit_s):
    """Bounded by the plan's waits, which scale with the guest's measured speed (wait-factor)."""
    limit_s *= wait_factor(RES)
    rc, secs = (RES / f"fault-{name}.rc").read_text().split()
    err = (RES / f"fault-{name}.err").read_text()
    out = (RES / f"fault-{name}.out").read_text()
    assert rc != "0" and float(secs) < limit_s, (rc, secs)
    assert "Traceback" not in err + out
    if name == "no-remote-write":
        # A failed measurement is a result (an ERROR line in the table, exit 1), not a crash.
        # The renderer wraps long lines at 100 columns with an indent, so one ERROR entry is its
        # first line plus the indented lines under it.
        errors = _error_entries(out)
        assert len(errors) == 1 and "IBV_WC_REM_ACCESS_ERR" in errors[0] and not err.strip(), out
    else:
        assert len([ln for ln in err.splitlines() if ln.strip()]) == 1, err


def test_perftest_side_by_side_ran_every_size():
    import importlib.util

    spec = importlib.util.spec_from_file_location("ratios", REPO / "scripts/lab/perftest_ratios.py")
    ratios = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ratios)
    table = ratios.rows(RES)
    assert [r["size"] for r in table] == [4096, 16384, 65536, 262144, 1048576]
    for r in table:
        assert len(r["perftest"]) == len(r["gdrdiag"]) == 2 and r["ratio"] and r["ratio"] > 0, r


def test_pytest_rdma_passes_in_the_guest():
    text = (RES / "pytest-rdma.txt").read_text()
    summary = text.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "error" not in summary, summary
