"""``gdrdiag peer-bench`` without the hardware: --list, selectors, WAIVED with the reason, bad input."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.errors import NotSupported

runner = CliRunner()
REASON = "no NVIDIA driver: made unavailable by the test"


@pytest.fixture
def no_cuda(monkeypatch):
    from gdrdiag.hw import cuda

    def init() -> None:
        raise NotSupported(REASON)

    monkeypatch.setattr(cuda, "init", init)


@pytest.fixture
def one_gpu(monkeypatch):
    from gdrdiag.hw import cuda

    monkeypatch.setattr(cuda, "init", lambda: None)
    monkeypatch.setattr(cuda, "device_count", lambda: 1)


def test_list_names_every_case_and_why_it_is_waived_here(no_cuda):
    res = runner.invoke(app, ["--json", "peer-bench", "--list"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    keys = [r["key"] for r in rows]
    assert keys == [
        "peer_ce_off",
        "peer_ce_on",
        "peer_ce_bidir_off",
        "peer_ce_bidir_on",
        "peer_sm_read",
        "peer_sm_write",
        "peer_ce_reference",
        "peer_lat_ce_off",
        "peer_lat_ce_on",
        "peer_lat_sm_on",
        "peer_all_to_one",
        "peer_all_to_all",
        "peer_one_to_all",
        "peer_blocks",
    ]
    assert all(REASON in r["here"] for r in rows)


def test_list_on_one_gpu_says_two_are_needed(one_gpu):
    res = runner.invoke(app, ["--json", "peer-bench", "--list"])
    assert res.exit_code == 0, res.output
    assert all("two or more GPUs" in r["here"] for r in json.loads(res.stdout))


def test_no_gpu_waives_the_selected_cases_and_exits_0(no_cuda):
    res = runner.invoke(app, ["--json", "peer-bench", "peer_ce", "--quiet"])
    assert res.exit_code == 0, res.output
    results = json.loads(res.stdout)["results"]
    assert [r["key"] for r in results] == [
        "peer_ce_off",
        "peer_ce_on",
        "peer_ce_bidir_off",
        "peer_ce_bidir_on",
        "peer_ce_reference",
    ]
    assert all(r["status"] == "WAIVED" and REASON in r["reason"] for r in results)


def test_one_gpu_waives_with_the_count(one_gpu):
    res = runner.invoke(app, ["--json", "peer-bench", "peer_sm_*", "--quiet"])
    assert res.exit_code == 0, res.output
    results = json.loads(res.stdout)["results"]
    assert [r["key"] for r in results] == ["peer_sm_read", "peer_sm_write"]
    assert all("sees 1" in r["reason"] for r in results)


@pytest.mark.parametrize(
    "args",
    [
        ["nope"],
        ["--pairs", "0-1"],
        ["--pairs", "1:1"],
        ["--sizes", "17"],
        ["--rounds", "0"],
    ],
)
def test_bad_input_is_a_one_line_usage_error(no_cuda, args):
    res = runner.invoke(app, ["peer-bench", *args])
    assert res.exit_code == 2, res.output
