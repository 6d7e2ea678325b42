"""report --record/--jsonl/--prometheus, fleet, inspect --check through the CLI."""

import json
import multiprocessing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.node_record import load_records

from .conftest import REPORTS

runner = CliRunner()
VM = str(REPORTS / "vm_guest_kvm.json")
BARE = str(REPORTS / "baremetal_hgx.json")


def test_report_record_from_saved_report(tmp_path):
    res = runner.invoke(
        app, ["report", "--from-report", VM, "--host", "n1", "--record", f"{tmp_path}/{{host}}.json"]
    )
    assert res.exit_code == 1, res.output  # the VM fixture has FAIL findings
    (rec,) = load_records(tmp_path).records
    assert rec.host == "n1" and rec.exit_code == 1 and rec.sku.endswith("VM (QEMU/KVM)")
    again = runner.invoke(
        app, ["report", "--from-report", VM, "--host", "n1", "--record", f"{tmp_path}/{{host}}.json"]
    )
    assert again.exit_code == 2 and "--force" in again.output
    forced = runner.invoke(
        app,
        ["report", "--from-report", BARE, "--host", "n1", "--force", "--record", f"{tmp_path}/{{host}}.json"],
    )
    assert forced.exit_code == 0, forced.output
    assert load_records(tmp_path).records[0].exit_code == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left behind


def test_report_host_from_environment_and_bad_names(tmp_path, monkeypatch):
    monkeypatch.setenv("GDRDIAG_HOST", "env-node")
    res = runner.invoke(app, ["report", "--from-report", BARE, "--jsonl", str(tmp_path / "f.jsonl")])
    assert res.exit_code == 0 and load_records(tmp_path / "f.jsonl").records[0].host == "env-node"
    for bad in ("../x", "a/b", "", "-x"):
        res = runner.invoke(
            app, ["report", "--from-report", BARE, "--host", bad, "--record", f"{tmp_path}/{{host}}.json"]
        )
        assert res.exit_code == 2, (bad, res.output)
        assert res.output.count("\n") == 1 and "Traceback" not in res.output
    res = runner.invoke(app, ["report", "--from-report", BARE])
    assert res.exit_code == 2 and "--record" in res.output


def _writer(args):
    folder, jsonl, i = args
    from typer.testing import CliRunner as R

    from gdrdiag.cli import app as a

    for k in range(5):
        res = R().invoke(
            a,
            [
                "report",
                "--from-report",
                VM if i % 2 else BARE,
                "--host",
                f"node-{i}-{k}",
                "--record",
                f"{folder}/{{host}}.json",
                "--jsonl",
                jsonl,
            ],
        )
        assert res.exit_code in (0, 1), res.output


def test_many_writers_into_one_directory_and_one_jsonl(tmp_path):
    folder = tmp_path / "records"
    folder.mkdir()
    jsonl = str(tmp_path / "all.jsonl")
    with multiprocessing.get_context("fork").Pool(6) as pool:
        pool.map(_writer, [(str(folder), jsonl, i) for i in range(6)])
    per_file = load_records(folder)
    appended = load_records(Path(jsonl))
    assert len(per_file.records) == 30 and not per_file.skipped
    assert len(appended.records) == 30 and not appended.skipped  # no torn or interleaved line


def test_fleet_text_json_html_and_exit_codes(small_fleet, tmp_path):
    folder, manifest = small_fleet
    html = tmp_path / "fleet.html"
    res = runner.invoke(app, ["fleet", str(folder), "--html", str(html)])
    assert res.exit_code == 1
    lines = res.output.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert lines[0].startswith("400 nodes in 5 SKU group(s): 14 to drain, 6 to investigate (5.0 % flagged)")
    assert "ACS-REDIRECT" in res.output and "(group: none)" in res.output
    page = html.read_text()
    assert page.startswith("<!doctype html>") and page.count("data:image/png;base64,") >= 5
    data = json.loads(runner.invoke(app, ["--json", "fleet", str(folder)]).output)
    assert data["nodes"][0]["level"] == "drain" and data["skipped_counts"] == {}
    assert {n["host"] for n in data["nodes"] if n["level"] != "ok"} == {h for h, f in manifest.items() if f}


