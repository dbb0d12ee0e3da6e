"""Stuck-loop detection: the same tool batch with the same results, again and again, in one turn.

Key = (tool name, canonical JSON input, hash of the result) for each call of a batch; a batch is one
observation (docs/decisions.md C4). Re-reading a file after editing it gives a new result, so it is
not a loop; the same call returning the same answer a third time is one.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RepeatDetector"]

NUDGE_AT = 3


@dataclass(slots=True)
class RepeatDetector:
    """Counts identical observations in one turn; `limit` 0 turns it off."""

    limit: int = 5
    seen: Counter[str] = field(default_factory=Counter)

    def observe(self, calls: list[tuple[str, dict[str, Any], str]]) -> int:
        """Record one batch of (name, input, result text); returns how often it has now been seen."""
        if self.limit <= 0 or not calls:
            return 0
        digest = hashlib.sha256()
        for name, args, result in calls:
            digest.update(name.encode())
            digest.update(json.dumps(args, sort_keys=True, separators=(",", ":"), default=str).encode())
            digest.update(hashlib.sha256(result.encode("utf-8", "replace")).digest())
        key = digest.hexdigest()
        self.seen[key] += 1
        return self.seen[key]

    def should_nudge(self, count: int) -> bool:
        return self.limit > 0 and NUDGE_AT <= count < self.limit

    def should_stop(self, count: int) -> bool:
        return self.limit > 0 and count >= self.limit

    @staticmethod
    def nudge(count: int) -> str:
        return (
            f"\n\n[acp-agent] This exact call has returned this exact result {count} times in "
            f"this turn (identical to {count - 1} earlier calls); change approach instead of "
            "repeating it."
        )
