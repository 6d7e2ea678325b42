"""The facts a case states reach the path model as a live machine's would (issue 20).

Switch and chipset uplinks, per-GPU links, ACS on a switch's ports and NCCL GDR A/Bs: each is
checked here on a small case written for the test, so a change that drops one fails by name.
"""

from __future__ import annotations

from pathlib import Path

from gdrdiag.diagnose import diagnose
from gdrdiag.model.machine import PathClass
from gdrdiag.pathmodel.judge import judge
from gdrdiag.pathmodel.peer import expect, pair_of
from tests.cases.casefile import load

_HEAD = 'url = "https://example.org/t"\ntitle = "t"\nsource = "blog"\ncause = "HEALTHY"\n'


def _case(tmp_path: Path, body: str):
    path = tmp_path / "t.toml"
    path.write_text(_HEAD + body)
    return load(path)


_TWO_SWITCHES = """
[machine]
gpus = 4
gpu_link = "32.0x16"
peer_access = true

[[machine.switches]]
gpus = [0, 1]
uplink = "32.0x16"
numa = 0

[[machine.switches]]
gpus = [2, 3]
host_bridge = 32
uplink = "5.0x16"
uplink_capable = "32.0x16"
numa = 0
"""


def test_switches_give_the_classes_and_the_uplink_as_trained_and_capable(tmp_path):
    m = _case(tmp_path, _TWO_SWITCHES).report.machine
    same, across = pair_of(m, 0, 1), pair_of(m, 0, 2)
    assert same.path_class is PathClass.PIX and across.path_class is PathClass.NODE
    assert across.narrowest_capable.raw_gbytes_per_s > 60  # Gen5 x16 everywhere, as capable
    assert across.narrowest_current.speed_gts == 5.0  # the uplink that trained at Gen2
    assert same.narrowest_current.speed_gts == 32.0  # the PIX pair never crosses it
    capable = expect(m, across, mover="ce", peer_access=True).gbytes_per_s
    trained = expect(m, across, mover="ce", peer_access=True, trained=True).gbytes_per_s
    assert trained < capable / 5


def test_a_row_across_the_degraded_uplink_is_a_loss_the_trained_link_explains(tmp_path):
    rows = """
[[rows]]
tool = "p2pBandwidthLatencyTest"
memory = "device"
direction = "d2d"
value = 7.0
unit = "GB/s"
gpu = 0
peer_gpu = 2
peer_access = true
"""
    case = _case(tmp_path, _TWO_SWITCHES + rows)
    (j,) = judge(case.report.results, case.report.machine)
    assert j.ratio < 0.2 and j.trained_gbytes_per_s is not None and j.trained_gbytes_per_s < 8
    assert diagnose(case.report).findings[0].code == "CAUSE-LINK-DEGRADED"


def test_acs_redirect_under_one_switch_is_the_cause_of_a_peer_loss(tmp_path):
    body = """
[machine]
gpus = 2
gpu_link = "32.0x16"
peer_access = true

[[machine.switches]]
gpus = [0, 1]
uplink = "32.0x16"
acs_redirect = true

[[rows]]
tool = "p2pBandwidthLatencyTest"
memory = "device"
direction = "d2d"
value = 20
unit = "GB/s"
gpu = 0
peer_gpu = 1
peer_access = true
"""
    findings = diagnose(_case(tmp_path, body).report).findings
    assert findings[0].code == "CAUSE-P2P-VIA-RC" and findings[0].basis == "inferred"
    acs = [f for f in findings if f.code == "PEER-ACS-REDIRECT"]
    assert len(acs) == 1  # one finding per pair, both ports listed in it
    assert acs[0].title.count("0000:") == 2


def _gdr_ab(tmp_path: Path, off: float, on: float):
    body = f"""
[machine]
nics = 2
nic_port_gbps = 400
path_class = "SYS"

[[rows]]
tool = "nccl-tests"
memory = "device"
size_bytes = 1073741824
value = {off}
unit = "GB/s"
test = "all_reduce_perf"
busbw = true
gdr = false

[[rows]]
tool = "nccl-tests"
memory = "device"
size_bytes = 1073741824
value = {on}
unit = "GB/s"
test = "all_reduce_perf"
busbw = true
gdr = true
"""
    return diagnose(_case(tmp_path, body).report).findings


def test_a_gdr_ab_beyond_the_noise_floor_names_the_far_nic_once(tmp_path):
    findings = _gdr_ab(tmp_path, 80.0, 96.0)
    far = [f for f in findings if f.code == "CAUSE-GPU-NIC-FAR"]
    assert findings[0].code == "CAUSE-GPU-NIC-FAR" and len(far) == 1
    assert any("single sample per side" in e for e in far[0].evidence)


def test_a_gdr_ab_inside_the_noise_floor_is_no_cause(tmp_path):
    findings = _gdr_ab(tmp_path, 95.0, 96.0)
    assert not [f for f in findings if f.code == "CAUSE-GPU-NIC-FAR" and "GPUDirect" in f.title]


def test_per_gpu_links_override_the_common_one(tmp_path):
    body = """
[machine]
gpus = 2
gpu_link = "16.0x16"
gpu_links = ["16.0x4"]
"""
    m = _case(tmp_path, body).report.machine
    assert [g.link.width for g in m.gpus] == [4, 16]
