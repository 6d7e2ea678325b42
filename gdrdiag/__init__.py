"""gdrdiag: find out why GPU<->NIC and host<->GPU data paths are slow, and say what to change.

The package is layered so data flows one way (docs/architecture.md): ``hw/`` adapters touch
hardware, ``inspect/`` and ``bench/`` (and ``importers/`` for other tools' outputs) turn that into
plain ``model/`` data, ``pathmodel/`` judges every measured row against its path, ``diagnose/`` and
``compare`` are pure functions of that data, ``render/`` formats it and ``cli/`` prints it and picks
exit codes.
"""

__version__ = "0.1.0"
