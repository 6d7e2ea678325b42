#!/usr/bin/env python3
"""Write docs/findings.md and docs/kb/*.md from the finding catalogue (gdrdiag/diagnose/catalogue_*.py).

Run from the repository root after changing a catalogue entry; tests/unit/test_findings_catalogue.py
fails while the files differ from what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gdrdiag.diagnose.catalogue import documents  # noqa: E402


def main() -> None:
    for rel, text in documents().items():
        path = ROOT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {rel}")


if __name__ == "__main__":
    main()
