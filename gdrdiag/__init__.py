"""gdrdiag: find out why GPU<->NIC and host<->GPU data paths are slow, and say what to change.

The package is layered so data flows one way (see ARCHITECTURE.md in the steering repo and
docs/architecture.md here): ``hw/`` adapters touch hardware, ``inspect/`` and ``bench/`` turn
that into plain ``model/`` data, ``diagnose/`` and ``compare`` are pure functions of that data,
``render/`` formats it and ``cli/`` prints it and picks exit codes.
"""

__version__ = "0.1.0"
