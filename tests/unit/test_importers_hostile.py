"""Hostile input to the importers: bounded cost and size; every import writes a Report that reads back."""

import json
import time
from pathlib import Path

import pytest

import gdrdiag.importers
from gdrdiag.errors import UserInputError
from gdrdiag.importers import import_text
from gdrdiag.model.report import Report

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "imported"
MAX_IMPORT_RESULTS = getattr(gdrdiag.importers, "MAX_IMPORT_RESULTS", 10_000)
HOST = (FIX / "ib_write_bw_host.txt").read_text()


def _seconds(text: str, repeats: int = 1) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            import_text(text, "x")
        except UserInputError:
            pass
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.parametrize("filler", ["x", "a:", "Device :\t", " " * 7 + "z"])
def test_a_long_header_line_costs_linear_time(filler):
    """M1: ten times the input costs about ten times the time, not a hundred (generous factor 30)."""
    line = (filler * 2000)[:2000]
    small = _seconds(line + "\n" + HOST, repeats=5)
    big = _seconds(line * 10 + "\n" + HOST, repeats=1)
    assert big <= 30 * small + 0.05, (small, big)


def test_title_variant_with_underscore_bw_and_space_test():
    rows = import_text(HOST.replace("RDMA_Write BW Test", "RDMA_Write_BW Test"), "x")
    assert rows[0].params.test == "write_bw"


def _nvb(cells: list, **extra) -> str:
    tc = {"name": "host_to_device_memcpy_ce", "status": "Passed", "bandwidth_matrix": [cells], **extra}
    return json.dumps({"nvbandwidth": {"testcases": [tc]}})


def test_results_per_import_are_bounded():
    """M2: a matrix of more cells than the limit is one line, not gigabytes of results."""
    with pytest.raises(UserInputError, match="results"):
        import_text(_nvb(["1.0"] * (MAX_IMPORT_RESULTS + 1)), "x")


PERFTEST_JSON = (FIX / "perftest_write.json").read_text()


def _perftest(**changes) -> str:
    data = json.loads(PERFTEST_JSON)
    for where, values in changes.items():
        data[where].update(values)
    return json.dumps(data)


@pytest.mark.parametrize(
    "text",
    [
        _nvb(["Infinity"]),
        _nvb(["1e309"]),
        _nvb(["NaN"]),
        _nvb(["55.0"], sum=10**400),
        _nvb(["55.0"], bufferSize=2**63),
        _nvb(["55.0"], bufferSize=2**1100),
        _nvb(["55.0"]).replace('"55.0"', "1e309"),
        _nvb(["55.0"]).replace('"55.0"', "Infinity"),
        _nvb(["55.0"]).replace('"55.0"', str(2**1100)),
        _perftest(results={"MsgSize": 2**63}),
        _perftest(results={"MsgSize": 2**1100}),
        _perftest(results={"BW_average": 2**1100}),
        _perftest(results={"n_iterations": 2**64}),
        _perftest(test_info={"Device": 5}),
        _perftest(test_info={"Connection_type": ["RC"]}),
        _perftest(test_info={"cuda_device": 2**70}),
        _perftest(test_info={"TX_depth": 2**63}),
        PERFTEST_JSON.replace('"BW_average": 10049.81', '"BW_average": Infinity'),
        PERFTEST_JSON.replace('"BW_average": 10049.81', '"BW_average": 1e309'),
        '{"a": ' * 1000 + "1" + "}" * 1000,
        '{"nvbandwidth": {"testcases": ' + "[" * 1000 + "]" * 1000 + "}}",
        HOST.replace("1048576    5000", "1" + "0" * 400 + "    5000"),
        HOST.replace("395.62", "1e309"),
        HOST.replace("395.62", "inf"),
    ],
)
def test_numbers_that_would_not_read_back_are_one_user_error(text):
    """M2: non-finite or overflowing numbers, non-string names, deep JSON: one line, no traceback."""
    with pytest.raises(UserInputError) as exc:
        import_text(text, "x")
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(
    "name",
    ["ib_write_bw_cuda.txt", "ib_read_bw_sweep.txt", "perftest_write.json", "nvbandwidth.json"],
)
def test_every_import_reads_back_as_a_report(name):
    from gdrdiag.cli.reporting import results_report

    rows = import_text((FIX / name).read_text(), name)
    report = results_report("import", rows, machine=None)
    assert Report.from_json(report.to_json()).results == report.results


@pytest.mark.parametrize("depth", [900, 990])
def test_nested_values_in_text_fields_are_not_printed(depth):
    """A deeply nested 'error', 'status' or 'test' is refused or ignored, never repr()'d into a crash."""
    nested = "[" * depth + "]" * depth
    texts = [
        '{"nvbandwidth": {"testcases": [{"name": "host_to_device_memcpy_ce", "status": "Error", "error": '
        + nested
        + "}]}}",
        '{"nvbandwidth": {"testcases": [{"name": "host_to_device_memcpy_ce", "status": ' + nested + "}]}}",
        '{"test_info": {"test": ' + nested + '}, "results": {}}',
    ]
    for text in texts:
        try:
            rows = import_text(text, "x")
        except UserInputError as exc:
            assert "\n" not in str(exc)
        else:
            assert all(len(r.reason or "") < 400 for r in rows)
