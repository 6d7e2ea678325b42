"""A baseline's declared GPU link against GPUs that lower their link speed at idle."""

import dataclasses
import re
from pathlib import Path

import pytest

from gdrdiag.cli.report_files import load_report
from gdrdiag.fleet import FleetOptions, analyse, parse_baseline
from gdrdiag.node_record import parse_head, record_line

from .conftest import REPORTS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "fleet.md"


def _idle_gpu_links(rep, max_width=16):
    """The Report with every GPU's link read idle: Gen1 speed, its capable link unchanged."""
    m = rep.machine
    gpus = {g.bdf for g in m.gpus}
    pci = tuple(
        dataclasses.replace(
            f,
            link=dataclasses.replace(f.link, speed_gts=2.5, speed_downgraded=True, max_width=max_width),
        )
        if f.bdf in gpus and f.link is not None
        else f
        for f in m.pci
    )
    return dataclasses.replace(rep, machine=dataclasses.replace(m, pci=pci))


def _heads(rep, n=5):
    one = parse_head(record_line(rep, "n0", 0))
    return [dataclasses.replace(one, host=f"n{i}") for i in range(n)]


def test_declared_gpu_link_cap_does_not_flag_gpus_read_idle():
    heads = _heads(_idle_gpu_links(load_report(REPORTS / "baremetal_hgx.json")))
    rules = parse_baseline('[[sku]]\nmatch = "*"\ngpu_link_cap = "32 GT/s x16"\n')
    assert not analyse(heads, FleetOptions(baseline=rules)).flagged
    # A GPU that is capable of less than the SKU's link is still a node problem.
    narrow = _heads(_idle_gpu_links(load_report(REPORTS / "baremetal_hgx.json"), max_width=8), 1)
    narrow = [dataclasses.replace(narrow[0], host="narrow")]
    (n,) = analyse(heads + narrow, FleetOptions(baseline=rules)).flagged
    assert n.host == "narrow"


def test_declared_trained_gpu_link_is_a_clear_error():
    with pytest.raises(ValueError, match=r"gpu_link .*idle.*gpu_link_cap"):
        parse_baseline('[[sku]]\nmatch = "*"\ngpu_link = "32 GT/s x16"\n')


def test_docs_baseline_example_parses_and_flags_no_idle_gpu():
    text = DOCS.read_text()
    (block,) = re.findall(r"### Baseline file.*?```toml\n(.*?)```", text, re.S)
    rules = parse_baseline(block)
    assert all("gpu_link" not in r.expect for r in rules)
    expected = {k for r in rules for k in r.expect}
    assert "gpu_link_cap" in expected
