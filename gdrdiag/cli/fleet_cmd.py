"""``gdrdiag fleet DIR|FILE.jsonl``: many nodes' records -> outliers per SKU, worst first, with causes.

Exit codes: 0 when no node is flagged, 1 when at least one node is to drain or investigate or
an expected node (``--expect-hosts``) has no usable record,
2 for a usage error (path missing, bad baseline, no usable record). Bad records are skipped,
counted and listed with a reason; they never stop the run.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer

from gdrdiag.cli.application import app
from gdrdiag.cli.common import EXIT_FAIL, EXIT_OK, echo, echo_text, handles_errors, output_width, wants_json
from gdrdiag.errors import UserInputError


@app.command("fleet")
@handles_errors
def fleet_cmd(
    ctx: typer.Context,
    path: Path = typer.Argument(
        ..., metavar="DIR|FILE.jsonl", help="Node records: a folder or a JSONL file."
    ),
    baseline: Optional[Path] = typer.Option(
        None,
        "--baseline",
        help="TOML per SKU: minimum values per metric and the declared configuration (docs/fleet.md).",
    ),
    investigate_z: float = typer.Option(
        -3.5, "--investigate-z", help="Robust z at or below which to investigate."
    ),
    drain_z: float = typer.Option(-5.0, "--drain-z", help="Robust z at or below which to drain."),
    min_drop: float = typer.Option(
        0.05, "--min-drop", help="A low z flags only a drop of at least this fraction of the median."
    ),
    rel_floor: float = typer.Option(
        0.01, "--rel-floor", help="Spread floor as a fraction of the median (handles MAD = 0; noise)."
    ),
    min_group: int = typer.Option(3, "--min-group", help="Smallest SKU group that gets z-scores."),
    top: Optional[int] = typer.Option(
        None, "--top", help="Flagged nodes shown (text: 50 unless given; HTML: all unless given)."
    ),
    html: Optional[Path] = typer.Option(
        None, "--html", help="Also write an HTML page (table + strip plots)."
    ),
    expect_hosts: Optional[Path] = typer.Option(
        None,
        "--expect-hosts",
        help="File with the nodes that should have a record, one per line: the missing are named, exit 1.",
    ),
    prometheus: Optional[Path] = typer.Option(
        None, "--prometheus", help="Also write node_exporter textfile metrics (.prom), atomically."
    ),
    inventory: Optional[Path] = typer.Option(
        None,
        "--inventory",
        help="File of 'HOST-OR-GLOB SKU-NAME' lines: the SKU each host is meant to be (docs/fleet.md).",
    ),
) -> None:
    """Find the slow nodes of a fleet from their records (gdrdiag report --record/--jsonl), and say why."""
    from gdrdiag.fleet import FleetOptions, analyse, parse_baseline, parse_inventory
    from gdrdiag.node_record import load_records
    from gdrdiag.render.fleet_table import render_fleet

    if not path.exists():
        raise UserInputError(f"{path}: no such file or folder")
    if not (math.isfinite(investigate_z) and math.isfinite(drain_z)):
        raise UserInputError("--investigate-z and --drain-z must be finite numbers (not nan or inf)")
    if drain_z > investigate_z:
        raise UserInputError("--drain-z must be at or below --investigate-z")
    if not 0 <= rel_floor < 1 or not 0 <= min_drop < 1 or min_group < 1 or (top is not None and top < 1):
        raise UserInputError("--rel-floor and --min-drop must be in [0, 1), --min-group >= 1, --top >= 1")
    for out in (html, prometheus):
        if out is not None and not out.parent.is_dir():
            raise UserInputError(f"{out}: folder {out.parent} does not exist")
    rules = ()
    if baseline is not None:
        from gdrdiag.fleet import MAX_BASELINE_CHARS

        text = read_option_file(baseline, "--baseline", MAX_BASELINE_CHARS)
        try:
            rules = parse_baseline(text)
        except ValueError as exc:
            raise UserInputError(f"--baseline {baseline}: {exc}") from None
    inventory_rules = ()
    if inventory is not None:
        text = read_option_file(inventory, "--inventory", MAX_LIST_BYTES)
        try:
            inventory_rules = parse_inventory(text)
        except ValueError as exc:
            raise UserInputError(f"--inventory {inventory}: {exc}") from None
    options = FleetOptions(
        investigate_z=investigate_z,
        drain_z=drain_z,
        rel_floor=rel_floor,
        min_drop=min_drop,
        min_group=min_group,
        baseline=rules,
        inventory=inventory_rules,
    )
    expected: list[str] = []
    if expect_hosts is not None:
        expected = _expected_hosts(expect_hosts)
    loaded = load_records(path)
    if not loaded.records:
        why = (
            f" ({len(loaded.skipped)} skipped; first: {loaded.skipped[0].source}: {loaded.skipped[0].reason})"
            if loaded.skipped
            else ""
        )
        raise UserInputError(f"{path}: no usable node records{why}")
    result = analyse(loaded.records, options, skipped=loaded.skipped, expected_hosts=expected)
    written = []
    if html is not None:
        from gdrdiag.cli.common import force_requested
        from gdrdiag.cli.report_files import write_text_file
        from gdrdiag.render.fleet_html import fleet_html

        write_text_file(html, fleet_html(result, top=top or 0), force=force_requested(), what="--html")
        written.append(str(html))
    if prometheus is not None:
        from gdrdiag.render.prometheus import write_fleet_prom

        write_fleet_prom(prometheus, result)
        written.append(str(prometheus))
    if wants_json(ctx):
        from gdrdiag.render.fleet_json import fleet_json

        echo(fleet_json(result))
    else:
        echo_text(ctx, render_fleet(result, top=50 if top is None else top, width=output_width(ctx)))
        if written:
            echo_text(ctx, f"wrote {', '.join(written)}")
    raise typer.Exit(EXIT_FAIL if result.flagged or result.missing_hosts else EXIT_OK)


def _expected_hosts(path: Path) -> list[str]:
    """Host names from a file, one per line (blank lines and # comments ignored); UserInputError if bad."""
    from gdrdiag.node_record import HOST_RE

    text = read_option_file(path, "--expect-hosts", MAX_LIST_BYTES)
    hosts = []
    for number, line in enumerate(text.splitlines(), 1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        if not HOST_RE.match(name):
            raise UserInputError(f"--expect-hosts {path}:{number}: {name[:40]!r} is not a plain host name")
        hosts.append(name)
    return hosts


MAX_LIST_BYTES = 16 << 20  # --expect-hosts and --inventory: a million host names fit


def read_option_file(path: Path, option: str, limit: int) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes; UserInputError (one line) else.

    The file is opened without blocking and checked on its descriptor before a byte is read: a
    FIFO would block ``open`` and ``read`` forever and ``/dev/zero`` has no end, and a regular
    file is read to ``limit`` + 1 bytes at most, so one that grows meanwhile is refused too.
    """
    from gdrdiag.hw.safefs import UnsafeFile, read_regular

    def refused(why: str) -> UserInputError:
        return UserInputError(f"{option} {path}: {why}")

    try:
        data = read_regular(str(path), limit)
    except UnsafeFile as exc:
        raise refused(str(exc)) from None
    except OSError as exc:
        raise refused(f"cannot read ({exc.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refused(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
