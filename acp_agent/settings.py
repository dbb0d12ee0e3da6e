"""How a field of `Config` or `Limits` is set from outside: the `Setting` it carries, and its binding.

A `Setting` sits in a field's `Annotated` type and says only what the field cannot: its help, its
environment variable, its group and how its flag reads. `declared_in` binds each one to its field's
name, type and default, which pydantic keeps, so that `--help` (`cli.py`), the environment reading
(`Config.from_sources`) and the configuration page's table (`scripts/config_table.py`) write nothing twice.
`config.settings()` is the bound list of every setting.

A leaf beside `config.py`, imported on the handshake path: it imports nothing of the package.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["GROUPS", "Setting", "SettingKind", "declared_in", "domain_lists", "in_help_order"]

GROUPS = ("model", "per-turn limits", "turn strategy", "sessions", "protocol")
"""The sections of `acp-agent --help` and of the configuration page's table, in order."""

SettingKind = Literal["value", "on_off", "both", "set", "unset"]


@dataclass(frozen=True, slots=True)
class Setting:
    """How one field is set from outside: put in its type, `Annotated[int, Setting(...)]`.

    Declared with what only it knows (help, variable, how the flag reads); `declared_in` binds the
    field's own name, type and default, which pydantic keeps, so those are never repeated.
    """

    help: str
    """What it sets, for `--help` and the configuration page (the default and the variable are added)."""
    env: str | None = None
    group: str = "model"
    unset: str = "off"
    """What a None default means, in words."""
    kind: SettingKind = "value"
    """value: `--flag VALUE`; on_off: `--flag on|off`; both: `--flag` / `--no-flag`;
    set: `--flag` turns it on; unset: the flag (named `--no-…`) turns it off."""
    flag: str | None = None
    """The flag, when it is not `--field-name`."""
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    # bound by declared_in() from the field:
    name: str = ""
    default: Any = None
    value_type: type = str
    per_turn: bool = False
    """It lives in `Limits` (a session may override it), not in `Config` itself."""

    @property
    def flag_name(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def default_text(self) -> str:
        """The default as `--help` and the configuration page show it."""
        if self.kind in ("set", "unset"):
            return "off"  # the switch is not given
        if self.default is None:
            return self.unset
        if isinstance(self.default, bool):
            return "on" if self.default else "off"
        if isinstance(self.default, float):
            return format(self.default, "g")
        return str(self.default)

    def parse(self, raw: str) -> Any:
        """An environment value as the field takes it.

        Raises:
            ValueError: it does not parse; the message names the variable.
        """
        if self.value_type is bool:
            if raw.strip().lower() in {"1", "true", "yes", "on"}:
                return True
            if raw.strip().lower() in {"0", "false", "no", "off"}:
                return False
            raise ValueError(f"{self.env} must be on or off (1 or 0), not {raw!r}")
        if self.value_type in (int, float):
            try:
                return self.value_type(raw)
            except ValueError:
                raise ValueError(f"{self.env} must be a number, not {raw!r}") from None
        return raw


def declared_in(model: type[BaseModel], *, per_turn: bool = False) -> list[Setting]:
    """The settings on `model`'s fields, in field order, each bound to its field's name, type and default."""
    return [
        dataclasses.replace(
            meta,
            name=name,
            default=field.default,
            value_type=_value_type(field.annotation),
            per_turn=per_turn,
        )
        for name, field in model.model_fields.items()
        for meta in field.metadata
        if isinstance(meta, Setting)
    ]


def in_help_order(found: Iterable[Setting]) -> tuple[Setting, ...]:
    """By group (as `GROUPS` orders them), then in the order given."""
    return tuple(sorted(found, key=lambda s: GROUPS.index(s.group)))


def _value_type(annotation: Any) -> type:
    """The type a setting's value has, without its None: `int | None` → int."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        (annotation,) = (a for a in typing.get_args(annotation) if a is not type(None))
    return annotation if isinstance(annotation, type) else str


def domain_lists(allowed: Any, blocked: Any, names: tuple[str, str]) -> tuple[tuple[str, ...], ...]:
    """The web tools' `allowed_domains` and `blocked_domains`, checked: each a list of domains (or
    one comma-separated string), at most one of them set (the API refuses both at once).

    A domain is a host name, optionally with a path (`docs.python.org/3`), without a scheme.

    Raises:
        ValueError: naming the field (`names`: the two fields as the user wrote them).
    """
    lists = tuple(_domains(name, value) for name, value in zip(names, (allowed, blocked), strict=True))
    if all(lists):
        raise ValueError(f"{names[0]} and {names[1]}: set one or the other (the API refuses both at once)")
    return lists


def _domains(field: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple):
        raise ValueError(f"{field}: must be a list of domains (or one comma-separated string)")
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ValueError(f"{field}: {item!r} is not a domain")
        if "://" in item or item.strip().startswith("/") or any(c.isspace() for c in item.strip()):
            raise ValueError(f"{field}: {item!r} is not a domain (no scheme: e.g. docs.python.org)")
    return tuple(item.strip() for item in value)
