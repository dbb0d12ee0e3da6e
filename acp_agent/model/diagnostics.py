"""Whether Messages requests carry `diagnostics.previous_message_id`, the field that makes the API say
why a prompt-cache read missed (`model/anthropic.py` asks; docs/decisions.md D14)."""

from __future__ import annotations

import structlog

from acp_agent.model.retry import Failure

__all__ = ["DiagnosticsField"]

log = structlog.get_logger(__name__)


class DiagnosticsField:
    """Whether requests carry `diagnostics.previous_message_id` (why a cache missed).

    On when the installed SDK has the parameter. A gateway that does not know the field answers
    a 400 that does not say so in any field we can read; so the first 400 to a request carrying
    it, before the API ever took one, re-sends that request once without it (a retry on the
    turn's record, like any attempt the API received): if that one is taken, the field is refused
    and left out from then on (one warning); if that one fails too, the field was not the problem.
    Once a request carrying it is taken, a 400 is just a 400.
    """

    _sdk_has_it: bool | None = None

    def __init__(self) -> None:
        self.accepted: bool | None = None
        """None until a request settles it: True once one carrying the field was taken."""

    def wanted(self) -> bool:
        if self.accepted is False:
            return False
        if DiagnosticsField._sdk_has_it is None:
            DiagnosticsField._sdk_has_it = _sdk_takes_diagnostics()
        return DiagnosticsField._sdk_has_it

    def answered(self, carried: bool, probe: Failure | None) -> None:
        """The API took a request: with the field (accepted), or without it after a 400 with it."""
        if carried:
            self.accepted = True
        elif probe is not None:
            self.accepted = False
            log.warning(
                "model.diagnostics_refused",
                reason=probe.reason,
                hint="requests go on without diagnostics.previous_message_id",
            )


def _sdk_takes_diagnostics() -> bool:
    """Whether the installed SDK's `messages.create` takes `diagnostics`: read from its signature,
    which the request loads anyway (its parameter types are ~100 modules a request never needs)."""
    import inspect

    from anthropic.resources.messages import AsyncMessages

    return "diagnostics" in inspect.signature(AsyncMessages.create).parameters
