"""`Grant`: a choice beyond "allow" that a permission question may offer for one call.

Its own module so that the tool seam (`base.py`, whose `Preview` carries grants) and the command
sandbox (`tools/sandbox/command_sandbox.py`, which offers the git grant) both import it and neither
imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Grant"]


@dataclass(frozen=True, slots=True)
class Grant:
    """More than a plain "allow" that a call may be given: offered as one more choice, once only."""

    id: str
    label: str
