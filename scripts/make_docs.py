#!/usr/bin/env python3
"""Write the docs that are generated from the code.

docs/findings.md and docs/kb/*.md come from the finding catalogue (gdrdiag/diagnose/catalogue_*.py),
docs/schemas/*.schema.json from the model's types (gdrdiag/json_schemas.py), and the public case
corpus table of docs/diagnosis.md from tests/cases (what leads for each thread today).

Run from the repository root after changing a catalogue entry or a dataclass that gdrdiag writes
as JSON; tests/unit/test_findings_catalogue.py and tests/unit/test_json_schemas.py fail while the
files differ from what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gdrdiag import json_schemas  # noqa: E402
from gdrdiag.diagnose import catalogue  # noqa: E402
from tests.cases import corpus_doc  # noqa: E402


def main() -> None:
    for rel, text in {**catalogue.documents(), **json_schemas.documents()}.items():
        path = ROOT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {rel}")
    diagnosis = ROOT / "docs" / "diagnosis.md"
    diagnosis.write_text(corpus_doc.updated(diagnosis.read_text()))
    print("wrote docs/diagnosis.md (the public case corpus table)")


if __name__ == "__main__":
    main()
