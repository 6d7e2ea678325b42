"""bandwidthTest, p2pBandwidthLatencyTest, nccl-tests, nvbandwidth GPU<->GPU testcases: typed results."""

import json
from pathlib import Path

import pytest

from gdrdiag.errors import UserInputError
from gdrdiag.importers import detect, import_text
from gdrdiag.importers.bandwidth_test import MIB_TO_GB
from gdrdiag.model.params import ImportedParams
from gdrdiag.model.results import Status
from gdrdiag.model.vocabulary import MemoryKind, Provider

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "imported"


def _load(name):
    return import_text((FIX / name).read_text(), name)


def _text(name):
    return (FIX / name).read_text()


# --- bandwidthTest -----------------------------------------------------------------------------


def test_bandwidth_test_quick_mode_gb_per_s():
    rows = _load("bandwidthTest_quick.txt")
    assert detect(_text("bandwidthTest_quick.txt")) == "bandwidthTest-text"
    got = [
        (r.key, r.params.direction, r.params.memory, r.params.size_bytes, r.params.gpu, r.value) for r in rows
    ]
    assert got == [
        ("bandwidthTest_h2d", "h2d", MemoryKind.PINNED, 32_000_000, 0, 55.2),
        ("bandwidthTest_d2h", "d2h", MemoryKind.PINNED, 32_000_000, 0, 55.4),
        ("bandwidthTest_d2d", "d2d", MemoryKind.DEVICE, 32_000_000, 0, 2001.5),
    ]
    for r in rows:
        p = r.params
        assert isinstance(p, ImportedParams) and (p.tool, p.test, r.unit) == (
            "bandwidthTest",
            "bandwidthTest",
            "GB/s",
        )
        assert r.provider == Provider.BANDWIDTH_TEST.value
    assert "twice" in rows[2].description


def test_bandwidth_test_old_mb_per_s_is_mib_and_range_mode_keeps_every_size():
    rows = _load("bandwidthTest_mbs_range.txt")
    assert [r.params.size_bytes for r in rows] == [1048576, 9437184, 17825792, 26214400]
    assert all(r.params.memory is MemoryKind.PAGEABLE and r.params.gpu == 1 for r in rows)
    assert rows[0].value == pytest.approx(6342.8 * (1 << 20) / 1e9, abs=1e-4)
    assert MIB_TO_GB == pytest.approx(0.001048576) and "2^20" in rows[0].method


def test_bandwidth_test_csv_over_all_devices_has_no_single_gpu():
    rows = _load("bandwidthTest_csv_all_devices.txt")
    assert [(r.params.direction, r.value, r.params.gpu) for r in rows] == [
        ("h2d", 48.6, None),
        ("d2h", 50.1, None),
        ("d2d", 2689.0, None),
    ]
    assert "sum over 2 devices" in rows[0].description


def test_bandwidth_test_shmoo_dots_and_write_combined():
    text = (
        " Device 0: NVIDIA H100 80GB HBM3\n Shmoo Mode\n\n................\n"
        " Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n"
        " Write-Combined Memory Writes are Enabled   Transfer Size (Bytes)\tBandwidth(GB/s)\n"
        "   1000\t\t\t\t1.2\n   2000\t\t\t\t2.3\n   64000000\t\t\t55.1\n\n"
    )
    rows = import_text(text, "s")
    assert [r.params.size_bytes for r in rows] == [1000, 2000, 64_000_000]
    assert all(r.params.memory is MemoryKind.PINNED_WC for r in rows)


# --- p2pBandwidthLatencyTest -------------------------------------------------------------------


def _cell(rows, key, gpu, peer):
    (r,) = [r for r in rows if r.key == key and r.params.gpu == gpu and r.params.peer_gpu == peer]
    return r


