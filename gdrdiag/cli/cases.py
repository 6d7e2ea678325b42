"""``<bench> --list`` and case selectors, shared by the bench commands."""

from __future__ import annotations

import json
from typing import Optional, Sequence

import typer

from gdrdiag.bench.registry import Capabilities, Registry
from gdrdiag.cli.common import EXIT_OK, echo, echo_text, output_width

LIST_HELP = (
    "List this bench's cases (and whether each runs here), then exit; with CASE selectors, only those."
)
CASES_HELP = "Cases to run: keys, prefixes or globs from --list (default: the options below decide)."


def print_case_list(
    ctx: typer.Context,
    registry: Registry,
    caps: Capabilities,
    as_json: bool,
    selectors: Optional[Sequence[str]] = None,
) -> None:
    """Print the registry (text table or JSON) and exit 0.

    With case selectors (``copy-bench --list copy_h2d``) only the cases they select are listed, as
    a user narrowing a list expects; a selector that matches nothing is refused as it is for a run.
    """
    rows = registry.lines(caps)
    if selectors:
        keys = {case.key for case in registry.select(selectors)}
        rows = [row for row in rows if row[0] in keys]
    if as_json:
        echo(json.dumps([{"key": k, "description": d, "here": h} for k, d, h in rows], indent=2))
        raise typer.Exit(EXIT_OK)
    from gdrdiag.render.results_table import table

    # Long WAIVED reasons are numbered under the table instead of filling every row.
    reasons: list[str] = []
    cells = []
    for key, desc, here in rows:
        if here.startswith("WAIVED: "):
            reason = here[len("WAIVED: ") :]
            if reason not in reasons:
                reasons.append(reason)
            here = f"WAIVED ({reasons.index(reason) + 1})"
        cells.append([key, desc, here])
    width = output_width(ctx)
    echo(table(cells, ["case", "what it measures", "here"], width=width, wrap=(1, 0)))
    echo_text(ctx, "\n".join(f"({i}) {reason}" for i, reason in enumerate(reasons, 1)))
    raise typer.Exit(EXIT_OK)
