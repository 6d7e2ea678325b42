import json

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app

runner = CliRunner()


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--kinds", "bogus"], "unknown memory kind"),
        (["--directions", "sideways"], "unknown direction"),
        (["--sizes", "0"], "must be greater than 0"),
        (["--sizes", "-4K"], "cannot parse"),
        (["--sizes", "lots"], "cannot parse"),
        (["--sizes", "4000G"], "host memory"),
        (["--pin-size", "0"], "must be greater than 0"),
        (["--json-out", "/nonexistent/dir/x.json", "--parts", "sweep"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle):
    res = runner.invoke(app, ["copy-bench", *args])
    assert res.exit_code == 2, res.output
    assert needle in res.output
    assert "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_no_gpu_reports_waived_with_reason(tmp_path):
    from tests.conftest import gpu_absent_reason

    if gpu_absent_reason() is None:
        pytest.skip("a GPU is present; this checks the no-GPU path")
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["--json", "copy-bench", "--quick", "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data == json.loads(out.read_text())
    assert {r["status"] for r in data["results"]} == {"WAIVED"}
    assert all(r["reason"] for r in data["results"])
    table = runner.invoke(app, ["copy-bench", "--quick"])
    assert "WAIVED" in table.output and "driver" in table.output
