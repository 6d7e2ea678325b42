"""fleet's cost grows with its input, not with its square: per-device baselines, many SKU keys, the HTML.

The cost is counted, not timed: the Python function calls the analysis makes (``sys.setprofile``), a
number a loaded machine cannot change. x8 the input may cost up to x12 the calls (linear: x8; a
quadratic: x64).
"""

from __future__ import annotations

import base64
import re
import struct
import sys

import pytest

from gdrdiag.fleet import analyse, parse_baseline
from gdrdiag.fleet_sku import intended_skus
from gdrdiag.model.fleet import FleetOptions, NodeRecordHead

# Every device fact declared, for every SKU: firmware, MTU, the GPU link as capable, the NIC link.
DEVICE_BASELINE = parse_baseline(
    '[[sku]]\nmatch = "*"\nnic_firmware = "28.0"\nmtu = 4096\n'
    'gpu_link_cap = "32 GT/s x16"\nnic_link = "32 GT/s x16"\n'
)


def _calls(fn) -> int:
    """How many Python function calls ``fn()`` makes (C builtins left out): a cost no load changes."""
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call":
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def _own_device_nodes(n: int) -> list[NodeRecordHead]:
    """``n`` nodes of one SKU whose devices have their own names and addresses (VMs, renamed NICs).

    Half run other firmware and MTU than declared, every link is below the declared one: each
    node has device findings, each naming its NIC.
    """
    out = []
    for i in range(n):
        bdf = f"0000:{i // 256:02x}:{i % 256:02x}.0"
        nic = f"mlx5_{i}"
        facts = {
            "gpus": "1",
            "rdma devices": "1",
            f"name nic {bdf}": nic,
            f"firmware {nic}": "28.1" if i % 2 else "28.0",
            f"mtu {nic} port 1": "1024" if i % 2 else "4096",
            f"link nic {bdf}": "16 GT/s x8",
            f"link cap gpu {bdf}": "16 GT/s x8",
        }
        out.append(
            NodeRecordHead(
                host=f"n{i}",
                sku="A",
                exit_code=0,
                sku_parts={"platform": "bare metal", "gpus": "1x G", "nics": "1x N", "driver": "d"},
                metrics={"rdma_host_gbps": 390.0 - i % 7},
                facts=facts,
            )
        )
    return out


def test_per_device_baseline_cost_is_linear_in_records():
    """x8 records with every device fact declared cost ~x8, not x64 (1,000 records took 85 s)."""
    options = FleetOptions(baseline=DEVICE_BASELINE)
    small, large = _own_device_nodes(250), _own_device_nodes(2000)
    c_small, c_large = _calls(lambda: analyse(small, options)), _calls(lambda: analyse(large, options))
    assert c_large < 12 * c_small, (c_small, c_large)
    res = analyse(small, options)
    node = next(v for v in res.nodes if v.host == "n1")
    codes = sorted(f.code for f in node.drift)
    assert codes == [
        "FLEET-FIRMWARE-DRIFT",
        "FLEET-LINK-BELOW-SKU",
        "FLEET-LINK-BELOW-SKU",
        "FLEET-MTU-DRIFT",
    ]
    firmware = next(f for f in node.drift if f.code == "FLEET-FIRMWARE-DRIFT")
    assert firmware.title == "mlx5_1 (0000:00:01.0) firmware 28.1, the SKU's is 28.0"


def _one_node_skus(n: int) -> list[NodeRecordHead]:
    """``n`` nodes, each its own SKU key (GPU models no other node has)."""
    out = []
    for i in range(n):
        parts = {"gpus": f"{1 + i % 8}x GPU{i}", "nics": "1x N", "driver": "d", "platform": "bare metal"}
        out.append(NodeRecordHead(host=f"n{i}", sku=" | ".join(parts.values()), exit_code=0, sku_parts=parts))
    return out


def test_sku_folding_cost_is_linear_in_distinct_keys():
    """x8 one-node SKU keys cost ~x8 (20,000 of them took 15-17 s), and none is folded into another."""
    small, large = _one_node_skus(1000), _one_node_skus(8000)
    c_small, c_large = _calls(lambda: intended_skus(small)), _calls(lambda: intended_skus(large))
    assert c_large < 12 * c_small, (c_small, c_large)
    mapping = intended_skus(small)
    assert all(own == intended for own, intended in mapping.items())


def _with_folding() -> list[NodeRecordHead]:
    """A big SKU, a node of it that lost a GPU (folded into it), and a small SKU of its own."""
    big = {"gpus": "8x H100", "nics": "8x CX7", "driver": "d", "platform": "bare metal"}
    lost = {**big, "gpus": "7x H100"}
    other = {"gpus": "4x A100", "nics": "4x CX6", "driver": "d", "platform": "bare metal"}
    heads = [NodeRecordHead(host=f"b{i}", sku="big", exit_code=0, sku_parts=big) for i in range(9)]
    heads.append(NodeRecordHead(host="lost", sku="lost", exit_code=0, sku_parts=lost))
    heads += [NodeRecordHead(host=f"o{i}", sku="other", exit_code=0, sku_parts=other) for i in range(2)]
    return heads


def test_sku_folding_still_folds_a_node_gone_wrong():
    assert intended_skus(_with_folding()) == {"big": "big", "lost": "big", "other": "other"}


def _png_height(page: str) -> list[int]:
    heights = []
    for b64 in re.findall(r'src="data:image/png;base64,([^"]+)"', page):
        png = base64.b64decode(b64)
        heights.append(struct.unpack(">I", png[20:24])[0])  # IHDR: width, then height
    return heights


def test_html_strip_plots_draw_a_bounded_number_of_groups():
    """300 SKU groups: each strip plot is drawn for the worst groups only, and the page says how many not."""
    pytest.importorskip("matplotlib")
    from gdrdiag.render import fleet_html as fh

    heads = []
    for g in range(300):
        parts = {"gpus": f"1x G{g}", "nics": "1x N", "driver": "d", "platform": f"p{g}"}
        for i in range(5):
            value = 100.0 if g != 7 or i else 10.0  # one node far below its group's other
            heads.append(
                NodeRecordHead(
                    host=f"g{g}n{i}",
                    sku=f"sku{g:03d}",
                    exit_code=0,
                    sku_parts=parts,
                    metrics={"rdma_host_gbps": value},
                    facts={"kernel": "k" if i else "other"} if g == 11 else {},
                )
            )
    result = analyse(heads)
    page = fh.fleet_html(result)
    heights = _png_height(page)
    assert heights and max(heights) <= (0.9 + 0.7 * fh.MAX_PLOT_GROUPS) * 100 + 100, heights
    left = len(result.groups) - fh.MAX_PLOT_GROUPS
    flagged = {g.sku for g in result.groups if g.flagged}
    assert flagged and flagged <= {sku for _, sku in fh.plotted_groups(result)}  # the worst are drawn
    assert f"{left} of {len(result.groups)} SKU groups are not drawn" in page
