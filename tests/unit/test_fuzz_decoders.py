"""Property tests: random or damaged config space, sysfs trees and bundles never raise past the
decoders and loaders (10,000 cases in all: 4000 + 2500 + 1500 + 2000)."""

from __future__ import annotations

import io
import json
import os
import tarfile
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gdrdiag.diagnose import diagnose_machine
from gdrdiag.hw import pciconfig as pc
from gdrdiag.hw.bundle import BundleError, open_bundle
from gdrdiag.inspect.collect import inspect_source

from .test_machine_rules_fixtures import MACHINES

FAST = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
REAL_CONFIGS = [p.read_bytes() for p in sorted(MACHINES.glob("*/fs/sys/devices/**/config"))][:40]


def _check_decoded(out: dict, cfg: pc.ConfigSpace) -> None:
    for c in out["caps"]:
        assert 0 <= c.offset < max(len(cfg.data), 1)
    assert isinstance(out["problems"], tuple)


@settings(max_examples=4000, **FAST)
@given(data=st.binary(max_size=4096), size=st.sampled_from([None, 64, 256, 4096]))
def test_random_config_space(data, size):
    cfg = pc.ConfigSpace(data, size)
    _check_decoded(pc.decode_all(cfg), cfg)


@settings(max_examples=2500, **FAST)
@given(
    idx=st.integers(0, max(len(REAL_CONFIGS) - 1, 0)),
    cut=st.integers(0, 4096),
    flips=st.lists(st.tuples(st.integers(0, 4095), st.integers(0, 255)), max_size=12),
)
def test_damaged_real_config_space(idx, cut, flips):
    b = bytearray(REAL_CONFIGS[idx])
    for off, val in flips:
        if off < len(b):
            b[off] = val
    cfg = pc.ConfigSpace(bytes(b[:cut]), len(b))
    _check_decoded(pc.decode_all(cfg), cfg)


TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["0x10de", "-1", "32.0 GT/s PCIe", "Unknown", "16", "", "4: ACTIVE", "0xffffffffffffffffffff", "NaN"]
    ),
)
JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10)),
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=8), c, max_size=3)),
    max_leaves=8,
)
ATTRS = [
    "vendor",
    "device",
    "class",
    "numa_node",
    "current_link_speed",
    "current_link_width",
    "max_link_speed",
    "max_link_width",
    "resource",
    "sriov_totalvfs",
    "sriov_numvfs",
    "aer_dev_correctable",
    "local_cpulist",
]


@settings(max_examples=1500, **FAST)
@given(
    attrs=st.dictionaries(st.sampled_from(ATTRS), TEXT, max_size=len(ATTRS)),
    config=st.binary(max_size=300),
    proc=st.dictionaries(
        st.sampled_from(["cpuinfo", "cmdline", "modules", "driver/nvidia/version", "sys/kernel/osrelease"]),
        TEXT,
        max_size=5,
    ),
    facts=st.dictionaries(st.sampled_from(["cuda", "nvml", "verbs"]), JSONISH, max_size=3),
    gpu=st.booleans(),
)
def test_malformed_sysfs_trees(attrs, config, proc, facts, gpu):
    with tempfile.TemporaryDirectory() as d:
        dev = os.path.join(d, "fs/sys/devices/pci0000:00/0000:00:05.0")
        os.makedirs(dev)
        os.makedirs(os.path.join(d, "fs/sys/bus/pci/devices"))
        os.symlink(
            "../../../devices/pci0000:00/0000:00:05.0", os.path.join(d, "fs/sys/bus/pci/devices/0000:00:05.0")
        )
        base = {"vendor": "0x10de" if gpu else "0x15b3", "class": "0x030200" if gpu else "0x020700"}
        for k, v in {**base, **attrs}.items():
            with open(os.path.join(dev, k), "w") as fh:
                fh.write(v)
        with open(os.path.join(dev, "config"), "wb") as fh:
            fh.write(config)
        for k, v in proc.items():
            p = os.path.join(d, "fs/proc", k)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as fh:
                fh.write(v)
        with open(os.path.join(d, "meta.json"), "w") as fh:
            json.dump({"format": "gdrdiag-bundle", "format_version": 1}, fh)
        os.makedirs(os.path.join(d, "facts"))
        for k in ("cuda", "nvml", "verbs"):
            with open(os.path.join(d, f"facts/{k}.json"), "w") as fh:
                json.dump(
                    facts.get(k)
                    if isinstance(facts.get(k), dict)
                    else {"status": "ok", "devices": facts.get(k)},
                    fh,
                )
        with open_bundle(d) as src:
            m = inspect_source(src)
        diagnose_machine(m)
        assert len(m.pci) == 1


def _tar(entries) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


GOOD = _tar(
    [
        ("gdrdiag-bundle/meta.json", json.dumps({"format": "gdrdiag-bundle", "format_version": 1}).encode()),
        ("gdrdiag-bundle/facts/cuda.json", b"{}"),
        ("gdrdiag-bundle/facts/nvml.json", b"{}"),
        ("gdrdiag-bundle/facts/verbs.json", b"{}"),
        ("gdrdiag-bundle/fs/sys/bus/pci/devices/.k", b""),
    ]
)


@settings(max_examples=2000, **FAST)
@given(
    kind=st.sampled_from(["random", "truncated", "names", "flipped"]),
    raw=st.binary(max_size=600),
    cut=st.integers(0, len(GOOD)),
    names=st.lists(st.text(min_size=1, max_size=30), max_size=4),
)
def test_random_and_damaged_bundles(kind, raw, cut, names):
    if kind == "random":
        blob = raw
    elif kind == "truncated":
        blob = GOOD[:cut]
    elif kind == "flipped":
        b = bytearray(GOOD)
        for i, v in enumerate(raw[:8]):
            b[(cut + i * 97) % len(b)] = v
        blob = bytes(b)
    else:
        try:
            blob = _tar([(n, raw[:50]) for n in names])
        except (ValueError, UnicodeError):
            return
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "b.tar.gz")
        with open(p, "wb") as fh:
            fh.write(blob)
        try:
            with open_bundle(p) as src:
                diagnose_machine(inspect_source(src))
        except BundleError as exc:
            assert str(exc) and "\n" not in str(exc)
        except Exception as exc:  # the only other allowed error: a bundle with no PCI tree
            from gdrdiag.hw.sysfs import SysfsError

            assert isinstance(exc, SysfsError), repr(exc)
