"""The HTML report and compare pages, read back as a browser would get them, from saved Reports.

Each test parses the generated page (html.parser) and the SVG charts embedded in it (their text
is kept as text), and checks what a reader relies on against the Report itself: the machine
section and its facts, one labelled bar per compared delta, no chart whose axis mixes GB/s with
Gb/s, mr and dma-buf as separate bars, and lines only where a case was swept over sizes.
"""

from __future__ import annotations

import base64
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.compare import compare
from gdrdiag.model.report import Report
from gdrdiag.model.results import Status
from gdrdiag.render.html import comparison_html, report_html

pytest.importorskip("matplotlib")

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
ALL_REPORTS = ("gpu_machine_h200.json", "baremetal_hgx.json", "vm_guest_kvm.json")
SVG = "{http://www.w3.org/2000/svg}"


def _load(name: str) -> Report:
    return Report.from_json((REPORTS / name).read_text())


class _Page(HTMLParser):
    """Tables (rows of (class, cells)) with their caption and CSS class, and the embedded images."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self.images: list[str] = []
        self._cell: list[str] | None = None
        self._in_caption = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.tables.append({"class": a.get("class", ""), "caption": "", "rows": []})
        elif tag == "caption":
            self._in_caption = True
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append((a.get("class", ""), []))
        elif tag in ("td", "th") and self.tables and self.tables[-1]["rows"]:
            self._cell = []
        elif tag == "img":
            self.images.append(a.get("src", ""))

    def handle_endtag(self, tag):
        if tag == "caption":
            self._in_caption = False
        elif tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1][1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._in_caption:
            self.tables[-1]["caption"] += data
        elif self._cell is not None:
            self._cell.append(data)


def _parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    return parser


def _svgs(page: _Page) -> list[ET.Element]:
    prefix = "data:image/svg+xml;base64,"
    assert page.images and all(src.startswith(prefix) for src in page.images)
    return [ET.fromstring(base64.b64decode(src[len(prefix) :])) for src in page.images]


def _texts(element: ET.Element) -> list[str]:
    return [t.text or "" for t in element.iter(f"{SVG}text")]


def _group(svg: ET.Element, gid: str) -> ET.Element:
    return next(g for g in svg.iter(f"{SVG}g") if g.get("id") == gid)


def _chart_with(svgs: list[ET.Element], words: str) -> ET.Element:
    return next(s for s in svgs if any(words in t for t in _texts(s)))


def _machine_facts(page: _Page) -> dict[tuple[str, str], str]:
    facts = {}
    for table in page.tables:
        if table["class"] == "facts":
            for _, cells in table["rows"]:
                facts[(table["caption"], cells[0])] = cells[1]
    return facts


# ---------------------------------------------------------------------------------------------
# the machine section
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_REPORTS)
def test_report_page_has_a_machine_section_with_the_reports_facts(name):
    report = _load(name)
    m = report.machine
    assert m is not None
    page = _parse(report_html(report, report.findings))
    facts = _machine_facts(page)
    assert facts[("Host", "host name")] == m.host.hostname
    assert facts[("Host", "OS")] == m.host.os
    assert facts[("Host", "kernel")] == m.kernel.release
    assert facts[("Virtualization and IOMMU", "virtualization")].startswith(
        "VM" if m.virt.is_vm else "bare metal"
    )
    if m.virt.hypervisor:
        assert m.virt.hypervisor in facts[("Virtualization and IOMMU", "virtualization")]
    assert facts[("Virtualization and IOMMU", "IOMMU mode")] == m.virt.iommu_mode
    for i, g in enumerate(m.gpus):
        section = f"GPU {i}"
        assert facts[(section, "PCI address")] == g.bdf and facts[(section, "model")] == g.name
        if g.link is not None and g.link.speed_gts is not None:
            assert f"{g.link.speed_gts:g} GT/s x{g.link.width}" in facts[(section, "PCIe link")]
        assert facts[(section, "BAR1")] == f"{g.bar1_bytes >> 30} GiB"  # the fixtures' BAR1s are whole GiB
        assert facts[(section, "NUMA node")] == ("unknown" if g.numa_node is None else str(g.numa_node))
    for i, n in enumerate(m.nics):
        section = f"RDMA NIC {i}"
        assert facts[(section, "device")] == n.name and facts[(section, "firmware")] == n.fw_ver
        assert all(p.rate in facts[(section, "ports")] for p in n.ports if p.rate)
        assert facts[(section, "NUMA node")] == ("unknown" if n.numa_node is None else str(n.numa_node))
    paths = next((t for t in page.tables if t["class"] == "paths"), None)
    if m.topology:  # a GPU per row, a NIC per column, the path class in each cell
        assert paths["rows"][0][1][1:] == list(dict.fromkeys(p.nic for p in m.topology))
        cells = [c for _, row in paths["rows"][1:] for c in row[1:]]
        assert len(cells) == len(m.topology)
        assert sorted(c.split(" ")[0].rstrip(",") for c in cells) == sorted(
            p.path_class.value for p in m.topology
        )


def test_machine_section_names_acs_redirecting_bridges_and_nic_ats():
    report = _load("baremetal_hgx.json")
    m = report.machine
    facts = _machine_facts(_parse(report_html(report, report.findings)))
    redirecting = [f.bdf for f in m.pci if f.is_bridge and f.acs and "ReqRedir" in f.acs.ctl_flags]
    assert redirecting, "the fixture has bridges with ACS redirect on"
    acs = facts[("Virtualization and IOMMU", "ACS redirect")]
    assert all(bdf in acs for bdf in redirecting)
    for i, n in enumerate(m.nics):
        ats = m.function(n.bdf).ats
        assert facts[(f"RDMA NIC {i}", "ATS")] == ("enabled" if ats.enabled else "disabled")


def test_compare_page_puts_both_machines_side_by_side_and_marks_what_differs():
    a, b = _load("baremetal_hgx.json"), _load("vm_guest_kvm.json")
    page = _parse(comparison_html(compare(a, b, a_label="bare", b_label="vm"), a, b))
    table = next(t for t in page.tables if t["class"] == "side-by-side")
    assert table["rows"][0][1] == ["fact", "bare", "vm"]
    rows = {
        cells[0].removeprefix("≠ "): (cls, cells[1:]) for cls, cells in table["rows"][1:] if len(cells) == 3
    }
    for name, (cls, (va, vb)) in rows.items():
        assert (cls == "differs") == (va != vb), name
    assert rows["host name"][1] == [a.machine.host.hostname, b.machine.host.hostname]
    assert rows["virtualization"][0] == "differs"  # bare metal against a VM
    assert rows["CPU"][0] == "" and a.machine.host.cpu_model == b.machine.host.cpu_model
    # Devices only the first Report has are one row each, not one row per fact.
    extra_gpus = len(a.machine.gpus) - len(b.machine.gpus)
    assert extra_gpus > 0
    only_a = [
        cells for cls, cells in table["rows"] if cells[0] == "≠ present" and cells[2] == "not in this Report"
    ]
    assert len(only_a) == extra_gpus + len(a.machine.nics) - len(b.machine.nics)


def test_machine_section_escapes_hostile_text(tmp_path):
    data = json.loads((REPORTS / "vm_guest_kvm.json").read_text())
    data["machine"]["host"]["hostname"] = "<script>alert(1)</script>\x1b]0;owned\x07"
    report = Report.from_json(json.dumps(data))
    page = report_html(report, report.findings)
    assert "<script>" not in page and "\x1b" not in page and "\x07" not in page
    assert _machine_facts(_parse(page))[("Host", "host name")] == "<script>alert(1)</script>"


# ---------------------------------------------------------------------------------------------
# the charts
# ---------------------------------------------------------------------------------------------


def test_every_delta_gets_its_own_labelled_bar():
    a, b = _load("baremetal_hgx.json"), _load("vm_guest_kvm.json")
    comparison = compare(a, b, a_label="bare", b_label="vm")
    large = [c for c in comparison.cases if c.large]
    assert len(large) == 8  # the reviewer's page drew 6 bars for these 8
    deltas = _chart_with(_svgs(_parse(comparison_html(comparison, a, b))), "differ by more than 10%")
    bars = [g for g in deltas.iter(f"{SVG}g") if (g.get("id") or "").startswith("delta-bar-")]
    labels = [t for t in _texts(_group(deltas, "matplotlib.axis_2")) if t.strip()]
    assert len(bars) == len(large) and len(labels) == len(large) == len(set(labels))
    for key in {c.key for c in large}:
        assert sum(label.split(" · ")[0] == key for label in labels) == sum(c.key == key for c in large)


@pytest.mark.parametrize("name", ALL_REPORTS)
def test_no_chart_mixes_gigabytes_and_gigabits(name):
    report = _load(name)
    svgs = _svgs(_parse(report_html(report, report.findings)))
    units_per_chart = [{u for u in ("GB/s", "Gb/s") if any(u in t for t in _texts(s))} for s in svgs]
    assert all(len(units) == 1 for units in units_per_chart), units_per_chart
    measured_units = {r.unit for r in report.results if r.status is Status.OK and r.unit in ("GB/s", "Gb/s")}
    assert set().union(*units_per_chart) == measured_units  # every unit measured is charted, apart
    for svg in svgs:  # the unit is named in an axis title, not only in a legend
        axes_text = [
            t
            for g in svg.iter(f"{SVG}g")
            if (g.get("id") or "").startswith("matplotlib.axis")
            for t in _texts(g)
        ]
        assert any("GB/s" in t or "Gb/s" in t for t in axes_text)


def test_compare_page_charts_never_mix_units_either():
    a, b = _load("baremetal_hgx.json"), _load("vm_guest_kvm.json")
    svgs = _svgs(_parse(comparison_html(compare(a, b), a, b)))
    for svg in svgs:
        texts = _texts(svg)
        assert not (any("GB/s" in t for t in texts) and any("Gb/s" in t for t in texts))


def test_mr_and_dmabuf_are_separate_bars():
    report = _load("vm_guest_kvm.json")
    ro = _chart_with(_svgs(_parse(report_html(report, report.findings))), "relaxed ordering off vs on")
    labels = [t for t in _texts(_group(ro, "matplotlib.axis_2")) if t.strip()]
    paths = {
        (str(r.params.memory), str(r.params.reg_path))
        for r in report.results
        if r.status is Status.OK and getattr(r.params, "relaxed_ordering", None) is not None
    }
    assert ("device", "mr") in paths and ("device", "dmabuf") in paths
    assert len(labels) == len(set(labels)) == len(paths)
    assert "device · ibv_reg_mr" in labels and "device · dma-buf" in labels


def _series_groups(svg: ET.Element, kind: str) -> list[ET.Element]:
    return [g for g in svg.iter(f"{SVG}g") if (g.get("id") or "").startswith(f"series-{kind}-")]


def _has_line(group: ET.Element) -> bool:
    """A stroked path outside <defs> (markers are <use> of a path defined in <defs>)."""
    in_defs = {id(p) for d in group.iter(f"{SVG}defs") for p in d.iter(f"{SVG}path")}
    return any(" L " in (p.get("d") or "") for p in group.iter(f"{SVG}path") if id(p) not in in_defs)


def _sized_results(report: Report, unit: str) -> int:
    return sum(
        1
        for r in report.results
        if r.status is Status.OK and r.unit == unit and isinstance(getattr(r.params, "size_bytes", None), int)
    )


def test_two_sizes_are_two_markers_not_a_line():
    report = _load("vm_guest_kvm.json")  # copies at 64 MiB and 256 MiB only
    page = _parse(report_html(report, report.findings))
    chart = _chart_with(_svgs(page), "bandwidth vs size")
    points = _series_groups(chart, "points")
    assert points and not _series_groups(chart, "sweep")
    assert not any(_has_line(g) for g in points)
    assert sum(len(list(g.iter(f"{SVG}use"))) for g in points) == _sized_results(report, "GB/s")


def test_a_real_sweep_is_drawn_as_a_line_through_its_measured_points():
    report = _load("gpu_machine_h200.json")  # copies at four sizes each
    raw = report_html(report, report.findings)
    chart = _chart_with(_svgs(_parse(raw)), "bandwidth vs size")
    sweeps = _series_groups(chart, "sweep")
    assert sweeps and all(_has_line(g) for g in sweeps)
    sized = [r for r in report.results if r.key.startswith("copy_") and getattr(r.params, "mode", None)]
    assert sum(len(list(g.iter(f"{SVG}use"))) for g in sweeps) == len(sized)
    assert "A line joins the points of a sweep" in raw


# ---------------------------------------------------------------------------------------------
# through the CLI
# ---------------------------------------------------------------------------------------------


def test_report_and_compare_html_through_the_cli(tmp_path):
    runner = CliRunner()
    page = tmp_path / "r.html"
    res = runner.invoke(
        app,
        ["report", "--from-report", str(REPORTS / "gpu_machine_h200.json"), "-o", str(tmp_path / "r.json")]
        + ["--html", str(page), "--host", "n1"],
    )
    assert res.exit_code in (0, 1), res.output
    said = " ".join(res.output.split())  # the line wraps to the terminal's width
    assert f"wrote {tmp_path / 'r.json'}, {page}: node n1" in said  # the page is named
    facts = _machine_facts(_parse(page.read_text(encoding="utf-8")))
    assert facts[("GPU 0", "model")] == "NVIDIA H200"
    cmp_page = tmp_path / "c.html"
    res = runner.invoke(
        app,
        [
            "compare",
            str(REPORTS / "baremetal_hgx.json"),
            str(REPORTS / "vm_guest_kvm.json"),
            "--html",
            str(cmp_page),
        ],
    )
    assert res.exit_code == 1, res.output  # the VM's Report has FAIL findings
    assert f"wrote {cmp_page}" in res.output
    parsed = _parse(cmp_page.read_text(encoding="utf-8"))
    assert any(t["class"] == "side-by-side" for t in parsed.tables) and len(_svgs(parsed)) >= 4


def test_compare_rows_without_a_ratio_say_why():
    a, b = _load("baremetal_hgx.json"), _load("gpu_machine_h200.json")  # fixture vs cuda numbers
    comparison = compare(a, b, a_label="bare", b_label="h200")
    raw = comparison_html(comparison, a, b)
    table = next(t for t in _parse(raw).tables if t["rows"] and t["rows"][0][1][-1:] == ["note"])
    rows = [cells for _, cells in table["rows"][1:]]
    assert len(rows) == len(comparison.cases)
    no_ratio = [cells for cells in rows if cells[5] == "-"]
    assert no_ratio and all(cells[6] for cells in no_ratio)
    assert any(cells[6].startswith("not comparable: provider") for cells in no_ratio)
    if not any(c.large for c in comparison.cases):
        assert "No chart: no case measured on both sides by the same provider" in raw


def test_compare_page_shows_every_chart_of_both_reports():
    from gdrdiag.render import plot

    a, b = _load("baremetal_hgx.json"), _load("gpu_machine_h200.json")
    page = _parse(comparison_html(compare(a, b), a, b))
    expected = [
        *plot.size_charts(a.results),
        *plot.size_charts(b.results),
        *(c for r in (a, b) for c in (plot.ro_bars(r.results), plot.gather_ladder(r.results)) if c),
    ]
    assert len(_svgs(page)) == len(expected)  # no deltas chart: no pair of the same provider


def test_report_page_without_matplotlib_keeps_the_machine_and_says_why(monkeypatch):
    from gdrdiag.errors import NotSupported
    from gdrdiag.render import plot

    def no_matplotlib():
        raise NotSupported("plots need matplotlib: pip install 'gdrdiag[plot]'")

    monkeypatch.setattr(plot, "_pyplot", no_matplotlib)
    report = _load("vm_guest_kvm.json")
    raw = report_html(report, report.findings)
    assert "gdrdiag[plot]" in raw and "data:image" not in raw
    assert _machine_facts(_parse(raw))[("Host", "host name")] == report.machine.host.hostname


def test_labels_name_what_tells_cases_apart_and_never_repeat():
    from gdrdiag.model.case import CaseId
    from gdrdiag.model.vocabulary import Bench, Provider
    from gdrdiag.render.chart_data import distinguishing_labels

    def case(key, provider=Provider.PYVERBS, **physics):
        return CaseId(Bench.MR, key, tuple(physics.items()), provider)

    mr_off = case("rdma_write_device_mr", memory="device", reg_path="mr", access=3)
    dmabuf_off = case("rdma_write_device_dmabuf", memory="device", reg_path="dmabuf", access=3)
    dmabuf_on = case("rdma_write_device_dmabuf", memory="device", reg_path="dmabuf", access=3 | 1 << 20)
    assert distinguishing_labels([mr_off, dmabuf_off, dmabuf_on]) == [
        "ibv_reg_mr · RO off",
        "dma-buf · RO off",
        "dma-buf · RO on",
    ]
    soft = case("rdma_write_device_mr", Provider.SOFT, memory="device", reg_path="mr", access=3)
    labels = distinguishing_labels([mr_off, soft, mr_off], with_key=True)
    assert len(set(labels)) == 3 and "(soft)" in labels[1] and labels[2].endswith("#2")


def test_a_size_chart_draws_a_bounded_number_of_series_and_says_how_many_it_left_out():
    from dataclasses import replace

    from gdrdiag.render.chart_data import MAX_SERIES

    report = _load("vm_guest_kvm.json")
    copies = [r for r in report.results if r.key == "copy_h2d_pinned"]  # one case at two sizes
    many = [
        replace(r, params=replace(r.params, mode=f"variant-{i}"))
        for i in range(MAX_SERIES + 5)
        for r in copies
    ]
    raw = report_html(replace(report, results=tuple(many)), ())
    chart = _chart_with(_svgs(_parse(raw)), "bandwidth vs size")
    assert len(_series_groups(chart, "points")) == MAX_SERIES
    assert "5 more series are left out of this chart" in raw


def test_compare_page_marks_cases_not_measured_on_hardware_as_the_text_does():
    """The HTML dropped the [fixture]/[soft] marks and the not-on-hardware line."""
    from gdrdiag.render.compare_table import render_comparison

    a, b = _load("baremetal_hgx.json"), _load("vm_guest_kvm.json")
    comparison = compare(a, b, a_label="bare", b_label="vm")
    text = render_comparison(comparison, all_cases=True, wide=True)
    assert "[fixture]" in text and "not measured on hardware" in text
    raw = comparison_html(comparison, a, b)
    assert "[fixture]" in raw and "were not measured on hardware" in raw
    deltas = next(t for t in _parse(raw).tables if t["rows"] and "params" in t["rows"][0][1])
    delta_rows = [cells for _, cells in deltas["rows"][1:]]
    assert delta_rows and all("[fixture]" in cells[0] for cells in delta_rows)
