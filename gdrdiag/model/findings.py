"""Findings: what diagnose concluded, with a stable code, evidence and advice."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional


class Severity(str, enum.Enum):
    """FAIL: broken or >2x slow. WARN: a likely performance loss. INFO: worth knowing."""

    FAIL = "FAIL"
    WARN = "WARN"
    INFO = "INFO"

    @property
    def rank(self) -> int:
        """Sort key: FAIL first."""
        return {"FAIL": 0, "WARN": 1, "INFO": 2}[self.value]


@dataclass(frozen=True)
class Finding:
    """One diagnosis.

    ``code`` is stable (PCIE-, VIRT-, SRIOV-, GDR-, RO-, ALIGN-, PERF-, LINK-, ...): renaming it is
    a schema change. ``evidence`` lists facts as ``"path.in.report = value"`` strings so a reader
    can check them; ``advice`` says what to change; ``reference`` cites the spec, kernel source or
    issue the rule rests on. ``subject`` names the device or case the finding is about.

    Cause findings (``CAUSE-*``, :mod:`gdrdiag.diagnose.causes`) also say how much of a measured
    loss they account for (``explains``, 0..1 of the gap between the slow path and its yardstick),
    whether that rests on a measurement or an inference (``basis``), the evidence against them
    (``against``) and the one command that would decide them (``next_step``). Other findings leave
    these at their defaults.
    """

    code: str
    severity: Severity
    title: str
    evidence: tuple[str, ...] = ()
    advice: str = ""
    reference: str = ""
    subject: str = ""
    explains: Optional[float] = None
    basis: Optional[str] = None  # "measured" | "inferred" | "by design" (cause findings only)
    against: tuple[str, ...] = ()
    next_step: str = ""
