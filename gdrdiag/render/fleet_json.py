"""``gdrdiag --json fleet``: the ``FleetResult`` as JSON, one node per line.

Formatting only. The summary (groups, options, skipped) is indented like every other ``--json``
output; ``nodes`` comes last with each node on one compact line, so 50,000 nodes are written by
the C encoder in a fraction of the time an indented dump takes, and ``grep HOST`` finds a node's
whole verdict on one line. It is one JSON document (docs/schemas/fleet.schema.json).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.fleet import FleetResult


def fleet_json(result: "FleetResult") -> str:
    """The JSON text (no trailing newline)."""
    from gdrdiag.model.serde import to_jsonable

    data = to_jsonable(result)
    data["skipped_counts"] = result.skipped_counts()
    nodes = data.pop("nodes")
    head = json.dumps(data, indent=1, allow_nan=False)
    assert head.endswith("\n}")
    lines = ",\n".join("  " + json.dumps(n, separators=(",", ":"), allow_nan=False) for n in nodes)
    return head[:-2] + ',\n "nodes": [\n' + lines + ("\n" if lines else "") + " ]\n}"
