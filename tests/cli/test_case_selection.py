"""The case registry through the CLI: --list, selectors that run just those cases, bad selectors."""

import json

import pytest
from typer.testing import CliRunner

from gdrdiag.bench.registry import Capabilities, copy_registry, gather_registry, mr_registry
from gdrdiag.cli import app
from gdrdiag.errors import UserInputError

runner = CliRunner()


def _json(args):
    result = runner.invoke(app, ["--json", *args])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize(
    ("command", "registry"),
    [
        ("copy-bench", copy_registry()),
        ("gather-bench", gather_registry()),
        ("mr-bench", mr_registry()),
    ],
)
def test_list_names_every_registered_case(command, registry):
    code, rows = _json([command, "--list"])
    assert code == 0
    assert [r["key"] for r in rows] == [c.key for c in registry.cases]
    assert all(r["description"] and r["here"] for r in rows)


def test_list_as_text_numbers_the_waived_reasons():
    out = runner.invoke(app, ["copy-bench", "--list"]).stdout
    assert "copy_h2d_pinned" in out and "copy_blocks" in out


@pytest.mark.parametrize("command", ["copy-bench", "gather-bench", "mr-bench"])
def test_a_selector_that_matches_nothing_is_one_line_and_exit_2(command):
    result = runner.invoke(app, [command, "no_such_case"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "no_such_case" in lines[0] and "--list" in lines[0]


def test_copy_selectors_run_just_those_cases():
    code, report = _json(["copy-bench", "copy_d2h_pageable", "copy_overlap"])
    assert code == 0
    assert [r["key"] for r in report["results"]] == ["copy_d2h_pageable", "copy_overlap"]


def test_mr_selector_runs_just_that_case_on_the_soft_provider():
    code, report = _json(
        ["mr-bench", "--provider", "soft", "rdma_write_pageable_mr", "-n", "100", "--repeats", "1"]
    )
    assert code == 0
    assert {r["key"] for r in report["results"]} == {"rdma_write_pageable_mr"}
    assert all(r["provider"] == "soft" for r in report["results"])


def test_mr_selection_of_two_modes_is_refused():
    result = runner.invoke(
        app, ["mr-bench", "--provider", "soft", "mr_reg_pageable_mr", "rdma_write_pageable_mr"]
    )
    assert result.exit_code == 2 and "different modes" in result.stderr


@pytest.mark.parametrize(
    ("case", "flag"),
    [
        ("rdma_write_pageable_mr", "--reg-cost"),
        ("rdma_write_pageable_mr", "--loop-cost"),
        ("mr_reg_pageable_mr", "--latency"),
        ("rdma_write_pageable_mr", "--matrix"),
    ],
)
def test_a_mode_flag_against_the_selected_cases_is_named_as_given(case, flag):
    result = runner.invoke(app, ["mr-bench", "--provider", "soft", case, flag])
    assert result.exit_code == 2 and result.stderr.strip().endswith(f"drop {flag}")


def test_mr_selection_with_memory_option_is_refused():
    result = runner.invoke(
        app, ["mr-bench", "--provider", "soft", "--memory", "pinned", "rdma_write_pageable_mr"]
    )
    assert result.exit_code == 2 and "not both" in result.stderr


def test_registry_selectors_key_prefix_glob():
    reg = mr_registry()
    assert [c.key for c in reg.select(["rdma_write_pageable_mr"])] == ["rdma_write_pageable_mr"]
    assert {c.key for c in reg.select(["rdma_write_lat_"])} == {
        c.key for c in reg.cases if c.key.startswith("rdma_write_lat_")
    }
    assert {c.key for c in reg.select(["rdma_write_*_dmabuf"])} >= {
        "rdma_write_device_dmabuf",
        "rdma_write_lat_device_dmabuf",
    }
    with pytest.raises(UserInputError):
        reg.select(["rdma_read"])


def test_applicable_gives_the_waived_reason():
    reg = mr_registry()
    caps = Capabilities(gpu_missing="no GPU", rdma_missing=None)
    device = next(c for c in reg.cases if c.key == "rdma_write_device_mr")
    pageable = next(c for c in reg.cases if c.key == "rdma_write_pageable_mr")
    assert device.applicable(caps) == "no GPU" and pageable.applicable(caps) is None


def test_mr_loop_cost_runs_here_in_the_list_whatever_the_machine():
    """--list said mr_loop_cost WAIVED (no device) though --loop-cost runs anywhere."""
    no_device = Capabilities(gpu_missing="no GPU", rdma_missing="no RDMA devices")
    (loop,) = [c for c in mr_registry().cases if c.key == "mr_loop_cost"]
    assert loop.applicable(no_device) is None
    code, rows = _json(["mr-bench", "--list"])
    assert code == 0 and {r["key"]: r["here"] for r in rows}["mr_loop_cost"] == "runs"
