"""One catalogue entry (:mod:`gdrdiag.diagnose.catalogue`): a finding code as the docs describe it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One finding code as the catalogue documents it."""

    code: str
    area: str  # docs/kb/<area>.md
    severity: str  # as the rule decides it, in words ("WARN (INFO in a VM)")
    when: str
    why: str
    fix: str
    sources: tuple[str, ...] = ()

    @property
    def anchor(self) -> str:
        """The heading anchor of this code's section in docs/kb/<area>.md."""
        return self.code.lower()

    @property
    def reference(self) -> str:
        """What a finding cites: its KB section, then the public sources."""
        return "; ".join((f"docs/kb/{self.area}.md#{self.anchor}", *self.sources))


def E(code: str, area: str, severity: str, when: str, why: str, fix: str, *sources: str) -> Entry:  # noqa: N802
    """Short constructor for the entry tables."""
    return Entry(code, area, severity, when, why, fix, tuple(sources))