def test_fleet_html_without_matplotlib(small_fleet, tmp_path, monkeypatch):
    from gdrdiag.errors import NotSupported
    from gdrdiag.render import plot

    def no_mpl():
        raise NotSupported("plots need matplotlib: pip install 'gdrdiag[plot]'")

    monkeypatch.setattr(plot, "_pyplot", no_mpl)
    html = tmp_path / "f.html"
    res = runner.invoke(app, ["fleet", str(small_fleet[0]), "--html", str(html)])
    assert res.exit_code == 1
    page = html.read_text()
    assert "gdrdiag[plot]" in page and "data:image/png" not in page and "ACS-REDIRECT" in page


def test_fleet_healthy_exit_0_and_usage_errors(tmp_path):
    for i in range(4):
        runner.invoke(
            app, ["report", "--from-report", BARE, "--host", f"h{i}", "--record", f"{tmp_path}/{{host}}.json"]
        )
    res = runner.invoke(app, ["fleet", str(tmp_path)])
    assert res.exit_code == 0 and "nothing to drain" in res.output
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "junk.json").write_text("{")
    bad_baseline = tmp_path / "b.toml"
    bad_baseline.write_text("[[sku]]\nmatch = 3\n")
    for args in (
        ["fleet", str(tmp_path / "nope")],
        ["fleet", str(empty)],
        ["fleet", str(tmp_path), "--baseline", str(bad_baseline)],
        ["fleet", str(tmp_path), "--drain-z", "-1", "--investigate-z", "-2"],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert res.output.count("\n") == 1 and res.output.startswith("gdrdiag: error:")


def test_fleet_baseline_flags_a_whole_slow_group(tmp_path):
    for i in range(4):
        runner.invoke(
            app, ["report", "--from-report", VM, "--host", f"v{i}", "--record", f"{tmp_path}/{{host}}.json"]
        )
    baseline = tmp_path / "sku.toml"
    baseline.write_text('[[sku]]\nmatch = "*VM (QEMU/KVM)"\nrdma_device_mr_gbps = 300\n')
    res = runner.invoke(app, ["--json", "fleet", str(tmp_path), "--baseline", str(baseline)])
    data = json.loads(res.output)
    assert res.exit_code == 1 and all(n["level"] == "drain" for n in data["nodes"])
    assert all("below baseline" in " ".join(n["reasons"]) for n in data["nodes"])


def test_prometheus_textfiles_parse_with_the_client_parser(small_fleet, tmp_path):
    parser = pytest.importorskip("prometheus_client.parser")
    node_prom = tmp_path / "node.prom"
    res = runner.invoke(app, ["report", "--from-report", VM, "--host", "n1", "--prometheus", str(node_prom)])
    assert res.exit_code == 1, res.output
    fams = {f.name: f for f in parser.text_string_to_metric_families(node_prom.read_text())}
    metric = {s.labels["metric"]: s.value for s in fams["gdrdiag_node_metric"].samples}
    assert metric["rdma_device_mr_gbps"] == pytest.approx(85.1)
    findings = {s.labels["severity"]: s.value for s in fams["gdrdiag_node_findings"].samples}
    # --from-report re-diagnoses with the current rules: the count is the current diagnosis's.
    from gdrdiag.diagnose import diagnose
    from gdrdiag.model.report import Report

    fails = sum(f.severity.value == "FAIL" for f in diagnose(Report.from_json(Path(VM).read_text())).findings)
    assert fails >= 3
    assert findings["FAIL"] == fails and fams["gdrdiag_node_exit_code"].samples[0].value == 1
    fleet_prom = tmp_path / "fleet.prom"
    res = runner.invoke(app, ["fleet", str(small_fleet[0]), "--prometheus", str(fleet_prom)])
    fams = {f.name: f for f in parser.text_string_to_metric_families(fleet_prom.read_text())}
    levels = {s.labels["level"]: s.value for s in fams["gdrdiag_fleet_nodes"].samples}
    assert levels == {"ok": 380, "investigate": 6, "drain": 14}
    assert len(fams["gdrdiag_fleet_node_level"].samples) == 400
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("fleet.prom.")]  # temp file renamed


