"""What a `--model` value names: a model id, or `replay:FILE`, a cassette to replay.

Its own small module because both the provider (at start-up) and the factory it loads late read it:
neither imports the other for it.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["REPLAY_PREFIX", "replay_path"]

REPLAY_PREFIX = "replay:"


def replay_path(model_spec: str) -> Path | None:
    """The cassette of a `replay:FILE` model spec, or None for a model id."""
    if not model_spec.startswith(REPLAY_PREFIX):
        return None
    return Path(model_spec.removeprefix(REPLAY_PREFIX)).expanduser()
