"""Text that can always be sent: names and strings shown to the model are valid Unicode.

Python keeps an undecodable file-name byte as a lone surrogate (`os.listdir` gives `caf\\udce9.txt`
for the Latin-1 `café.txt`), and a JavaScript client may send a lone surrogate in a prompt. Neither
can be encoded as UTF-8, so one such string in the history breaks every later request. `shown()`
makes a string encodable: an escaped byte becomes a visible `\\xNN`, a surrogate pair its
character, any other lone surrogate U+FFFD. `unshown()` turns a shown path back into the real
name, so the model can read and edit a file by the name it was shown.
"""

from __future__ import annotations

import json
import re
from typing import TypeVar

__all__ = ["has_escape", "shown", "shown_path", "shown_value", "unshown"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR_OR_LONE = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
_SHOWN_BYTE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F]|1[0-9a-fA-F]|7[fF])")
_CONTROL = re.compile("[\x01-\x1f\x7f]")
_T = TypeVar("_T")


def _one(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 2:  # a surrogate pair left unjoined (as a UTF-16 decoder would join it)
        return found.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    code = ord(found)
    if 0xDC80 <= code <= 0xDCFF:  # a byte `surrogateescape` could not decode
        return f"\\x{code - 0xDC00:02x}"
    return "\ufffd"


def shown(text: str) -> str:
    """`text` made UTF-8 encodable; the same object when it already is (the common case)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _PAIR_OR_LONE.sub(_one, text)


def shown_value(value: _T) -> _T:
    """`shown()` applied to every string (keys too) in a JSON-like value; copies only what changes.

    Nearly every value is clean: one C-speed encode of its JSON proves it (a whole reply of
    thousands of blocks in one pass) before anything is walked in Python.
    """
    if isinstance(value, dict | list):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError):  # a lone surrogate (UnicodeEncodeError), or not plain JSON
            pass
        else:
            return value
    return _shown_value(value)


def _shown_value(value: _T) -> _T:
    if isinstance(value, str):
        return shown(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        pairs = [(_shown_value(key), _shown_value(item)) for key, item in value.items()]
        if all(
            new_key is key and new_item is item
            for (new_key, new_item), (key, item) in zip(pairs, value.items(), strict=True)
        ):
            return value
        return dict(pairs)  # type: ignore[return-value]
    if isinstance(value, list):
        items = [_shown_value(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items  # type: ignore[return-value]
    return value


def shown_path(path: str) -> str:
    """A file name as listed to the model: `shown()`, and a control character (a newline in a
    name would read as two lines: "x\\ninnocent.txt") as a visible `\\xNN` too."""
    if _CONTROL.search(path) is not None:
        path = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", path)
    return shown(path)


def has_escape(path: str) -> bool:
    return "\\x" in path and _SHOWN_BYTE.search(path) is not None


def unshown(path: str) -> str:
    """The real name behind a shown one: each `\\xNN` back to the byte it stands for (80-ff, as
    `os.fsdecode` keeps an undecodable byte; a control character as itself)."""
    return _SHOWN_BYTE.sub(_byte, path)


def _byte(match: re.Match[str]) -> str:
    code = int(match.group(1), 16)
    return chr(0xDC00 + code if code >= 0x80 else code)
