"""The cyclic garbage collector waits while the agent starts (docs/decisions.md D4).

Start-up is imports: classes, dataclasses, pydantic models, almost none of it garbage, yet every
700 allocations the collector walks the young objects and every tenth time the older ones too:
~8 % of the CPU from spawn to `session/new` answered (15-20 ms on the 2-core box). So `__main__`
pauses it before the first import, and the front handler resumes it once the session layer is
built (`session/acp/front.py`), the sub-commands at once (`cli.py`). Resuming first moves everything
start-up made into the permanent generation (`gc.freeze`): the first collection after it would
otherwise walk the whole heap (~25 ms, on session/new's path), and no later one walks it again.
The cycles start-up left (~700 objects) stay, as the modules they belong to do.
"""

from __future__ import annotations

import gc

__all__ = ["pause", "paused", "resume"]

_paused = False


def pause() -> None:
    """Stop automatic collection until `resume` (a no-op if it is off already: not ours to turn on)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def paused() -> bool:
    """Whether `pause` stopped the collector and nothing has resumed it yet."""
    return _paused


def resume() -> None:
    """Freeze what exists now and collect as usual again; only undoes `pause` (idempotent)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
