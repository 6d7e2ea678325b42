"""CaseId: physics and provider are identity; run settings and status are not."""

import dataclasses
import glob
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.compare import match_cases
from gdrdiag.model.case import CaseId
from gdrdiag.model.params import CopyParams, MrParams, RunSettings
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import AccessFlags, Bench, Direction, MemoryKind, Provider

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


def _ok(key: str, value: float, provider: str = "pyverbs", settings=None, **params) -> BenchResult:
    typed = (CopyParams if key.startswith("copy") else MrParams)(**params)
    return BenchResult(
        key=key,
        status=Status.OK,
        params=typed,
        unit="Gb/s",
        samples=(value,),
        stats=SampleStats.of([value]),
        provider=provider,
        verified=True,
        settings=settings or RunSettings(),
    )


def test_run_settings_do_not_split_a_case():
    a = [
        _ok(
            "rdma_write_device_mr",
            90.0,
            memory=MemoryKind.DEVICE,
            size_bytes=1 << 20,
            qps=4,
            settings=RunSettings(ro_ab=True, duration_s=2.0, port=1),
            landing="gpu",
        )
    ]
    b = [
        _ok(
            "rdma_write_device_mr",
            45.0,
            memory=MemoryKind.DEVICE,
            size_bytes=1 << 20,
            qps=4,
            settings=RunSettings(ro_ab=False, duration_s=5.0, port=2),
            landing="GPU (peermem)",
        )
    ]
    (row,) = match_cases(a, b)
    assert row.ratio == pytest.approx(0.5)
    assert any(s.startswith("ro_ab:") for s in row.settings) and any(
        s.startswith("port:") for s in row.settings
    )
    assert any(s.startswith("landing:") for s in row.settings)


def test_physics_splits_a_case():
    a = [_ok("rdma_write_device_mr", 90.0, memory=MemoryKind.DEVICE, size_bytes=1 << 20, qps=4)]
    b = [_ok("rdma_write_device_mr", 45.0, memory=MemoryKind.DEVICE, size_bytes=1 << 20, qps=8)]
    rows = match_cases(a, b)
    assert len(rows) == 2 and all(r.ratio is None for r in rows)


def test_soft_is_never_paired_with_hardware():
    a = [_ok("rdma_write_pageable_mr", 9.0, provider="soft", memory=MemoryKind.PAGEABLE, size_bytes=65536)]
    b = [
        _ok("rdma_write_pageable_mr", 90.0, provider="pyverbs", memory=MemoryKind.PAGEABLE, size_bytes=65536)
    ]
    (row,) = match_cases(a, b)
    assert row.ratio is None and not row.large
    assert row.not_comparable == "not comparable: provider soft vs pyverbs"
    assert (row.a_value, row.b_value) == (9.0, 90.0)


def test_soft_against_soft_is_labelled_soft_in_compare_output(tmp_path):
    r = Report(
        results=(
            _ok("rdma_write_pageable_mr", 9.0, provider="soft", memory=MemoryKind.PAGEABLE, size_bytes=65536),
        )
    )
    r2 = Report(
        results=(
            _ok("rdma_write_pageable_mr", 3.0, provider="soft", memory=MemoryKind.PAGEABLE, size_bytes=65536),
        )
    )
    (tmp_path / "a.json").write_text(r.to_json())
    (tmp_path / "b.json").write_text(r2.to_json())
    out = CliRunner().invoke(app, ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]).output
    assert "[soft]" in out and "never a NIC or GPU" in out


def test_ok_against_waived_is_one_row_with_the_reason():
    a = [
        _ok(
            "copy_h2d_pinned",
            55.0,
            provider="cuda",
            memory=MemoryKind.PINNED,
            direction=Direction.H2D,
            size_bytes=1 << 30,
        )
    ]
    b = [BenchResult.waived("copy_h2d_pinned", "no CUDA driver here", provider="cuda")]
    (row,) = match_cases(a, b)
    assert (row.a_status, row.b_status) == ("OK", "WAIVED")
    assert row.b_reason == "no CUDA driver here"


def test_waived_with_the_same_params_is_one_row_too():
    a = [
        _ok(
            "copy_h2d_pinned",
            55.0,
            provider="cuda",
            memory=MemoryKind.PINNED,
            direction=Direction.H2D,
            size_bytes=1 << 30,
        )
    ]
    b = [
        BenchResult.waived(
            "copy_h2d_pinned",
            "no GPU",
            provider="cuda",
            params=CopyParams(memory=MemoryKind.PINNED, direction=Direction.H2D, size_bytes=1 << 30),
        )
    ]
    (row,) = match_cases(a, b)
    assert (row.a_status, row.b_status, row.b_reason) == ("OK", "WAIVED", "no GPU")


