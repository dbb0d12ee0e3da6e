"""`availableModels` and `enforceAvailableModels` of the managed policy: which models may be chosen.

An entry names a family (`sonnet`, `opus`, `haiku`, `fable`: every model of it), a version prefix
(`claude-sonnet-4-5`: that model and its dated ids) or a full id; an entry naming a specific model
of a family turns that family's word off (`["sonnet", "claude-sonnet-4-5"]` allows only Sonnet
4.5). A model matches by its Anthropic id (a Bedrock or Vertex form is read back to it) or as
written. As in Claude Code: an empty list blocks every named model, and the default model stays
usable; `enforceAvailableModels` (with a non-empty list) makes the default the first entry that
names a model when the default is outside the list.

Where a model is chosen, a blocked one is: refused for `session/set_config_option` and left out
of the choices; replaced by the default at session start, with a warning, for `--model`,
`ANTHROPIC_MODEL` and the `model` setting; ignored for a command's or a custom agent's `model`
(they run on the session's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acp_agent.config import BUILTIN_MODELS, DEFAULT_MODEL
from acp_agent.model.cloud.platform_ids import anthropic_id

__all__ = ["FAMILY_WORDS", "ModelAllowlist", "resolve_alias"]

FAMILY_WORDS = ("opus", "sonnet", "haiku", "fable")


def _family(model: str) -> str | None:
    return next((f for f in FAMILY_WORDS if f"-{f}-" in f"-{model}-"), None)


def resolve_alias(name: str) -> str:
    """A settings file's model as an id: a family word (`opus`, `sonnet[1m]`) is that family's
    built-in model, `default` the default model; anything else as written."""
    word = name.strip().removesuffix("[1m]").lower()
    if word == "default":
        return DEFAULT_MODEL
    if word in FAMILY_WORDS:
        return next((m for m in BUILTIN_MODELS if _family(m) == word), name.strip())
    return name.strip()


@dataclass(frozen=True, slots=True)
class ModelAllowlist:
    """The managed `availableModels` (None: every model may be chosen) and `enforceAvailableModels`."""

    entries: tuple[str, ...] | None = None
    enforce: bool = False
    source: str = ""
    """The policy file, for messages."""

    @property
    def active(self) -> bool:
        return self.entries is not None

    def allows(self, model: str) -> bool:
        """Whether `model` may be named (chosen, configured, or asked for by a command or agent)."""
        if self.entries is None:
            return True
        ids = {model, model.removesuffix("[1m]"), anthropic_id(model)}
        specific = {_family(e) for e in self.entries if e.lower() not in FAMILY_WORDS}
        for entry in self.entries:
            word = entry.lower()
            if word in FAMILY_WORDS:
                if word not in specific and any(_family(i) == word for i in ids):
                    return True
            elif any(i == entry or i.startswith(entry + "-") for i in ids):
                return True
        return False

    def default(self, fallback: str) -> str:
        """The model a session starts on when nothing allowed was chosen: `fallback` (the default
        model), or with `enforceAvailableModels` the first entry that names a model when
        `fallback` is outside a non-empty list (`fallback` still, when no entry names one)."""
        if not self.enforce or not self.entries or self.allows(fallback):
            return fallback
        for entry in self.entries:
            word = entry.lower()
            named = (
                next((m for m in BUILTIN_MODELS if _family(m) == word), None)
                if word in FAMILY_WORDS
                else entry
            )
            if named is not None and self.allows(named):
                return named
        return fallback

    def choose(self, wanted: str, fallback: str) -> tuple[str, str | None]:
        """`wanted` when it is allowed, else the default and the warning that says so."""
        if self.allows(wanted):
            return wanted, None
        chosen = self.default(fallback)
        return chosen, (
            f"the model {wanted} is not in availableModels of {self.source or 'the managed policy'} "
            f"({', '.join(self.entries or ()) or 'empty: only the default model'}): {chosen} is used"
        )

    def filtered(self, models: Sequence[str]) -> list[str]:
        """`models` less the blocked ones."""
        return [m for m in models if self.allows(m)]
