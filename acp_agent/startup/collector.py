"""The cyclic garbage collector waits while the agent starts (docs/decisions.md D4).

Start-up is imports: classes, dataclasses, pydantic models, almost none of it garbage, yet every
700 allocations the collector walks the young objects and every tenth time the older ones too:
~8 % of the CPU from spawn to `session/new` answered (15-20 ms on the 2-core box). So `__main__`
pauses it before the first import. Once the session layer is built the front handler freezes what
start-up made (`freeze`: moved into the permanent generation, which no collection walks; the first
collection would otherwise walk the whole heap, ~25 ms on session/new's path). Start-up goes on
after `session/new`, though: the warm-up imports the turn machinery and the SDK while the first
prompt is prepared and sent, and collecting meanwhile cost that prompt ~14 ms. So the collector
stays off until the warm-up's end (after the first request has begun to be answered: `resume`);
without a warm-up the front resumes it at once, the sub-commands too (`cli.py`). What was made after
the freeze is collected as usual from then on (the first collection walks it: ~7 ms, off the
first request's path). The cycles start-up left before the freeze (~700 objects) stay, as the
modules they belong to do.
"""

from __future__ import annotations

import gc

__all__ = ["freeze", "pause", "paused", "resume"]

_paused = False
_frozen = False


def pause() -> None:
    """Stop automatic collection until `resume` (a no-op if it is off already: not ours to turn on)."""
    global _paused, _frozen
    if gc.isenabled():
        gc.disable()
        _paused, _frozen = True, False


def paused() -> bool:
    """Whether `pause` stopped the collector and nothing has resumed it yet."""
    return _paused


def freeze() -> None:
    """While paused, move what exists now into the permanent generation (once; the collector stays
    off). A no-op unless `pause` stopped it."""
    global _frozen
    if _paused and not _frozen:
        _frozen = True
        gc.freeze()


def resume() -> None:
    """Freeze what exists now (unless `freeze` did) and collect as usual again; only undoes `pause`
    (idempotent)."""
    global _paused
    if _paused:
        freeze()
        _paused = False
        gc.enable()
