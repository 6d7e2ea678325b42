"""Findings as text: ranked, each with its evidence, advice and reference (formatting only)."""

from __future__ import annotations

from typing import Iterable

from gdrdiag.model.findings import Finding


def render_findings(findings: Iterable[Finding], title: str = "Findings") -> str:
    """One block per finding, most severe first (the order diagnose returned)."""
    items = list(findings)
    if not items:
        return f"{title}: none"
    lines = [f"{title} ({len(items)})"]
    for f in items:
        subject = f" [{f.subject}]" if f.subject else ""
        lines.append(f"{f.severity.value:<4} {f.code}{subject}: {f.title}")
        for e in f.evidence:
            lines.append(f"       evidence: {e}")
        for e in f.against:
            lines.append(f"       against: {e}")
        if f.advice:
            lines.append(f"       fix: {f.advice}")
        if f.next_step:
            lines.append(f"       next: {f.next_step}")
        if f.reference:
            lines.append(f"       ref: {f.reference}")
    return "\n".join(lines)
