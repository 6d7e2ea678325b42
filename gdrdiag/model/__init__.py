"""Plain data: frozen dataclasses and enums, importing nothing else from gdrdiag.

Everything a Report holds lives here so that ``diagnose``, ``compare`` and ``render`` can work
from saved JSON with no hardware. Unknown facts are ``None`` plus a reason (in an ``unknown``
mapping on the owning record), never 0 or "N/A".
"""

from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.report import SCHEMA_VERSION, Report
from gdrdiag.model.results import BenchResult, SampleStats, Status

__all__ = ["BenchResult", "Finding", "Report", "SCHEMA_VERSION", "SampleStats", "Severity", "Status"]
