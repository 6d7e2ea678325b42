"""``gdrdiag compare`` prints the same bytes before and after a speed-up.

Every ordered pair of the fixture Reports (a Report with itself too), plus a small pair made by
``scripts/compare_scale.py`` (one-sided cases, large deltas, many results of one key), is compared
in four modes: text, ``--all``, ``--json`` and ``--html``. The SHA-256 of each output is checked
against ``tests/fixtures/compare_output_digests.json``, recorded before the loading, matching and
diagnosis of ``compare`` were made faster, so a faster path that changes one byte fails here.

When an output changes on purpose (a new column, a new finding), record the new digests and
review the change in the command's output, not here:

    GDRDIAG_UPDATE_COMPARE_DIGESTS=1 pytest tests/cli/test_compare_outputs_stable.py
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "tests" / "fixtures" / "reports"
DIGESTS = ROOT / "tests" / "fixtures" / "compare_output_digests.json"
FIXTURE_REPORTS = ("baremetal_hgx", "vm_guest_kvm", "gpu_machine_h200")
SCALE_RESULTS = 400  # enough for every template case, one-sided rows and large deltas
MODES = ("text", "all", "json", "html")
UPDATE = os.environ.get("GDRDIAG_UPDATE_COMPARE_DIGESTS") == "1"

PAIRS = [(a, b) for a, b in itertools.product(FIXTURE_REPORTS, repeat=2)] + [("scale_a", "scale_b")]


@pytest.fixture(scope="module")
def report_paths(tmp_path_factory) -> dict[str, Path]:
    """Every Report a pair names: the fixtures, and the scale pair written once per module."""
    spec = importlib.util.spec_from_file_location("compare_scale", ROOT / "scripts" / "compare_scale.py")
    assert spec is not None and spec.loader is not None
    compare_scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare_scale)
    folder = tmp_path_factory.mktemp("scale")
    text_a, text_b = compare_scale.make(SCALE_RESULTS)
    (folder / "scale_a.json").write_text(text_a)
    (folder / "scale_b.json").write_text(text_b)
    paths = {name: REPORTS / f"{name}.json" for name in FIXTURE_REPORTS}
    paths.update(scale_a=folder / "scale_a.json", scale_b=folder / "scale_b.json")
    return paths


def _output(mode: str, a: Path, b: Path, tmp_path: Path) -> bytes:
    """What one compare prints in ``mode`` (for ``html``: the page, then what it printed)."""
    args = ["compare", str(a), str(b)]
    page = tmp_path / "c.html"
    if mode == "all":
        args.append("--all")
    elif mode == "json":
        args.insert(0, "--json")
    elif mode == "html":
        args += ["--html", str(page)]
    res = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    assert res.exit_code in (0, 1), res.output  # 1: B has a FAIL finding
    printed = res.output.replace(str(page), "PAGE").encode()  # the `wrote` line names the page
    return page.read_bytes() + b"\0" + printed if mode == "html" else printed


def _recorded() -> dict[str, str]:
    return json.loads(DIGESTS.read_text()) if DIGESTS.exists() else {}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}-vs-{b}" for a, b in PAIRS])
def test_compare_output_is_byte_identical_to_the_recorded_one(a, b, mode, report_paths, tmp_path):
    digest = hashlib.sha256(_output(mode, report_paths[a], report_paths[b], tmp_path)).hexdigest()
    name = f"{a} {b} {mode}"
    if UPDATE:
        recorded = _recorded()
        recorded[name] = digest
        DIGESTS.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n")
        return
    assert _recorded().get(name) == digest, (
        f"compare {a} {b} ({mode}) printed other bytes than recorded; if that is on purpose, "
        "rerun with GDRDIAG_UPDATE_COMPARE_DIGESTS=1 (see this module's docstring)"
    )
