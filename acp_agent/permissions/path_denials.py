"""The settings' deny rules on reading, as the file tools apply them (`tools/hidden.py:PathDenials`).

`RuleEngine.path_denials` hands the tools a `ReadDenials` over its rules: a path one of them names
is refused with the same words a denied call gets (`deny_message`), and left out of listings and
searches. It reads the rules through `RulesInForce`, the engine's two methods it needs, so it
stands below the engine (`engine.py`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

from acp_agent.permissions.rules import Rule

__all__ = ["REJECTED_ALWAYS", "SESSION", "ReadDenials", "RulesInForce", "deny_message"]

SESSION = "this session"
"""Where an "always" answer kept for this session only comes from, as a refusal names it."""
REJECTED_ALWAYS = (
    'The user answered "Always reject" to this call earlier in the session. Do not retry it; ask '
    "the user or try another way."
)


def deny_message(rule: Rule) -> str:
    """What the model is told of a deny rule: the rule and its file, in one line."""
    return REJECTED_ALWAYS if rule.origin.shown == SESSION else f"denied by {rule.origin.shown}: {rule.text}"


class RulesInForce(Protocol):
    """The rules a session weighs now (`RuleEngine`), and a key that changes when they do."""

    def rules(self) -> Sequence[Rule]: ...

    def rules_key(self) -> Hashable: ...


@dataclass(slots=True)
class ReadDenials:
    """The deny rules on reading, as the file tools ask (`tools/hidden.py:PathDenials`): a path
    one of them names, as written or where it leads, is refused and left out of listings. Asked
    once per entry a listing or search meets: the rules are gathered again only when the session's
    rules changed, and each is matched segment by segment (`path_rules.SegmentGlob`: linear in the
    path, whatever the pattern)."""

    engine: RulesInForce
    _key: Hashable = None
    _rules: tuple[Rule, ...] = ()

    def refusal(self, path: str) -> str | None:
        for rule in self._current():
            if rule.bare or (rule.path is not None and rule.path.matches(path)):
                return deny_message(rule)
        return None

    def _current(self) -> tuple[Rule, ...]:
        key = self.engine.rules_key()
        if key != self._key:
            self._rules = tuple(
                r for r in self.engine.rules() if r.behavior == "deny" and r.names("read_file")
            )
            self._key = key
        return self._rules
