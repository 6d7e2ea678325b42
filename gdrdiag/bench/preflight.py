"""What a bench asks of this machine before anything runs.

The CLI turns options into a bench's config; the questions about the machine those options raise
are asked here, in the bench layer, so that no command module reaches into ``hw/`` for them:

- :func:`check_numa`: ``--numa N`` names a node this machine has (each config's ``check_numa``
  asks it; gather-bench asks it before its config exists, as its first check).
"""

from __future__ import annotations

from gdrdiag.model.words import NumaRequest


def check_numa(request: NumaRequest) -> None:
    """Refuse ``--numa N`` for a node this machine does not have (UserInputError: one line, exit 2).

    Asked before the progress line and before anything is measured, so a mistyped node is one line
    at once; ``auto`` and ``none`` always pass.
    """
    from gdrdiag.hw import placement

    placement.check_request(request)
