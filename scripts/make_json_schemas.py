#!/usr/bin/env python3
"""Write docs/schemas/*.schema.json from the model's types (gdrdiag/json_schemas.py).

Run from the repository root after changing a dataclass that gdrdiag writes as JSON;
tests/unit/test_json_schemas.py fails while the files differ from what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gdrdiag.json_schemas import documents  # noqa: E402


def main() -> None:
    for rel, text in documents().items():
        path = ROOT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {rel}")


if __name__ == "__main__":
    main()
