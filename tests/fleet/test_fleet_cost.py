"""fleet's cost grows with its input, not with its square: per-device baselines, many SKU keys, the HTML.

Times are CPU times (``process_time``), best of a few runs, and the bound on the ratio is generous
(x8 the input may cost up to x24; a quadratic costs x64), so a loaded machine does not fail them.
"""

from __future__ import annotations

import base64
import gc
import re
import struct
import time

import pytest

from gdrdiag.fleet import analyse, parse_baseline
from gdrdiag.fleet_sku import intended_skus
from gdrdiag.model.fleet import FleetOptions, NodeRecordHead

# Every device fact declared, for every SKU: firmware, MTU, the GPU link as capable, the NIC link.
DEVICE_BASELINE = parse_baseline(
    '[[sku]]\nmatch = "*"\nnic_firmware = "28.0"\nmtu = 4096\n'
    'gpu_link_cap = "32 GT/s x16"\nnic_link = "32 GT/s x16"\n'
)


def _cpu(fn, repeats: int = 2) -> float:
    """Best CPU seconds of ``fn``, timed with the garbage collector off.

    A full collection scans every object the earlier tests of the session left alive (in the whole
    suite it made the 2,000-record run x43 the 250-record one): a cost of the test run, not of fleet.
    """
    best = float("inf")
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            t = time.process_time()
            fn()
            best = min(best, time.process_time() - t)
    finally:
        if enabled:
            gc.enable()
    return best


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
    t_small = _cpu(lambda: analyse(small, options))
    t_large = _cpu(lambda: analyse(large, options), repeats=1)
    assert t_large < 24 * max(t_small, 0.005), (t_small, t_large)
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
    t_small = _cpu(lambda: intended_skus(small))
    t_large = _cpu(lambda: intended_skus(large), repeats=1)
    assert t_large < 24 * max(t_small, 0.005), (t_small, t_large)
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
