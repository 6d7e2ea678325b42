"""Importers: each supported format into typed results; malformed or truncated input is refused."""

from pathlib import Path

import pytest

from gdrdiag.errors import UserInputError
from gdrdiag.importers import detect, import_text
from gdrdiag.importers.perftest import MB_TO_GBIT
from gdrdiag.model.params import ImportedParams
from gdrdiag.model.results import Status
from gdrdiag.model.vocabulary import AccessFlags, MemoryKind, Provider, RegPath

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "imported"


def _load(name):
    return import_text((FIX / name).read_text(), name)


def test_perftest_text_gpu_memory_with_ro_from_header_lines():
    (r,) = _load("ib_write_bw_cuda.txt")
    p = r.params
    assert isinstance(p, ImportedParams) and r.provider == Provider.PERFTEST.value
    assert (p.test, p.size_bytes, p.qps, p.tx_depth, p.gpu) == ("write_bw", 1 << 20, 4, 128, 0)
    assert p.memory is MemoryKind.DEVICE and p.reg_path is RegPath.MR
    assert p.access & AccessFlags.RELAXED_ORDERING
    assert (r.value, r.unit, r.metrics.peak_value, p.device_name) == (84.31, "Gb/s", 85.12, "mlx5_0")


def test_perftest_text_dmabuf_send_without_ro():
    (r,) = _load("ib_send_bw_dmabuf.txt")
    p = r.params
    assert (p.test, p.memory, p.reg_path, p.gpu) == ("send_bw", MemoryKind.DEVICE, RegPath.DMABUF, 1)
    assert not p.access & AccessFlags.RELAXED_ORDERING


def test_perftest_text_sweep_in_mb_per_s_becomes_gbit():
    rows = _load("ib_read_bw_sweep.txt")
    assert [r.params.size_bytes for r in rows] == [65536, 131072, 262144]
    assert rows[0].value == pytest.approx(45102.37 * MB_TO_GBIT, rel=1e-6)
    assert all(r.params.memory is MemoryKind.PAGEABLE and r.params.test == "read_bw" for r in rows)
    assert "converted from perftest MB/sec" in rows[0].method


def test_perftest_json():
    (r,) = _load("perftest_write.json")
    assert detect((FIX / "perftest_write.json").read_text()) == "perftest-json"
    assert r.params.memory is MemoryKind.DEVICE and r.params.reg_path is None and r.params.gpu == 0
    assert r.value == pytest.approx(10049.81 * MB_TO_GBIT, rel=1e-6)
    gbits = import_text((FIX / "perftest_write.json").read_text(), perftest_gbits=True)
    assert gbits[0].value == pytest.approx(10049.81)


def test_nvbandwidth_json_one_result_per_measured_cell():
    rows = _load("nvbandwidth.json")
    ok = [(r.key, r.params.gpu, r.params.peer_gpu, r.value) for r in rows if r.status is Status.OK]
    assert ok == [
        ("nvbandwidth_host_to_device_memcpy_ce", 0, None, 55.31),
        ("nvbandwidth_host_to_device_memcpy_ce", 1, None, 55.12),
        ("nvbandwidth_device_to_host_memcpy_ce", 0, None, 55.72),
        ("nvbandwidth_device_to_device_memcpy_read_ce", 0, 1, 276.1),
        ("nvbandwidth_device_to_device_memcpy_read_ce", 1, 0, 276.3),
    ]
    waived = [r for r in rows if r.status is Status.WAIVED]
    assert [r.key for r in waived] == ["nvbandwidth_host_to_device_memcpy_sm"] and "Waived" in waived[
        0
    ].reason
    assert all(r.provider == Provider.NVBANDWIDTH.value for r in rows)
    assert [r.params.direction for r in rows if r.params.gpu == 0] == ["h2d", "d2h", "d2d"]
    d2d = next(r for r in rows if r.params.direction == "d2d")
    assert d2d.params.memory is MemoryKind.DEVICE and d2d.params.peer_access is True
    assert "data column -> row" in d2d.description


@pytest.mark.parametrize(
    "text",
    [
        (FIX / "truncated.txt").read_text(),
        (FIX / "ib_write_bw_host.txt").read_text().split(" #bytes")[0],
        '{"test_info": {"test": "RDMA_Write_BW_Test"}, "results": {"MsgSize": 1}}',
        '{"test_info": {"test": "RDMA_Write_Lat_Test"}, "results": {}}',
        '{"nvbandwidth": {"testcases": [{"name": "host_to_device_memcpy_ce", "status": "Passed"}]}}',
        '{"nvbandwidth": {"testcases": [{"name": "host_to_device_memcpy_ce", "status": "Passed", '
        '"bandwidth_matrix": [["fast"]]}]}}',
        '{"nvbandwidth": ',
        "hello",
        "",
    ],
)
def test_malformed_or_truncated_input_is_one_user_error(text):
    with pytest.raises(UserInputError) as exc:
        import_text(text, "x")
    assert "\n" not in str(exc.value)
