"""Turn what ``hw/`` reads into ``MachineInfo``: PCI, virtualization, GPUs, NICs, kernel, topology.

``collect.inspect_source`` runs them all in one pass over a live machine or a bundle.
Nothing here prints, and nothing here opens /sys or /proc itself: every read goes through a
``SysfsTree`` handed in by the source.
"""
