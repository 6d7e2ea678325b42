"""``gdrdiag collect``: writes a bundle that inspect replays; refuses to clobber; no pyverbs needed."""

from __future__ import annotations

import json
import sys
import tarfile

from typer.testing import CliRunner

from gdrdiag.cli import app

runner = CliRunner()


def test_collect_then_inspect_bundle(tmp_path):
    out = tmp_path / "node.tar.gz"
    r = runner.invoke(app, ["collect", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "wrote" in r.output and out.exists()
    with tarfile.open(out) as tf:
        names = tf.getnames()
    assert "gdrdiag-bundle/meta.json" in names and "gdrdiag-bundle/facts/cuda.json" in names
    assert any(n.endswith("/config") for n in names)
    live = runner.invoke(app, ["--json", "inspect"])
    replay = runner.invoke(app, ["--json", "inspect", "--bundle", str(out)])
    a, b = json.loads(live.output), json.loads(replay.output)
    a["machine"]["source"] = b["machine"]["source"] = ""
    assert a["machine"] == b["machine"] and a["findings"] == b["findings"]


def test_collect_refuses_existing_file_and_folders(tmp_path):
    out = tmp_path / "x.tar.gz"
    out.write_text("keep me")
    r = runner.invoke(app, ["collect", "-o", str(out)])
    assert r.exit_code == 2 and "--force" in r.output and out.read_text() == "keep me"
    assert runner.invoke(app, ["collect", "-o", str(tmp_path)]).exit_code == 2
    assert runner.invoke(app, ["collect", "-o", str(tmp_path / "no/such/dir/x.tgz")]).exit_code == 2
    assert runner.invoke(app, ["collect", "-o", str(out), "--force"]).exit_code == 0


def test_collect_without_pyverbs(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyverbs", None)  # import pyverbs -> ImportError
    for name in [m for m in sys.modules if m.startswith("gdrdiag.hw.verbs")]:
        monkeypatch.delitem(sys.modules, name)
    out = tmp_path / "n.tar.gz"
    r = runner.invoke(app, ["--json", "collect", "-o", str(out)])
    assert r.exit_code == 0, r.output
    with tarfile.open(out) as tf:
        verbs = json.load(tf.extractfile("gdrdiag-bundle/facts/verbs.json"))
    assert verbs["status"] in ("none", "unavailable") and verbs["reason"]
