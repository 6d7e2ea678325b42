"""Every finding code the rules can emit is listed in docs/findings.md."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_code_in_diagnose_is_catalogued():
    catalogue = (ROOT / "docs" / "findings.md").read_text()
    codes = set()
    for path in (ROOT / "gdrdiag" / "diagnose").glob("*.py"):
        text = path.read_text()
        codes |= set(re.findall(r'code="([A-Z0-9]+(?:-[A-Z0-9]+)+)"', text))
        codes |= set(re.findall(r'finding\(\s*"([A-Z0-9]+(?:-[A-Z0-9]+)+)"', text))
    assert len(codes) > 40
    missing = sorted(c for c in codes if f"`{c}`" not in catalogue)
    assert not missing, missing
