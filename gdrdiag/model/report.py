"""The Report: one machine's facts, bench results and findings, round-tripping through JSON."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from gdrdiag.model import report_v1
from gdrdiag.model.findings import Finding
from gdrdiag.model.machine import MachineInfo
from gdrdiag.model.results import BenchResult
from gdrdiag.model.serde import SchemaError, from_jsonable, to_jsonable

# Bump when a field changes meaning or a key/code is renamed; compare reads every version
# listed in SUPPORTED_SCHEMA_VERSIONS and refuses others.
# v2: typed params/metrics per bench and run settings apart; v1 is upgraded on read.
SCHEMA_VERSION = 2
SUPPORTED_SCHEMA_VERSIONS = (1, 2)

# Hostile-input limits for reading reports from disk.
MAX_REPORT_BYTES = 64 * 1024 * 1024

_INTERRUPTED = re.compile(r"\binterrupted\b|\bSIGINT\b", re.IGNORECASE)


@dataclass(frozen=True)
class Report:
    """Root object of the JSON document gdrdiag writes and reads."""

    schema_version: int = SCHEMA_VERSION
    tool_version: str = ""
    created_utc: str = ""
    command: str = ""
    machine: Optional[MachineInfo] = None
    results: tuple[BenchResult, ...] = ()
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def interrupted(self) -> bool:
        """True when a note says the run was stopped part way (Ctrl-C, SIGINT): the Report is partial.

        gdrdiag's own note is ``interrupted by Ctrl-C after N results ...`` (cli/interrupt.py); a
        wrapper that stopped the run may have written ``interrupted (SIGINT) ...``.
        """
        return any(_INTERRUPTED.search(n) for n in self.notes)

    def to_json(self, indent: Optional[int] = 2) -> str:
        """Serialise to JSON text (stable field order)."""
        return json.dumps(to_jsonable(self), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> "Report":
        """Parse JSON text; raises ``SchemaError`` with the path of the first bad value."""
        if len(text) > MAX_REPORT_BYTES:
            raise SchemaError(f"report is larger than {MAX_REPORT_BYTES} bytes")
        try:
            data: Any = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            raise SchemaError("JSON nested too deeply") from None
        except ValueError as exc:
            raise SchemaError(f"not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise SchemaError("$: a report is a JSON object")
        version = data.get("schema_version")
        if version is None:  # never "None is not a schema" in user text
            raise SchemaError(
                "$.schema_version is missing: not a gdrdiag Report (gdrdiag report -o writes one)"
            )
        if version not in SUPPORTED_SCHEMA_VERSIONS:
            raise SchemaError(
                f"$.schema_version: {version!r:.40} is not a schema this gdrdiag reads "
                f"(it reads {', '.join(map(str, SUPPORTED_SCHEMA_VERSIONS))})"
            )
        if version == 1:
            data = report_v1.upgrade(data)
        return from_jsonable(cls, data)


def _reject_constant(name: str) -> Any:
    raise SchemaError(f"JSON constant {name} is not allowed (unknown values are null)")
