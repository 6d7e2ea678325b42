"""Wrap bench results into a Report stamped with tool version, time and command."""

from __future__ import annotations

import datetime
import sys

from gdrdiag import __version__
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult


def results_report(command: str, results: list[BenchResult], **fields) -> Report:
    """A Report holding ``results`` (and any other Report fields given)."""
    return Report(
        tool_version=__version__,
        created_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        command=" ".join(["gdrdiag", *sys.argv[1:]]) if command in sys.argv else f"gdrdiag {command}",
        results=tuple(results),
        **fields,
    )
