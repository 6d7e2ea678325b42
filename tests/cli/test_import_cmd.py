"""gdrdiag import on each format, merged with a bundle; bad input one line, exit 2; exit 1 on FAIL."""

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.model.report import Report

ROOT = Path(__file__).resolve().parents[1] / "fixtures"
FIX = ROOT / "imported"
VM_BUNDLE = ROOT / "machines" / "d_kvm_h100_cx7_vf"
runner = CliRunner()


@pytest.mark.parametrize(
    "name",
    [
        "ib_write_bw_host.txt",
        "ib_read_bw_sweep.txt",
        "ib_send_bw_dmabuf.txt",
        "perftest_write.json",
        "nvbandwidth.json",
        "nvbandwidth_d2d.json",
        "bandwidthTest_quick.txt",
        "bandwidthTest_mbs_range.txt",
        "bandwidthTest_csv_all_devices.txt",
        "p2pBandwidthLatencyTest_4gpu.txt",
        "nccl_all_reduce_8gpu.txt",
        "nccl_all_gather_2nodes.txt",
        "nccl_reduce_scatter.json",
    ],
)
def test_each_format_imports_into_a_report(tmp_path, name):
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["import", str(FIX / name), "-o", str(out)])
    assert res.exit_code in (0, 1), res.output
    rep = Report.from_json(out.read_text())
    providers = {"perftest", "nvbandwidth", "bandwidthTest", "p2pBandwidthLatencyTest", "nccl-tests"}
    assert rep.results and all(r.provider in providers for r in rep.results)
    assert "no machine facts" in res.output


