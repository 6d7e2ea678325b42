"""Make two Reports of N results each (default 20,000) for timing ``gdrdiag compare`` at scale.

    python scripts/compare_scale.py OUTDIR [N]
    time gdrdiag compare OUTDIR/a.json OUTDIR/b.json [--all] [--html OUTDIR/c.html --force]

Results are copies of a fixture Report's results with distinct sizes, so every case of A matches
one of B (B is about 10% slower on every 7th case, so there are large deltas to render); a few
hundred cases exist on one side only.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "tests/fixtures/reports/baremetal_hgx.json"


def make(n: int) -> tuple[str, str]:
    """Two Reports (current schema, as gdrdiag writes them) of ``n`` results each, as JSON text."""
    from gdrdiag.model.report import Report

    base = Report.from_json(FIXTURE.read_text())
    templates = [
        r for r in base.results if hasattr(r.params, "size_bytes") or hasattr(r.params, "record_bytes")
    ]
    ra, rb = [], []
    for i in range(n):
        t = templates[i % len(templates)]
        field = "size_bytes" if hasattr(t.params, "size_bytes") else "record_bytes"
        r = dataclasses.replace(t, params=dataclasses.replace(t.params, **{field: 4096 * (i + 1)}))
        ra.append(r)
        s = r
        if i % 7 == 0 and r.stats is not None:  # 10% slower on B: a large delta to show
            s = dataclasses.replace(
                r,
                samples=tuple(v * 0.9 for v in r.samples),
                stats=dataclasses.replace(r.stats, median=r.stats.median * 0.9),
            )
        if i % 97 == 0:  # only on one side
            s = dataclasses.replace(s, params=dataclasses.replace(s.params, **{field: 4096 * (i + 1) + 1}))
        rb.append(s)
    a = dataclasses.replace(base, results=tuple(ra))
    b = dataclasses.replace(base, results=tuple(rb))
    return a.to_json(), b.to_json()


def main() -> None:
    out = Path(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20_000
    out.mkdir(parents=True, exist_ok=True)
    a, b = make(n)
    (out / "a.json").write_text(a)
    (out / "b.json").write_text(b)
    print(f"wrote {out}/a.json and {out}/b.json with {n} results each")


if __name__ == "__main__":
    main()
