"""One row, one yardstick over the real runs: every judged number comes from the one path model.

The checks of tests/unit/test_one_yardstick.py (ratios are measured / expected of
:func:`gdrdiag.pathmodel.judge`; no finding's evidence quotes an expected GB/s that is not a
judgement's expected value) over every real run of tests/real/, imported with its bundle.
"""

from __future__ import annotations

import pytest

from tests.real.corpus import RealRun, judged, runs
from tests.unit.test_one_yardstick import assert_one_yardstick


@pytest.mark.parametrize("run", runs(), ids=lambda r: f"{r.machine}/{r.name}")
def test_every_judged_number_comes_from_the_one_path_model(run: RealRun):
    assert_one_yardstick(judged(run))
