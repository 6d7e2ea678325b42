"""GPU<->GPU peer paths without a GPU: the fixture Report of the two-H100 machine, the rules, the model.

tests/fixtures/reports/peer_h100x2.json is ``gdrdiag peer-bench --all-sizes`` as measured on the
device tool's nvidia-h100-x2 machine (two H100 SXM joined by NV18, Firecracker VM).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from gdrdiag.diagnose import diagnose, diagnose_machine
from gdrdiag.diagnose.peer_rules import PEER_OF_MODEL_HEALTHY
from gdrdiag.inspect.peer import inspect_peers
from gdrdiag.model.machine import (
    AcsCap,
    GpuInfo,
    GpuPeerPair,
    MachineInfo,
    NvLink,
    PathClass,
    PcieCap,
    PciFunction,
    PortType,
    VirtInfo,
)
from gdrdiag.model.report import Report
from gdrdiag.model.results import SampleStats, Status
from gdrdiag.model.vocabulary import Bench
from gdrdiag.pathmodel.peer import CE_NVLINK_EFFICIENCY, SM_NVLINK_EFFICIENCY, expect
from gdrdiag.render.peer_table import render_peer_results
from gdrdiag.units import GiB
from tests.conftest import FIXTURES

FIXTURE = FIXTURES / "reports" / "peer_h100x2.json"


@pytest.fixture(scope="module")
def report() -> Report:
    return Report.from_json(FIXTURE.read_text())


def test_the_fixture_round_trips_and_holds_the_peer_matrix(report):
    assert Report.from_json(report.to_json()) == report
    m = report.machine
    assert m is not None and len(m.peers) == 2
    for p in m.peers:
        assert p.path_class is PathClass.NV and p.path_text == "NV18"
        assert p.can_access_peer is True and p.native_atomics is True
        assert p.nvlink_gbytes_per_s == pytest.approx(18 * 26.5625)
    assert all(len(g.nvlinks) == 18 and all(lk.active for lk in g.nvlinks) for g in m.gpus)
    assert {r.bench for r in report.results} == {Bench.PEER}
    assert not [r for r in report.results if r.status is Status.ERROR]


def test_nvlink_rows_are_within_five_percent_of_the_model(report):
    big = [
        r
        for r in report.results
        if r.key in ("peer_ce_on", "peer_ce_bidir_on", "peer_sm_read", "peer_sm_write")
        and r.params.size_bytes == 1 * GiB
    ]
    assert len(big) >= 6
    for r in big:
        assert 0.95 <= r.metrics.measured_over_expected <= 1.05, (r.key, r.value, r.params.model)


def test_staging_costs_ten_times_and_diagnose_says_so(report):
    (f,) = [f for f in diagnose(report).findings if f.code == "PEER-ACCESS-OFF"]
    assert "2 ordered GPU pairs" in f.title and "slower" in f.title  # both directions, one finding
    assert "cudaDeviceEnablePeerAccess" in f.advice and "NCCL_P2P_DISABLE" in f.advice
    per_pair = f.evidence[-1].removeprefix("on / off per pair: ").split(", ")
    assert sorted(pair.split()[0] for pair in per_pair) == ["0->1", "1->0"]
    assert all(float(pair.split()[1]) > 8 for pair in per_pair)


def test_a_report_with_peer_access_off_leads_with_that_cause(report):
    """Only staged copies measured (what an application without peer access sees): FAIL, first."""
    off_only = dataclasses.replace(
        report, results=tuple(r for r in report.results if r.key in ("peer_ce_off", "peer_ce_bidir_off"))
    )
    findings = diagnose(off_only).findings
    assert findings[0].code == "PEER-ACCESS-OFF" and findings[0].severity.value == "FAIL"
    assert "not enabled" in findings[0].title
    assert any("expected with peer access on" in e for e in findings[0].evidence)
    assert "cudaDeviceEnablePeerAccess" in findings[0].advice


def test_a_slow_nvlink_copy_is_flagged_against_the_model(report):
    def slowed(r):
        if r.key != "peer_ce_on":
            return r
        samples = tuple(x * 0.6 for x in r.samples)
        return dataclasses.replace(r, samples=samples, stats=SampleStats.of(samples))

    slow = dataclasses.replace(report, results=tuple(slowed(r) for r in report.results))
    codes = [f.code for f in diagnose(slow).findings]
    assert "PEER-SLOW" in codes and "PEER-SLOW" not in [f.code for f in diagnose(report).findings]
    assert PEER_OF_MODEL_HEALTHY == 0.9


def test_peer_slow_reads_todays_model_not_the_ratio_saved_in_the_row(report):
    """A model ratio saved by an older peer-bench is information: the judgement recomputes it."""

    def stale(r):
        if r.key != "peer_ce_on":
            return r
        return dataclasses.replace(r, metrics=dataclasses.replace(r.metrics, measured_over_expected=0.6))

    old = dataclasses.replace(report, results=tuple(stale(r) for r in report.results))
    assert "PEER-SLOW" not in [f.code for f in diagnose(old).findings]
    assert diagnose(old).judgements == diagnose(report).judgements


def test_machine_rules_p2p_unsupported_and_a_link_down(report):
    m = report.machine
    no_p2p = dataclasses.replace(
        m, peers=tuple(dataclasses.replace(p, can_access_peer=False) for p in m.peers)
    )
    f = [x for x in diagnose_machine(no_p2p) if x.code == "PEER-P2P-UNSUPPORTED"]
    assert len(f) == 2 and "hypervisor" in f[0].title and "topo -p2p" in f[0].advice
    g0 = m.gpus[0]
    links = tuple(dataclasses.replace(lk, active=lk.link >= 2) for lk in g0.nvlinks)
    down = dataclasses.replace(m, gpus=(dataclasses.replace(g0, nvlinks=links), *m.gpus[1:]))
    f = [x for x in diagnose_machine(down) if x.code == "PEER-NVLINK-DOWN"]
    assert len(f) == 1 and "2 of 18" in f[0].title
    assert not [x for x in diagnose_machine(m) if x.code.startswith("PEER-")]


def _pcie_machine(redirect: bool) -> MachineInfo:
    pcie = dict(
        offset=0x60,
        version=2,
        max_payload_supported=512,
        ext_tag_supported=True,
        flr=True,
        relaxed_ordering=True,
        ext_tag=True,
        no_snoop=True,
        max_payload=256,
        max_read_request=512,
    )
    flags = ("SrcValid", "ReqRedir", "CmpltRedir") if redirect else ("SrcValid",)
    dsp = PciFunction(
        bdf="0000:02:00.0",
        is_bridge=True,
        pcie=PcieCap(port_type=PortType.SWITCH_DOWNSTREAM, **pcie),
        acs=AcsCap(offset=0x200, cap=0x5F, ctl=0x1D if redirect else 0x1, ctl_flags=flags),
    )
    pair = GpuPeerPair(
        src_ordinal=0,
        dst_ordinal=1,
        src_bdf="0000:03:00.0",
        dst_bdf="0000:04:00.0",
        can_access_peer=True,
        nvlinks=0,
        path_class=PathClass.PIX,
        bridges=("0000:02:00.0",),
    )
    rev = dataclasses.replace(pair, src_ordinal=1, dst_ordinal=0, src_bdf=pair.dst_bdf, dst_bdf=pair.src_bdf)
    return MachineInfo(pci=(dsp,), peers=(pair, rev), virt=VirtInfo(is_vm=False))


def test_acs_redirect_between_gpus_under_one_switch():
    f = [x for x in diagnose_machine(_pcie_machine(True)) if x.code == "PEER-ACS-REDIRECT"]
    assert len(f) == 1 and "disable_acs_redir=0000:02:00.0" in f[0].advice
    assert not [x for x in diagnose_machine(_pcie_machine(False)) if x.code == "PEER-ACS-REDIRECT"]


def test_the_model_numbers(report):
    m = report.machine
    pair = m.peers[0]
    ce = expect(m, pair, mover="ce", peer_access=True)
    sm = expect(m, pair, mover="sm", peer_access=True)
    both = expect(m, pair, mover="ce", peer_access=True, bidirectional=True)
    assert ce.gbytes_per_s == pytest.approx(18 * 26.5625 * CE_NVLINK_EFFICIENCY)
    assert sm.gbytes_per_s == pytest.approx(18 * 20.6)
    assert both.gbytes_per_s == pytest.approx(2 * ce.gbytes_per_s)
    assert SM_NVLINK_EFFICIENCY < CE_NVLINK_EFFICIENCY  # why the SM read stays under the CE copy
    assert "NV18" in ce.text
    assert expect(None, None, mover="ce", peer_access=True).gbytes_per_s is None


def test_inspect_counts_links_whose_remote_is_unknown_when_nvml_says_nvlink(report):
    m = report.machine
    cuda_facts = {
        "status": "ok",
        "peers": [
            {
                "src_ordinal": a,
                "dst_ordinal": b,
                "can_access_peer": True,
                "performance_rank": 0,
                "unknown": {},
            }
            for a, b in ((0, 1), (1, 0))
        ],
    }
    bdfs = [g.bdf for g in m.gpus]
    nvml = {"gpus": {a: {"p2p": {b: {"nvlink": "OK"}}} for a in bdfs for b in bdfs if a != b}}
    peers, unknown = inspect_peers(cuda_facts, m.cuda_devices, m.gpus, m.pci, m.virt, nvml)
    assert [p.path_text for p in peers] == ["NV18", "NV18"] and not unknown
    # NVML silent (cuda-bindings 13.3 on the x2 machine): both GPUs have active links and CUDA
    # offers peer access, so the links are counted, and the note says on what grounds.
    peers, _ = inspect_peers(cuda_facts, m.cuda_devices, m.gpus, m.pci, m.virt, {})
    assert [p.path_text for p in peers] == ["NV18", "NV18"] and "no NVLink P2P status" in peers[0].note
    # NVML says the pair does not talk over NVLink: the pair keeps its PCIe class.
    nvml_no = {"gpus": {a: {"p2p": {b: {"nvlink": "NOT_SUPPORTED"}}} for a in bdfs for b in bdfs if a != b}}
    peers, _ = inspect_peers(cuda_facts, m.cuda_devices, m.gpus, m.pci, m.virt, nvml_no)
    assert all(p.path_class is not PathClass.NV for p in peers)
    # A link that names the peer is counted whatever NVML's P2P status says.
    g0 = m.gpus[0]
    named = tuple(dataclasses.replace(lk, remote_bdf=bdfs[1]) for lk in g0.nvlinks[:4])
    gpus = (dataclasses.replace(g0, nvlinks=named), *m.gpus[1:])
    peers, _ = inspect_peers(cuda_facts, m.cuda_devices, gpus, m.pci, m.virt, {})
    assert peers[0].path_text == "NV4"
    # One GPU: no pairs.
    assert inspect_peers(cuda_facts, m.cuda_devices[:1], m.gpus, m.pci, m.virt, nvml) == ((), {})


def test_the_table_prints_measured_over_expected(report):
    text = render_peer_results(list(report.results), width=None)
    assert "meas/exp" in text and "NV18" in text and "cupy" in text
    assert "Expected values" in text and "x 0.830" in text


def test_nvlink_fact_types_round_trip():
    g = GpuInfo(bdf="0000:00:06.0", nvlinks=(NvLink(link=0, active=True, version=4, gbytes_per_s=26.5625),))
    m = MachineInfo(gpus=(g,))
    back = Report.from_json(Report(machine=m).to_json()).machine
    assert back == m
    # A Report written before peer facts existed still loads (missing fields take their defaults).
    data = json.loads(Report(machine=m).to_json())
    del data["machine"]["peers"]
    del data["machine"]["gpus"][0]["nvlinks"]
    old = Report.from_json(json.dumps(data)).machine
    assert old.peers == () and old.gpus[0].nvlinks == ()
