"""compare shows the GPU peer matrix side by side: per ordered pair, path class, peer access, NVLinks."""

import dataclasses
import json
from pathlib import Path

from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.compare import compare, peer_deltas
from gdrdiag.model.machine import PathClass
from gdrdiag.model.report import Report
from gdrdiag.render.compare_table import render_comparison
from gdrdiag.render.html import comparison_html

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
PEER = REPORTS / "peer_h100x2.json"
ONE_GPU = REPORTS / "gpu_machine_h200.json"


def _load(p: Path) -> Report:
    return Report.from_json(p.read_text())


def _with_peers(r: Report, **changes) -> Report:
    """The same Report with every peer pair changed (a VM that refuses P2P, fewer links)."""
    assert r.machine is not None
    peers = tuple(dataclasses.replace(p, **changes) for p in r.machine.peers)
    return dataclasses.replace(r, machine=dataclasses.replace(r.machine, peers=peers))


def test_two_gpus_against_one_gpu_shows_both_pairs_with_the_reason():
    rows = peer_deltas(_load(PEER), _load(ONE_GPU))
    assert [d.pair for d in rows] == ["GPU0->GPU1", "GPU1->GPU0"]
    for d in rows:
        assert (d.a_path, d.a_access, d.a_nvlinks, d.a_rate) == ("NV18", "yes", "18", "478.125")
        assert d.b_path == "no pair: 1 GPU" and d.differs


def test_same_report_has_pairs_that_do_not_differ():
    rows = peer_deltas(_load(PEER), _load(PEER))
    assert len(rows) == 2 and not any(d.differs for d in rows)


def test_no_pairs_on_either_side_gives_no_section():
    c = compare(_load(ONE_GPU), _load(ONE_GPU))
    assert c.peers == ()
    assert "GPU peer matrix" not in render_comparison(c)


def test_p2p_refused_and_fewer_links_differ_field_by_field():
    bare = _load(PEER)
    vm = _with_peers(bare, can_access_peer=False, nvlinks=12, nvlink_gbytes_per_s=318.75)
    c = compare(bare, vm, a_label="bare", b_label="vm")
    d = c.peers[0]
    assert (d.a_access, d.b_access) == ("yes", "no")
    assert (d.a_nvlinks, d.b_nvlinks) == ("18", "12")
    assert (d.a_path, d.b_path) == ("NV18", "NV12")
    assert (d.a_rate, d.b_rate) == ("478.125", "318.75")
    text = render_comparison(c, wide=True)
    assert "GPU peer matrix side by side" in text
    assert "GPU0->GPU1  NV18; peer access yes; 18 NVLinks, 478.125 GB/s" in text
    assert "NV12; peer access no; 12 NVLinks, 318.75 GB/s" in text
    page = comparison_html(c, bare, vm)
    assert "<h2>GPU peer matrix side by side</h2>" in page and "NV12; peer access no" in page


def test_pcie_pair_in_a_vm_is_marked_synthetic():
    r = _with_peers(_load(PEER), path_class=PathClass.PHB, nvlinks=0, reliable=False)
    d = peer_deltas(_load(PEER), r)[0]
    assert d.b_path == "PHB (synthetic VM tree)" and d.differs


def test_cli_text_json_and_html(tmp_path):
    page = tmp_path / "c.html"
    res = CliRunner().invoke(app, ["compare", str(PEER), str(ONE_GPU), "--html", str(page)])
    assert res.exit_code == 0, res.output
    assert "GPU0-&gt;GPU1" in page.read_text()
    res = CliRunner().invoke(app, ["compare", str(PEER), str(ONE_GPU)], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    assert "GPU peer matrix side by side" in res.output and "no pair: 1 GPU" in res.output
    res = CliRunner().invoke(app, ["--json", "compare", str(PEER), str(ONE_GPU)])
    assert res.exit_code == 0, res.output
    peers = json.loads(res.output)["peers"]
    assert peers[1]["pair"] == "GPU1->GPU0" and peers[1]["a_nvlinks"] == "18" and peers[1]["differs"]
