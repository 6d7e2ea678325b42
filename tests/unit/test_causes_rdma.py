"""Causes of the RDMA path as a whole: registration missing, the NIC's link, small messages."""

import dataclasses

import pytest

from gdrdiag.diagnose import diagnose
from gdrdiag.model.params import MrParams
from gdrdiag.model.results import BenchResult
from gdrdiag.model.vocabulary import MemoryKind, RegPath
from tests.unit import diagnosis_scenarios as sc

KiB = 1 << 10


def test_registration_missing_leads_when_no_gpu_row_registered():
    waived = [
        BenchResult.waived(
            f"rdma_write_device_{reg}",
            f"{reg}: registration failed (EOPNOTSUPP)",
            params=MrParams(memory=MemoryKind.DEVICE, reg_path=RegPath(reg), landing="gpu"),
            provider="fixture",
        )
        for reg in ("mr", "dmabuf")
    ]
    m = sc.machine("baremetal_hgx")
    m = dataclasses.replace(m, kernel=dataclasses.replace(m.kernel, peermem_loaded=False))
    lead = diagnose(sc.report(m, waived + [sc.write("pinned", 394.0, False)])).findings[0]
    assert lead.code == "CAUSE-REG-PATH-MISSING" and lead.basis == "measured"
    assert any("nvidia_peermem is not loaded" in e for e in lead.evidence)


def test_one_registration_path_working_is_not_a_missing_path():
    waived = BenchResult.waived(
        "rdma_write_device_dmabuf",
        "dma-buf unsupported",
        params=MrParams(memory=MemoryKind.DEVICE, reg_path=RegPath.DMABUF),
        provider="fixture",
    )
    rep = sc.report(
        sc.machine("baremetal_hgx"),
        [waived, sc.write("device", 392.0, False), sc.write("pinned", 394.0, False)],
    )
    assert "CAUSE-REG-PATH-MISSING" not in {f.code for f in diagnose(rep).findings}


def test_nic_link_below_capable_caps_host_memory_rdma():
    m = sc.machine("baremetal_hgx")
    nic = m.nics[0]
    slow = dataclasses.replace(
        nic.link, width=8, raw_gbytes_per_s=nic.link.max_raw_gbytes_per_s / 2, width_downgraded=True
    )
    m = dataclasses.replace(m, nics=(dataclasses.replace(nic, link=slow),) + m.nics[1:])
    findings = diagnose(
        sc.report(m, [sc.write("pinned", 220.0, False), sc.write("device", 219.0, False)])
    ).findings
    lead = findings[0]
    assert lead.code == "CAUSE-NIC-LINK" and lead.basis == "measured"
    # The x8 link carries ~227 Gb/s of payload (half of 63 GB/s x 8 bit x 0.9): of the 180 Gb/s lost
    # against the 400 Gb/s port, the link accounts for 400 - 227.
    ceiling = nic.link.max_raw_gbytes_per_s / 2 * 8 * 0.9
    assert lead.explains == pytest.approx((400 - ceiling) / (400 - 220), abs=0.001)


def test_small_messages_only():
    rows = [sc.write("pinned", 150.0, False, size=4 * KiB), sc.write("device", 149.0, False, size=4 * KiB)]
    lead = diagnose(sc.report(sc.machine("baremetal_hgx"), rows)).findings[0]
    assert lead.code == "CAUSE-SMALL-MESSAGES" and lead.next_step == "gdrdiag mr-bench --memory pinned --all"
    big = [sc.write("pinned", 150.0, False, size=1 << 20)]
    assert "CAUSE-SMALL-MESSAGES" not in {
        f.code for f in diagnose(sc.report(sc.machine("baremetal_hgx"), big)).findings
    }
