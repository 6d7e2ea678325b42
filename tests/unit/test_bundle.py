"""Bundles: live == replay, and hostile or broken archives give one clear BundleError."""

from __future__ import annotations

import gzip
import io
import json
import tarfile

import pytest

from gdrdiag.hw.bundle import BundleError, LiveSource, open_bundle, safe_extract, write_bundle
from gdrdiag.inspect.collect import inspect_source
from gdrdiag.model.serde import to_jsonable


def _strip(m):
    d = to_jsonable(m)
    d["source"] = ""
    return d


def test_collect_then_inspect_bundle_equals_live(tmp_path):
    src = LiveSource(record=True)
    live = inspect_source(src)
    out = tmp_path / "node.tar.gz"
    summary = write_bundle(str(out), src)
    assert summary["files"] > 0 and out.stat().st_size == summary["bytes"]
    with open_bundle(str(out)) as b:
        replay = inspect_source(b)
        assert b.name == "bundle:node.tar.gz"
    assert _strip(replay) == _strip(live)


def _tar(members) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                tf.addfile(info)
            elif kind == "sym":
                info.type, info.linkname = tarfile.SYMTYPE, data
                tf.addfile(info)
            elif kind == "hard":
                info.type, info.linkname = tarfile.LNKTYPE, data
                tf.addfile(info)
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
                tf.addfile(info)
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


META = json.dumps({"format": "gdrdiag-bundle", "format_version": 1}).encode()
GOOD = [
    ("gdrdiag-bundle", "dir", None),
    ("gdrdiag-bundle/meta.json", "file", META),
    ("gdrdiag-bundle/fs/sys/x", "file", b"1\n"),
] + [(f"gdrdiag-bundle/facts/{k}.json", "file", b"{}") for k in ("cuda", "nvml", "verbs")]


@pytest.mark.parametrize(
    "members, message",
    [
        ([("gdrdiag-bundle/../../evil", "file", b"x")], "contains .."),
        ([("/etc/evil", "file", b"x")], "absolute"),
        ([("gdrdiag-bundle/fs/l", "sym", "/etc")], "absolute"),
        ([("gdrdiag-bundle/fs/l", "sym", "../../../../etc")], "leaves the bundle"),
        ([("gdrdiag-bundle/fs/h", "hard", "gdrdiag-bundle/meta.json")], "hard link"),
        ([("gdrdiag-bundle/fs/p", "fifo", None)], "device or FIFO"),
        ([("other/file", "file", b"x")], "not a gdrdiag bundle"),
        ([("gdrdiag-bundle/fs/l", "sym", "."), ("gdrdiag-bundle/fs/l", "sym", ".")], "appears twice"),
    ],
)
def test_hostile_members_are_refused(tmp_path, members, message):
    p = tmp_path / "b.tar.gz"
    p.write_bytes(_tar(members))
    with pytest.raises(BundleError, match=message):
        safe_extract(str(p), str(tmp_path / "out"))
    assert not (tmp_path / "evil").exists()


def test_truncated_corrupt_and_empty_archives(tmp_path):
    good = _tar(GOOD)
    p = tmp_path / "t.tar.gz"
    p.write_bytes(good[: len(good) // 2])
    with pytest.raises(BundleError, match="corrupt or truncated"):
        with open_bundle(str(p)):
            pass
    p.write_bytes(b"not a tarball at all")
    with pytest.raises(BundleError, match="corrupt or truncated"):
        with open_bundle(str(p)):
            pass
    p.write_bytes(gzip.compress(b""))
    with pytest.raises(BundleError):
        with open_bundle(str(p)):
            pass
    with pytest.raises(BundleError, match="does not exist"):
        with open_bundle(str(tmp_path / "missing.tar.gz")):
            pass


def test_good_minimal_bundle_opens_and_bad_json_is_named(tmp_path):
    p = tmp_path / "g.tar.gz"
    p.write_bytes(_tar(GOOD))
    with open_bundle(str(p)) as b:
        assert b.tree.read_text("/sys/x") == "1"
    bad = [m if m[0] != "gdrdiag-bundle/facts/cuda.json" else (m[0], "file", b"{nope") for m in GOOD]
    p.write_bytes(_tar(bad))
    with pytest.raises(BundleError, match="facts/cuda.json is corrupt"):
        with open_bundle(str(p)):
            pass
    nometa = [m for m in GOOD if not m[0].endswith("meta.json")]
    p.write_bytes(_tar(nometa))
    with pytest.raises(BundleError, match="meta.json is missing"):
        with open_bundle(str(p)):
            pass


def test_oversize_member_is_refused(tmp_path, monkeypatch):
    import gdrdiag.hw.bundle as bundle

    monkeypatch.setattr(bundle, "MAX_MEMBER_BYTES", 10)
    p = tmp_path / "big.tar.gz"
    p.write_bytes(_tar(GOOD + [("gdrdiag-bundle/fs/big", "file", b"x" * 100)]))
    with pytest.raises(BundleError, match="over the limit"):
        safe_extract(str(p), str(tmp_path / "o"))