def test_p2p_matrices_one_result_per_ordered_pair():
    rows = _load("p2pBandwidthLatencyTest_4gpu.txt")
    assert detect(_text("p2pBandwidthLatencyTest_4gpu.txt")) == "p2pBandwidthLatencyTest-text"
    keys = {r.key for r in rows}
    assert keys == {
        "p2p_unidirectional_disabled",
        "p2p_unidirectional_enabled",
        "p2p_unidirectional_read_enabled",
        "p2p_bidirectional_disabled",
        "p2p_bidirectional_enabled",
        "p2p_latency_disabled",
        "p2p_latency_cpu_disabled",
        "p2p_latency_enabled",
        "p2p_latency_cpu_enabled",
        "p2p_latency_read_enabled",
        "p2p_latency_read_cpu_enabled",
    }
    assert len(rows) == 11 * 16
    assert all(r.params.direction == "d2d" and r.provider == "p2pBandwidthLatencyTest" for r in rows)
    w = _cell(rows, "p2p_unidirectional_enabled", 0, 1)
    assert (w.value, w.unit, w.params.peer_access, w.params.test) == (24.43, "GB/s", True, "unidirectional")
    cannot = _cell(rows, "p2p_unidirectional_enabled", 0, 2)
    assert cannot.params.peer_access is False and "CANNOT" in cannot.description
    off = _cell(rows, "p2p_unidirectional_disabled", 1, 0)
    assert off.params.peer_access is False
    diag = _cell(rows, "p2p_unidirectional_disabled", 2, 2)
    assert diag.params.peer_access is None and diag.value > 1000
    read = _cell(rows, "p2p_unidirectional_read_enabled", 1, 0)
    assert "data 0 -> 1" in read.description
    bi = _cell(rows, "p2p_bidirectional_enabled", 2, 3)
    assert bi.params.test == "bidirectional" and bi.value == 45.54


def test_p2p_latency_in_us_gpu_and_cpu_tables():
    rows = _load("p2pBandwidthLatencyTest_4gpu.txt")
    lat = _cell(rows, "p2p_latency_enabled", 0, 1)
    assert lat.unit == "us" and lat.metrics.latency_us == lat.value and lat.params.size_bytes == 16
    cpu = _cell(rows, "p2p_latency_cpu_enabled", 0, 1)
    assert cpu.params.test == "latency_cpu" and cpu.value != lat.value


def test_p2p_truncated_matrix_is_one_line():
    text = _text("p2pBandwidthLatencyTest_4gpu.txt")
    cut = text[: text.index("     2  17.79  17.74") + 20]
    with pytest.raises(UserInputError) as exc:
        import_text(cut, "x")
    assert "cells" in str(exc.value) and "\n" not in str(exc.value)


# --- nccl-tests ------------------------------------------------------------------------------


def test_nccl_text_out_of_place_busbw_with_ranks_and_collective():
    rows = _load("nccl_all_reduce_8gpu.txt")
    assert detect(_text("nccl_all_reduce_8gpu.txt")) == "nccl-tests-text"
    assert len(rows) == 14 and all(r.status is Status.OK for r in rows)
    r = next(r for r in rows if r.params.size_bytes == 33554432)
    p = r.params
    assert (p.tool, p.collective, p.ranks, p.test) == ("nccl-tests", "all_reduce", 8, "all_reduce_perf")
    assert (r.key, r.value, r.unit) == ("nccl_all_reduce", 314.58, "GB/s")
    m = r.metrics
    assert (m.algbw_gbytes_per_s, m.busbw_gbytes_per_s, m.latency_us) == (179.76, 314.58, 186.66)
    assert r.verified is True


def test_nccl_old_text_without_collective_line_takes_it_from_the_file_name():
    rows = _load("nccl_all_gather_2nodes.txt")
    assert {(r.params.collective, r.params.ranks) for r in rows} == {("all_gather", 16)}
    assert [r.params.size_bytes for r in rows][:2] == [1048576, 2097152]
    unnamed = import_text(_text("nccl_all_gather_2nodes.txt"), "run.log")
    assert unnamed[0].params.collective is None and unnamed[0].key == "nccl_collective"


def test_nccl_wrong_elements_are_an_error_result():
    text = _text("nccl_all_reduce_8gpu.txt").replace(
        "186.66  179.76  314.58       0", "186.66  179.76  314.58      12"
    )
    bad = [r for r in import_text(text, "x") if r.status is Status.ERROR]
    assert len(bad) == 1 and "12 wrong elements" in bad[0].reason