def test_import_with_bundle_is_judged_against_the_machine(tmp_path):
    out = tmp_path / "r.json"
    res = runner.invoke(
        app,
        [
            "import",
            str(FIX / "ib_write_bw_cuda.txt"),
            str(FIX / "ib_write_bw_host.txt"),
            "--bundle",
            str(VM_BUNDLE),
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 1, res.output
    rep = Report.from_json(out.read_text())
    assert rep.machine is not None and rep.machine.virt.is_vm
    assert rep.findings[0].code == "CAUSE-RO-NOT-HONOURED"
    again = runner.invoke(app, ["diagnose", str(out)])
    assert again.exit_code == 1 and "CAUSE-RO-NOT-HONOURED" in again.output


def test_import_into_a_saved_report(tmp_path):
    out = tmp_path / "r.json"
    res = runner.invoke(
        app,
        [
            "--json",
            "import",
            str(FIX / "nvbandwidth.json"),
            "--into",
            str(ROOT / "reports" / "baremetal_hgx.json"),
            "-o",
            str(out),
        ],
    )
    data = json.loads(res.output)
    assert any(r["provider"] == "nvbandwidth" for r in data["results"])
    assert any(r["provider"] == "fixture" for r in data["results"])


@pytest.mark.parametrize("content", ["truncated", "not json {", '{"a": 1}', ""])
def test_bad_input_is_one_line_exit_2(tmp_path, content):
    path = FIX / "truncated.txt" if content == "truncated" else tmp_path / "bad.txt"
    if content != "truncated":
        path.write_text(content)
    res = runner.invoke(app, ["import", str(path)])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in res.output


def test_missing_file_and_missing_bundle_exit_2(tmp_path):
    assert runner.invoke(app, ["import", str(tmp_path / "nope.txt")]).exit_code == 2
    res = runner.invoke(
        app, ["import", str(FIX / "ib_write_bw_host.txt"), "--bundle", str(tmp_path / "nope")]
    )
    assert res.exit_code == 2


def test_diagnose_and_report_exit_1_on_a_failed_measurement(tmp_path):
    from tests.unit.diagnosis_scenarios import failed_measurement

    path = tmp_path / "failed.json"
    path.write_text(failed_measurement().to_json())
    res = runner.invoke(app, ["diagnose", str(path)])
    assert res.exit_code == 1 and "MEASURE-FAILED" in res.output
    res = runner.invoke(app, ["report", "--from-report", str(path), "-o", str(tmp_path / "out.json")])
    assert res.exit_code == 1, res.output


def _one_error_line(res) -> str:
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and "Traceback" not in res.output, res.output
    return lines[0]


def test_into_without_output_writes_back_into_the_report(tmp_path):
    target = tmp_path / "r.json"
    target.write_text((ROOT / "reports" / "baremetal_hgx.json").read_text())
    before = len(Report.from_json(target.read_text()).results)
    res = runner.invoke(app, ["import", str(FIX / "nvbandwidth.json"), "--into", str(target)])
    assert res.exit_code in (0, 1), res.output
    assert f"wrote {target}" in " ".join(res.output.split())
    after = Report.from_json(target.read_text())
    assert len(after.results) > before and any(r.provider == "nvbandwidth" for r in after.results)


def test_a_perftest_device_absent_from_the_bundle_is_one_warning(tmp_path):
    res = runner.invoke(
        app,
        [
            "import",
            str(FIX / "ib_read_bw_sweep.txt"),
            "--bundle",
            str(VM_BUNDLE),
            "-o",
            str(tmp_path / "r.json"),
        ],
    )
    assert res.exit_code in (0, 1), res.output
    warnings = [ln for ln in res.output.splitlines() if "mlx5_1" in ln]
    assert len(warnings) == 1 and "warning" in warnings[0] and "mlx5_0" in warnings[0]
    quiet = runner.invoke(app, ["import", str(FIX / "ib_write_bw_host.txt"), "--bundle", str(VM_BUNDLE)])
    assert "warning" not in quiet.output


def test_the_same_file_twice_is_refused(tmp_path):
    out = tmp_path / "r.json"
    line = _one_error_line(
        runner.invoke(
            app, ["import", str(FIX / "nvbandwidth.json"), str(FIX / "nvbandwidth.json"), "-o", str(out)]
        )
    )
    assert "twice" in line and not out.exists()
    copy = tmp_path / "copy.json"
    copy.write_text((FIX / "nvbandwidth.json").read_text())
    line = _one_error_line(runner.invoke(app, ["import", str(FIX / "nvbandwidth.json"), str(copy)]))
    assert "twice" in line or "same" in line


def test_a_large_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.truncate(17 * 1024 * 1024)

    def no_whole_reads(*args, **kwargs):
        raise AssertionError("the whole file was read")

    monkeypatch.setattr(Path, "read_text", no_whole_reads)
    monkeypatch.setattr(Path, "read_bytes", no_whole_reads)
    line = _one_error_line(runner.invoke(app, ["import", str(big)]))
    assert "larger than" in line


def test_a_file_larger_than_memory_is_one_line(tmp_path):
    huge = tmp_path / "huge.txt"
    with open(huge, "wb") as f:
        f.truncate(1 << 40)  # sparse: one TiB that takes no disk
    t0 = time.perf_counter()
    line = _one_error_line(runner.invoke(app, ["import", str(huge)]))
    assert "larger than" in line and time.perf_counter() - t0 < 10


def test_hostile_numbers_exit_2_and_write_nothing(tmp_path):
    bad = tmp_path / "nvb.json"
    bad.write_text(
        '{"nvbandwidth": {"testcases": [{"name": "host_to_device_memcpy_ce", "status": "Passed", '
        '"bandwidth_matrix": [[1e309]]}]}}'
    )
    out = tmp_path / "r.json"
    _one_error_line(runner.invoke(app, ["import", str(bad), "-o", str(out)]))
    assert not out.exists()
    deep = tmp_path / "deep.json"
    deep.write_text('{"a": ' * 1000 + "1" + "}" * 1000)
    _one_error_line(runner.invoke(app, ["import", str(deep), "-o", str(out)]))
    assert not out.exists()


def test_gpu_tool_outputs_with_a_bundle_and_diagnose_again(tmp_path):
    out = tmp_path / "r.json"
    files = ["bandwidthTest_quick.txt", "p2pBandwidthLatencyTest_4gpu.txt", "nccl_all_reduce_8gpu.txt"]
    res = runner.invoke(
        app, ["import", *[str(FIX / f) for f in files], "--bundle", str(VM_BUNDLE), "-o", str(out)]
    )
    assert res.exit_code in (0, 1), res.output
    # the p2p sample ran on 4 A100s, the bundle is a 1-H100 VM: one line says so, nothing else warns
    (warned,) = [ln for ln in res.output.splitlines() if "warning" in ln]
    assert "names 4 GPU(s)" in warned and "not the machine the tool ran on" in warned
    rep = Report.from_json(out.read_text())
    assert {r.provider for r in rep.results} == {"bandwidthTest", "p2pBandwidthLatencyTest", "nccl-tests"}
    again = runner.invoke(app, ["diagnose", str(out)])
    assert again.exit_code in (0, 1) and "Traceback" not in again.output


def test_the_same_file_into_the_same_report_twice_is_refused(tmp_path):
    target = tmp_path / "r.json"
    target.write_text((ROOT / "reports" / "baremetal_hgx.json").read_text())
    first = runner.invoke(app, ["import", str(FIX / "nccl_all_reduce_8gpu.txt"), "--into", str(target)])
    assert first.exit_code in (0, 1), first.output
    before = target.read_text()
    line = _one_error_line(
        runner.invoke(app, ["import", str(FIX / "nccl_all_reduce_8gpu.txt"), "--into", str(target)])
    )
    assert "already imported" in line and target.read_text() == before