def test_inspect_check_exit_codes():
    machines = Path(__file__).resolve().parents[1] / "fixtures" / "machines"
    ok = runner.invoke(app, ["inspect", "--check", "--bundle", str(machines / "c_baremetal_hgx_h100_cx7")])
    assert ok.exit_code == 0 and ok.output.startswith("ready: 4 GPU(s), 4 RDMA device(s)")
    acs = runner.invoke(app, ["inspect", "--check", "--bundle", str(machines / "e_baremetal_acs_redirect")])
    assert acs.exit_code == 1 and acs.output.startswith("NOT READY: ACS-REDIRECT")
    count = runner.invoke(
        app,
        [
            "--json",
            "inspect",
            "--check",
            "--expect-gpus",
            "8",
            "--bundle",
            str(machines / "c_baremetal_hgx_h100_cx7"),
        ],
    )
    data = json.loads(count.output)
    assert (
        count.exit_code == 1 and data["ready"] is False and data["problems"][0].startswith("CHECK-GPU-COUNT")
    )
    usage = runner.invoke(app, ["inspect", "--strict"])
    assert usage.exit_code == 2
    missing = runner.invoke(app, ["inspect", "--check", "--bundle", "/nonexistent.tar.gz"])
    assert missing.exit_code == 2


def _pair_report(path, peer, value):
    from gdrdiag.model.params import MrParams, RunSettings
    from gdrdiag.model.report import Report
    from gdrdiag.model.results import BenchResult, SampleStats, Status
    from gdrdiag.model.vocabulary import AccessFlags, MemoryKind, RegPath

    params = MrParams(
        memory=MemoryKind.DEVICE,
        reg_path=RegPath.MR,
        topology="two_machine",
        role="client",
        mode="bw",
        access=AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.RELAXED_ORDERING,
    )
    result = BenchResult(
        key="rdma_write_device_mr",
        status=Status.OK,
        params=params,
        settings=RunSettings(peer=f"{peer}:18515"),
        unit="Gb/s",
        samples=(value,),
        stats=SampleStats.of([value]),
        provider="pyverbs",
        verified=True,
    )
    path.write_text(Report(command="gdrdiag mr-bench --client (test)", results=(result,)).to_json())


def test_pairwise_results_through_add_results_name_the_common_node(tmp_path):
    hosts = [f"p{i}" for i in range(5)]
    records = tmp_path / "records"
    records.mkdir()
    for i, a in enumerate(hosts):
        peer = hosts[(i + 1) % len(hosts)]
        pair = tmp_path / f"{a}-pair.json"
        _pair_report(pair, peer, 120.0 if "p2" in (a, peer) else 390.0)
        res = runner.invoke(
            app,
            [
                "report",
                "--from-report",
                BARE,
                "--add-results",
                str(pair),
                "--host",
                a,
                "--record",
                f"{records}/{{host}}.json",
            ],
        )
        assert res.exit_code == 0, res.output
    (rec,) = [r for r in load_records(records).records if r.host == "p1"]
    assert [(p.peer, p.metric, p.value) for p in rec.pairs] == [("p2", "pair_rdma_device_gbps", 120.0)]
    res = runner.invoke(app, ["fleet", str(records)])
    assert "pairwise: nodes common to the failing pairs" in res.output
    assert "  p2: in 2 of its 2 pairs that fail (with p1, p3)" in res.output
