"""The path model: the one yardstick every measured row is judged by, whoever measured it.

A row (gdrdiag's own benches, an imported tool's output, a posted number) becomes a path
(:mod:`.rows`: source, destination, mover, GPUs/NICs, ranks), the machine facts put bounds on it
(:mod:`.bounds`, with the PCIe read/write model in :mod:`.pcie` and the GPU<->GPU model in
:mod:`.peer`), and :mod:`.judge` turns the narrowest bound into the expected value at the row's size
and a verdict. Pure: no hardware, no I/O. Nothing here is baked into a saved Report: re-judging an
old Report uses today's model.
"""

from __future__ import annotations

from gdrdiag.pathmodel.judge import judge, losses
from gdrdiag.pathmodel.rows import path_of, to_gbytes_per_s

__all__ = ["judge", "losses", "path_of", "to_gbytes_per_s"]
