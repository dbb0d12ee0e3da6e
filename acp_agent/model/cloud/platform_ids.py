"""Model ids per platform: the agent thinks in Anthropic ids, each platform's client sends its own.

A session's model is an Anthropic id wherever one is known (`claude-sonnet-5-5`), so its profile,
price and choices are the built-in table's; the id a request carries is the platform's
(`wire`): a Bedrock cross-region inference profile (`us.anthropic.claude-sonnet-5-5`), a Vertex
`@` version (`claude-haiku-4-5@20251001`), Mantle's `anthropic.` id, a Foundry deployment (by default
named as the model). `ANTHROPIC_DEFAULT_{OPUS,SONNET,HAIKU}_MODEL` pin a family to any id, an
application inference profile ARN included: the family's built-in model is then sent as the pin.
An id already in the platform's form (or an ARN) is sent as given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["FAMILIES", "ModelIds", "anthropic_id", "bedrock_prefix", "model_ids"]

FAMILIES = ("opus", "sonnet", "haiku")

_BUILTIN_BY_FAMILY = {"sonnet": "claude-sonnet-5-5", "opus": "claude-opus-5-5", "haiku": "claude-haiku-5-5"}
"""The built-in model of each family (`config.BUILTIN_MODELS`, which this leaf of `model/` does not
import: the table test keeps the two equal)."""

_UNDATED_VERSIONS = {"claude-haiku-4-5": "20251001"}
"""Older models whose platform ids need a date the Anthropic alias leaves out."""

_PREFIXES = ("us-gov", "us", "eu", "apac", "jp", "au", "global")
_DATED = re.compile(r"^(claude-[a-z0-9-]+?)-(\d{8})$")
_PLATFORM_FORM = re.compile(r"^(?:(?:us-gov|us|eu|apac|jp|au|global)\.)?anthropic\.(.+?)(?:-v\d+(?::\d+)?)?$")


def bedrock_prefix(region: str, override: str | None = None) -> str:
    """The cross-region profile prefix for `region` (`ANTHROPIC_BEDROCK_REGION_PREFIX` wins)."""
    if override and override in _PREFIXES:
        return override
    if region.startswith("us-gov-"):
        return "us-gov"
    if region.startswith(("us-", "ca-")):
        return "us"
    if region.startswith("eu-"):
        return "eu"
    if region in ("ap-northeast-1", "ap-northeast-3"):
        return "jp"
    if region in ("ap-southeast-2", "ap-southeast-4"):
        return "au"
    if region.startswith("ap-"):
        return "apac"
    return "global"


def anthropic_id(model: str) -> str:
    """The Anthropic id a platform id names, for its profile and price: `us.anthropic.claude-x-v1:0`
    → `claude-x`, `claude-x@20251001` → `claude-x-20251001`; anything else as given."""
    model = model.removesuffix("[1m]")
    if "@" in model:
        name, _, version = model.partition("@")
        return f"{name}-{version}" if version.isdigit() else name
    found = _PLATFORM_FORM.match(model)
    return found.group(1) if found else model


def _family(model: str) -> str | None:
    return next((f for f in FAMILIES if f"-{f}-" in f"-{model}-"), None)


@dataclass(frozen=True, slots=True)
class ModelIds:
    """How one platform names models: the pins, the configured model and the wire form."""

    platform: str
    prefix: str = ""
    """Bedrock's cross-region prefix (us, eu, apac, jp, au, global, us-gov)."""
    pins: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """family → (the pinned id, the variable that pinned it)."""
    configured: tuple[str, str] | None = None
    """`ANTHROPIC_MODEL` (the id, the variable), when set."""

    def session_model(self, model: str) -> str:
        """The id the agent uses for `model` (a configured or chosen one): a pinned id is its
        family's built-in model, anything else as given."""
        for family, (pinned, _) in self.pins.items():
            if model == pinned:
                return _BUILTIN_BY_FAMILY[family]
        return model

    def wire(self, model: str) -> str:
        """The id a request on this platform carries for the agent's `model`."""
        model = model.removesuffix("[1m]")
        family = _family(model)
        if family is not None and model == _BUILTIN_BY_FAMILY[family] and family in self.pins:
            return self.pins[family][0]
        if self.platform == "bedrock":
            if model.startswith("arn:") or _PLATFORM_FORM.match(model) or not model.startswith("claude-"):
                return model
            return f"{self.prefix}.anthropic.{self._dated(model, '-')}" + (
                "-v1:0" if _DATED.match(self._dated(model, "-")) else ""
            )
        if self.platform == "mantle":
            return (
                model
                if model.startswith("anthropic.") or not model.startswith("claude-")
                else f"anthropic.{model}"
            )
        if self.platform == "vertex":
            if "@" in model or not model.startswith("claude-"):
                return model
            dated = _DATED.match(self._dated(model, "-"))
            return f"{dated.group(1)}@{dated.group(2)}" if dated else model
        return model

    @staticmethod
    def _dated(model: str, sep: str) -> str:
        version = _UNDATED_VERSIONS.get(model)
        return f"{model}{sep}{version}" if version else model

    @property
    def platform_specific(self) -> bool:
        """Whether requests carry other ids than the agent shows."""
        return self.platform in ("bedrock", "mantle", "vertex") or bool(self.pins)

    def status_lines(self) -> list[str]:
        lines = []
        if self.configured is not None:
            lines.append(f"Model configured: {self.configured[0]} (from {self.configured[1]})")
        for family, (pinned, var) in self.pins.items():
            lines.append(f"Model for {family}: {_BUILTIN_BY_FAMILY[family]} is sent as {pinned} (from {var})")
        if self.platform == "bedrock":
            lines.append(f"Model ids: Anthropic ids are sent as {self.prefix}.anthropic.… inference profiles")
        return lines

    def choices(self) -> list[str]:
        """The model choices when the platform has no Models API: the configured model and each
        family's built-in model (sent as its pin where one is set)."""
        choices = [self.session_model(self.configured[0])] if self.configured else []
        return list(dict.fromkeys([*choices, *_BUILTIN_BY_FAMILY.values()]))


def model_ids(platform: str, env: Mapping[str, str], *, region: str = "") -> ModelIds:
    """The model naming of `platform` from `env`."""
    pins = {}
    for family in FAMILIES:
        var = f"ANTHROPIC_DEFAULT_{family.upper()}_MODEL"
        value = env.get(var, "").strip()
        if value:
            pins[family] = (value, var)
    configured = env.get("ANTHROPIC_MODEL", "").strip()
    prefix = bedrock_prefix(region, env.get("ANTHROPIC_BEDROCK_REGION_PREFIX", "").strip() or None)
    return ModelIds(
        platform,
        prefix=prefix if platform == "bedrock" else "",
        pins=pins,
        configured=(configured, "ANTHROPIC_MODEL") if configured else None,
    )
