"""Importers fill an imported row's path fields, and the path model decides from those alone.

The path model once read the tool and test names (``tool == "perftest" and test == "read_bw"``);
importers now say the path (kind, mover, flow), and rows saved without them get the same facts from
their names when built or loaded (``gdrdiag.model.imported_path.legacy_path``). These tests keep
the names out of the path model and the two sources of the fields in step.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from gdrdiag.importers import import_text
from gdrdiag.model.imported_path import Flow, PathKind, legacy_path
from gdrdiag.model.params import ImportedParams, shown_items
from gdrdiag.model.path import Mover

ROOT = Path(__file__).resolve().parents[2]
PATHMODEL = sorted((ROOT / "gdrdiag" / "pathmodel").glob("*.py"))
# tool outputs the importers read: the fixtures and every real run's
OUTPUTS = sorted(
    p
    for d in (ROOT / "tests" / "fixtures" / "imported", ROOT / "tests" / "real")
    for p in d.rglob("*")
    if p.is_file() and p.suffix in (".txt", ".json", ".log") and p.name != "truncated.txt"
)

_TOOL_NAMES = "PERFTEST|POSTED|NVBANDWIDTH|BANDWIDTH_TEST|P2P_TEST|NCCL_TESTS|NCCL"
_SNIFFING = (
    re.compile(rf"\bProvider\.({_TOOL_NAMES})\b"),
    re.compile(r"\.(tool|test)\b\s*(==|!=|\bin\b|\bnot in\b)"),
    re.compile(r"\b(tool|test)\s*(==|!=|\bin\b|\bnot in\b)"),
    re.compile(r"\b(tool|test)(\.lower\(\))?\.(startswith|endswith)\("),
    re.compile(r"in\s+(p\.)?(tool|test)\b"),
)


@pytest.mark.parametrize("path", PATHMODEL, ids=lambda p: p.name)
def test_pathmodel_never_reads_tool_or_test_names(path: Path) -> None:
    """No ``Provider.<tool>`` and no comparison of a row's tool or test name in the path model."""
    bad = [
        f"{path.name}:{i}: {line.strip()}"
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if not line.lstrip().startswith("#") and any(rx.search(line) for rx in _SNIFFING)
    ]
    assert not bad, "the path model decides from ImportedParams' path fields, not names:\n" + "\n".join(bad)


def _imported(path: Path) -> list[ImportedParams]:
    try:
        results = import_text(path.read_text(errors="replace"), str(path))
    except Exception:  # noqa: BLE001 - files no importer reads (READMEs, expectations)
        return []
    return [r.params for r in results if isinstance(r.params, ImportedParams)]


def test_importers_fill_what_the_names_say() -> None:
    """Each importer's path fields are those an old row of the same tool and test is given."""
    rows = [(path, p) for path in OUTPUTS for p in _imported(path)]
    assert len(rows) > 100
    differ = [
        f"{path.relative_to(ROOT)}: {p.tool} {p.test}: {(p.path_kind, p.mover, p.flow)} != {legacy}"
        for path, p in rows
        for legacy in [legacy_path(p.tool, p.test, p.direction, p.collective)]
        # a row whose importer says why no path fits (ucx_perftest host to host) has none to compare
        if p.path_unknown is None and ((p.path_kind, p.mover, p.flow) != legacy or p.path_kind is None)
    ]
    assert not differ, "\n".join(differ[:20])


def test_a_row_without_path_fields_gets_them_from_its_names() -> None:
    """A row built (or loaded from an older Report) without the fields: read once from the names."""
    p = ImportedParams(tool="perftest", test="read_bw")
    assert (p.path_kind, p.mover, p.flow) == (PathKind.NIC_DMA, Mover.NIC_DMA, Flow.FROM_REMOTE)
    q = ImportedParams(tool="nvbandwidth", test="host_to_device_memcpy_sm", direction="h2d")
    assert (q.path_kind, q.mover, q.flow) == (PathKind.HOST_GPU, Mover.SM, Flow.H2D)
    assert ImportedParams(tool="nccl").path_kind is PathKind.FACTS
    assert ImportedParams(tool="other", test="x").path_kind is None


def test_fields_set_by_an_importer_are_kept() -> None:
    p = ImportedParams(tool="posted", test="write_bw", path_kind=PathKind.HOST_GPU, flow=Flow.D2H)
    assert (p.path_kind, p.mover, p.flow) == (PathKind.HOST_GPU, None, Flow.D2H)


def test_path_fields_are_neither_identity_nor_shown() -> None:
    p = ImportedParams(tool="perftest", test="write_bw")
    assert p.path_kind is not None
    assert dict(shown_items(p)) == {"tool": "perftest", "test": "write_bw"}
    hidden = {f.name for f in dataclasses.fields(ImportedParams) if f.metadata.get("shown") is False}
    assert hidden == {"path_kind", "mover", "flow"}