def test_reports_that_differ_only_in_run_settings_pair_every_case():
    real = Report.from_json((REPORTS / "gpu_machine_h200.json").read_text())
    rerun = [
        dataclasses.replace(
            r, settings=RunSettings(seed=99, iterations=7, device_name="x"), method=r.method + " (rerun)"
        )
        for r in real.results
    ]
    rows = match_cases(real.results, rerun)
    assert len(rows) == len({CaseId.of(r) for r in real.results})
    assert all(r.a_status and r.b_status for r in rows)


def test_compare_is_linear_enough_for_big_reports():
    a = [_ok("rdma_write_pageable_mr", 1.0, memory=MemoryKind.PAGEABLE, size_bytes=s) for s in range(20_000)]
    rows = match_cases(a, list(a))
    assert len(rows) == 20_000 and all(r.ratio == 1.0 for r in rows)


def test_bench_and_provider_vocabulary():
    assert Bench.of_key("mr_reg_device_mr") is Bench.MR and Bench.of_key("copy_blocks") is Bench.COPY
    assert not Provider.SOFT.is_hardware and not Provider.FIXTURE.is_hardware and Provider.CUDA.is_hardware


def test_relaxed_ordering_is_one_bit_of_access():
    on = MrParams(access=AccessFlags.LOCAL_WRITE | AccessFlags.RELAXED_ORDERING)
    assert on.relaxed_ordering is True and MrParams(access=AccessFlags.LOCAL_WRITE).relaxed_ordering is False
    assert MrParams().relaxed_ordering is None


V1_MR = {
    "key": "rdma_write_device_mr",
    "status": "OK",
    "params": {
        "memory": "device",
        "size": 1048576,
        "ro": True,
        "qps": 4,
        "ro_ab": True,
        "location": "GPU memory",
    },
    "metrics": {"msgs_per_s": 1.0},
}


def test_a_v1_result_upgrades_to_typed_params_and_settings():
    import json

    r = Report.from_json(json.dumps({"schema_version": 1, "results": [V1_MR]})).results[0]
    assert r.params == MrParams(
        memory=MemoryKind.DEVICE,
        size_bytes=1 << 20,
        qps=4,
        access=AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.RELAXED_ORDERING,
    )
    assert r.settings.ro_ab is True and r.metrics.msgs_per_s == 1.0


def test_an_unknown_v1_name_is_refused_not_dropped():
    import json

    from gdrdiag.model.serde import SchemaError

    bad = {**V1_MR, "params": {**V1_MR["params"], "warp_speed": 9}}
    with pytest.raises(SchemaError, match="warp_speed"):
        Report.from_json(json.dumps({"schema_version": 1, "results": [bad]}))


GOLDEN = REPORTS / "v1_findings.golden"


@pytest.mark.parametrize("path", sorted(glob.glob(str(REPORTS / "*.json"))), ids=lambda p: Path(p).name)
def test_every_v1_report_loads_and_diagnoses_as_before(path):
    import json

    from gdrdiag.diagnose import diagnose
    from gdrdiag.model.serde import to_jsonable

    report = Report.from_json(Path(path).read_text())
    assert report.schema_version == 2
    expected = json.loads(GOLDEN.read_text())[Path(path).name]
    assert [to_jsonable(f) for f in diagnose(report).findings] == expected
    again = Report.from_json(report.to_json())
    assert again == report


def test_saved_v1_reports_equal_the_same_reports_built_as_v2():
    """The v1 reader is exact: each saved v1 fixture equals the Report the fixture script builds today
    (schema 2), result for result, and diagnoses the same."""
    import importlib.util

    from gdrdiag.diagnose import diagnose

    script = Path(__file__).resolve().parents[2] / "scripts" / "make_fixture_reports.py"
    spec = importlib.util.spec_from_file_location("make_fixture_reports", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, built in mod.build_all().items():
        saved = Report.from_json((REPORTS / name).read_text())
        assert [(r.key, r.params, r.metrics, r.settings, r.samples) for r in saved.results] == [
            (r.key, r.params, r.metrics, r.settings, r.samples) for r in built.results
        ], name
        assert [(f.code, f.severity, f.subject) for f in diagnose(saved).findings] == [
            (f.code, f.severity, f.subject) for f in diagnose(built).findings
        ], name
