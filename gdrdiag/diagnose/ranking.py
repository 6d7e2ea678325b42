"""How findings are ordered: the cause of a measured loss first, then the measured symptoms, then facts.

Pure (imports the model only). The order, from the top:

0. ``MEASURE-FAILED``: bytes that arrived wrong void every number of that path.
1. Causes of a measured loss (``CAUSE-*``, or another rule's finding that states the share of a
   loss it explains, e.g. ``PEER-ACCESS-OFF``): a finding that explains no measured loss never
   outranks one that does.
2. Measured symptoms (``PERF-*``, ``RO-AB-*``, ``ALIGN-*``, ``GDR-DEVICE-SLOW``, ...): a symptom sits
   below its cause, whose evidence repeats it.
3. Causes of a loss that is built into the measurement (``by design``: pageable rows beside healthy
   pinned ones, a healthy row on a narrow link).
4. Everything else: machine facts, and what to measure next.

Within a group: severity (FAIL, WARN, INFO), then the share of the loss explained, measured before
inferred, then rule order (the sort is stable).
"""

from __future__ import annotations

from typing import Iterable

from gdrdiag.model.findings import Finding

SYMPTOM_PREFIXES = ("PERF-", "RO-AB-", "ALIGN-", "GDR-DEVICE-SLOW", "GDR-PATHS-DIFFER", "PEER-SLOW")


def is_by_design(f: Finding) -> bool:
    """True for a cause whose loss is built into the measurement (its basis, or its evidence, says so)."""
    return f.basis == "by design" or any(line.startswith("by design:") for line in f.evidence)


def group(f: Finding) -> int:
    """The finding's group in the order above (0 first)."""
    if f.code == "MEASURE-FAILED":
        return 0
    if (f.explains or 0) > 0 and (
        f.code.startswith("CAUSE-") or f.basis in ("measured", "inferred", "by design")
    ):
        return 3 if is_by_design(f) else 1  # a cause: CAUSE-*, or a rule's finding with a share
    if f.code.startswith(SYMPTOM_PREFIXES):
        return 2
    return 4


def order(f: Finding) -> tuple:
    """Sort key: group, severity, share explained (larger first), measured before inferred."""
    return (
        group(f),
        f.severity.rank,
        -(f.explains if f.explains is not None else -1.0),
        f.basis != "measured",
    )


def rank(findings: Iterable[Finding]) -> list[Finding]:
    """Ranked as the module says; exact duplicates (code, subject, title) dropped."""
    seen: set = set()
    unique = []
    for f in findings:
        key = (f.code, f.subject, f.title)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return sorted(unique, key=order)
