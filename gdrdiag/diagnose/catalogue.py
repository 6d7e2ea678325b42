"""The finding catalogue: one entry per code, the single source of docs/findings.md and docs/kb/.

Every code a rule can emit has an ``Entry``: the area it belongs to (the docs/kb/ page), its
severity as the rule decides it, when it fires, why it matters, what to do, and the public sources
it rests on (specification sections, kernel commits and files, vendor documentation, issue threads).
:func:`with_reference` gives each emitted finding its reference from here, so a user can follow it:
``docs/kb/<area>.md#<code>`` plus the public sources. ``python scripts/make_docs.py``
rewrites docs/findings.md and docs/kb/*.md from :func:`documents`; a test fails when they differ
from this catalogue or when any reference does not resolve. Pure: nothing here reads or writes files.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable

from gdrdiag.diagnose.catalogue_bench import ENTRIES as BENCH
from gdrdiag.diagnose.catalogue_entry import Entry
from gdrdiag.diagnose.catalogue_machine import ENTRIES as MACHINE
from gdrdiag.diagnose.catalogue_nccl import ENTRIES as NCCL
from gdrdiag.diagnose.catalogue_peer import ENTRIES as PEER
from gdrdiag.diagnose.catalogue_ucx import ENTRIES as UCX
from gdrdiag.model.findings import Finding


def _entries() -> tuple[Entry, ...]:
    return MACHINE + BENCH + PEER + NCCL + UCX


# area -> (title, what the page covers, in a few sentences)
AREAS: dict[str, tuple[str, str]] = {
    "pcie": (
        "PCIe links and registers",
        "How the link a GPU or NIC negotiated, and the payload and request sizes "
        "set in its Device Control register, bound every transfer. Register checks need root: without "
        "it Linux shows only the first 64 bytes of configuration space.",
    ),
    "virt": (
        "Virtualization, SR-IOV, IOMMU, ACS and ATS",
        "Inside a virtual machine the registers are the "
        "guest's view: payload and request sizes and every bridge above a device are virtual, and the "
        "host decides how peer-to-peer traffic between a NIC and a GPU is routed. On bare metal the "
        "same routing is decided by Access Control Services on the switch ports and by the IOMMU.",
    ),
    "gdr": (
        "GPUDirect RDMA prerequisites",
        "What must be true before a NIC can write into GPU memory: a "
        "registration path (nvidia-peermem or dma-buf), the GPU's GPUDirect attributes, a large enough "
        "BAR1 aperture, and a NIC close to the GPU.",
    ),
    "inventory": (
        "The node's GPUs",
        "Which GPUs a node holds, as the PCI bus lists them, against those CUDA and NVML see "
        "(CUDA_VISIBLE_DEVICES, a container's device list, a GPU the driver lost), and whether each GPU "
        "has as many active NVLinks as its siblings.",
    ),
    "ro": (
        "Relaxed ordering",
        "PCIe keeps posted writes in order unless a write carries the Relaxed "
        "Ordering attribute. Where NIC-to-GPU writes cross a root complex, strictly ordered writes can "
        "stall behind each other; an application asks for relaxed writes per memory region with "
        "IBV_ACCESS_RELAXED_ORDERING, and the kernel, the NIC's function and its firmware decide whether "
        "the attribute reaches the wire.",
    ),
    "copy": (
        "Host<->GPU copies",
        "Copy-engine bandwidth judged against what the PCIe model says the link "
        "delivers with its payload and request sizes; pageable and small-copy costs.",
    ),
    "gather": (
        "Zero-copy gathers",
        "GPU kernels reading scattered records of pinned host memory over PCIe, "
        "judged against the copy engine and the PCIe model for the layout.",
    ),
    "rdma": (
        "RDMA WRITE measurements",
        "mr-bench rows: relaxed-ordering A/B verdicts, GPU memory against host memory, registration paths.",
    ),
    "peer": (
        "GPU<->GPU peer paths",
        "Copies and kernel accesses between GPUs of one host, over NVLink or PCIe peer-to-peer, and what "
        "happens without peer access: the driver stages every copy through host memory.",
    ),
    "causes": (
        "Causes of a measured loss",
        "The cause model: each candidate cause weighs machine facts and "
        "measurements together and says how much of the measured loss it explains, the fix for this "
        "machine, and the one command that would decide it (docs/diagnosis.md).",
    ),
    "measure": ("Measurement status", "Failed measurements and missing evidence."),
}


def catalogue() -> dict[str, Entry]:
    """Code -> Entry, in catalogue order."""
    return {e.code: e for e in _entries()}


def with_reference(f: Finding) -> Finding:
    """``f`` with its reference from the catalogue (unchanged for a code the catalogue lacks)."""
    e = catalogue().get(f.code)
    return f if e is None else replace(f, reference=e.reference)


# ---------------------------------------------------------------------------------------------
# references that resolve
# ---------------------------------------------------------------------------------------------

SPEC = re.compile(r"^PCIe Base Spec r\d\.\d sec\. \d+(\.\d+)*( \([^)]*\))?$")
URL = re.compile(r"^https://[A-Za-z0-9.-]+\.[a-z]{2,}/\S*$")
KB = re.compile(r"^docs/kb/([a-z]+)\.md#([a-z0-9-]+)$")


def unresolved(reference: str, pages: dict[str, str]) -> list[str]:
    """The parts of a reference that do not resolve (empty when all do).

    A part resolves when it is a docs/kb/ section that exists (``pages`` maps ``docs/kb/<area>.md``
    to its text, and the text has the anchor), an https URL, or a PCIe Base Specification section.
    """
    bad = []
    for part in (p.strip() for p in reference.split(";")):
        m = KB.match(part)
        if m:
            text = pages.get(f"docs/kb/{m.group(1)}.md")
            if text is None or f'<a id="{m.group(2)}"></a>' not in text:
                bad.append(part)
        elif not (URL.match(part) or SPEC.match(part)):
            bad.append(part)
    return bad


# ---------------------------------------------------------------------------------------------
# generated documents
# ---------------------------------------------------------------------------------------------


# Every generated page quotes gdrdiag commands; say once how to run them.
RUN_NOTE = (
    "Commands on this page run gdrdiag from the virtual environment that `bash scripts/setup.sh` "
    "creates: activate it first (`. .venv/bin/activate`) or type `.venv/bin/gdrdiag ...`. "
    '"As root" means a root shell (the Debian image has no sudo).'
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def findings_md() -> str:
    """docs/findings.md, generated."""
    out = [
        "# Findings catalogue",
        "",
        "<!-- generated by `python scripts/make_docs.py` from gdrdiag/diagnose/catalogue_*.py; "
        "do not edit by hand -->",
        "",
        "Every finding has a stable **code** (renaming one is a schema change), a **severity**, the "
        "**evidence** it rests on (`path.in.report = value`), **advice**, and "
        "a **reference**: its section in "
        "[docs/kb/](kb/) and the public sources behind it. Severity: **FAIL** "
        "= broken, or more than 2x slow, or "
        "a failed measurement (exit code 1); **WARN** = a likely performance loss; **INFO** = worth knowing. "
        "Cause findings (`CAUSE-*`) also say how much of a measured loss they explain, the evidence against "
        "them and the next experiment (docs/diagnosis.md).",
        "",
        RUN_NOTE,
        "",
    ]
    entries = list(_entries())
    for area, (title, _) in AREAS.items():
        rows = [e for e in entries if e.area == area]
        if not rows:
            continue
        out += [
            f"## {title}",
            "",
            "| code | severity | when | advice (short) | KB |",
            "|---|---|---|---|---|",
        ]
        out += [
            f"| `{e.code}` | {_cell(e.severity)} | {_cell(e.when)} | {_cell(e.fix)} | "
            f"[{e.code}](kb/{e.area}.md#{e.anchor}) |"
            for e in rows
        ]
        out.append("")
    return "\n".join(out)


def kb_page(area: str) -> str:
    """docs/kb/<area>.md, generated: one section per code."""
    title, intro = AREAS[area]
    out = [
        f"# {title}",
        "",
        "<!-- generated by `python scripts/make_docs.py`; do not edit by hand -->",
        "",
        intro,
        "",
        RUN_NOTE,
        "",
    ]
    for e in _entries():
        if e.area != area:
            continue
        out += [
            f'<a id="{e.anchor}"></a>',
            "",
            f"## {e.code}",
            "",
            f"**Severity:** {e.severity}. **When:** {e.when}",
            "",
            f"**Why it matters.** {e.why}",
            "",
            f"**What to do.** {e.fix}",
            "",
        ]
        if e.sources:
            out.append("**Sources.** " + "; ".join(_link(s) for s in e.sources))
            out.append("")
    return "\n".join(out)


def _link(source: str) -> str:
    return f"<{source}>" if source.startswith("https://") else source


def documents() -> dict[str, str]:
    """Relative path -> generated text, for every generated document."""
    docs = {"docs/findings.md": findings_md()}
    areas = {e.area for e in _entries()}
    for area in AREAS:
        if area in areas:
            docs[f"docs/kb/{area}.md"] = kb_page(area)
    return docs


def codes_in(findings: Iterable[Finding]) -> set[str]:
    """The codes of some findings (for tests)."""
    return {f.code for f in findings}