def test_nccl_json_output():
    rows = _load("nccl_reduce_scatter.json")
    assert detect(_text("nccl_reduce_scatter.json")) == "nccl-tests-json"
    assert [r.params.size_bytes for r in rows] == [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28]
    r = rows[-1]
    data = json.loads(_text("nccl_reduce_scatter.json"))["results"][-1]["out_of_place"]
    assert (r.params.collective, r.params.ranks) == ("reduce_scatter", 4)
    assert (r.value, r.metrics.algbw_gbytes_per_s, r.metrics.latency_us) == (
        data["bus_bw"],
        data["alg_bw"],
        data["time"],
    )
    assert "NCCL_DEBUG" not in json.dumps([r.description for r in rows])


@pytest.mark.parametrize(
    "text",
    [
        _text("nccl_all_reduce_8gpu.txt").split("           8             2")[0],
        _text("nccl_all_reduce_8gpu.txt").replace("  24.00    0.00    0.00       0", "  24.00"),
        _text("nccl_all_reduce_8gpu.txt").replace("179.76", "1e309"),
        '{"nccl_version": 22703, "results": [{"size": 8, "out_of_place": {"time": "nan"}}]}',
        '{"nccl_version": 22703, "results": [{"count": 8}]}',
        '{"nccl_version": 22703, "results": []}',
    ],
)
def test_nccl_bad_input_is_one_user_error(text):
    with pytest.raises(UserInputError) as exc:
        import_text(text, "all_reduce.txt")
    assert "\n" not in str(exc.value)


# --- nvbandwidth GPU<->GPU -----------------------------------------------------------------------


def test_nvbandwidth_device_to_device_row_is_gpu_column_is_peer():
    rows = _load("nvbandwidth_d2d.json")
    write = [r for r in rows if r.key == "nvbandwidth_device_to_device_memcpy_write_ce"]
    assert len(write) == 12 and {(r.params.gpu, r.params.peer_gpu) for r in write} == {
        (i, j) for i in range(4) for j in range(4) if i != j
    }
    assert all(r.params.direction == "d2d" and r.params.peer_access for r in write)
    assert "data row -> column" in write[0].description
    doc = json.loads(_text("nvbandwidth_d2d.json"))["nvbandwidth"]["testcases"][0]["bandwidth_matrix"]
    w21 = next(r for r in write if (r.params.gpu, r.params.peer_gpu) == (2, 1))
    assert w21.value == float(doc[2][1])
    read = [r for r in rows if r.key == "nvbandwidth_device_to_device_memcpy_read_ce"]
    assert "data column -> row" in read[0].description


def test_nvbandwidth_all_to_host_host_to_all_and_local_copy():
    rows = _load("nvbandwidth_d2d.json")
    by_key = {}
    for r in rows:
        by_key.setdefault(r.key, []).append(r)
    assert [r.params.direction for r in by_key["nvbandwidth_all_to_host_memcpy_ce"]] == ["d2h"] * 4
    assert [r.params.gpu for r in by_key["nvbandwidth_host_to_all_memcpy_ce"]] == [0, 1, 2, 3]
    local = by_key["nvbandwidth_device_local_copy"]
    assert all(r.params.peer_gpu == r.params.gpu and r.params.direction == "d2d" for r in local)
    assert "nvbandwidth_device_to_device_bidirectional_memcpy_read_ce" not in by_key
    assert by_key["nvbandwidth_device_to_device_memcpy_write_sm"][0].status is Status.WAIVED


def test_p2p_disabled_rows_are_a_baseline_and_devices_are_facts():
    rows = _load("p2pBandwidthLatencyTest_4gpu.txt")
    off = _cell(rows, "p2p_unidirectional_disabled", 0, 1)
    assert off.params.baseline and "by design" in off.params.baseline and off.params.can_access_peer is True
    on = _cell(rows, "p2p_unidirectional_enabled", 0, 1)
    assert on.params.baseline is None and on.params.peer_access is True
    cannot = _cell(rows, "p2p_unidirectional_enabled", 0, 2)
    assert cannot.params.can_access_peer is False and cannot.params.baseline is None
    assert _cell(rows, "p2p_unidirectional_disabled", 2, 2).params.baseline is None  # the diagonal
    assert (off.params.device_name, off.params.gpu_bdf) == ("NVIDIA A100-PCIE-40GB", "0000:17:00.0")
    assert _cell(rows, "p2p_latency_cpu_disabled", 0, 1).unit == "us"
