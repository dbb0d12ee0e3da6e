"""Shown text: whatever a name or a client holds, what reaches the model is valid UTF-8."""

from __future__ import annotations

from acp_agent.tools.shown import shown, shown_value, unshown


def test_escaped_bytes_become_visible_and_come_back() -> None:
    name = b"caf\xe9-\xff.txt".decode("utf-8", "surrogateescape")
    assert shown(name) == "caf\\xe9-\\xff.txt"
    assert unshown(shown(name)) == name


def test_other_lone_surrogates_become_the_replacement_character_and_pairs_join() -> None:
    assert shown("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert shown("\ud83d\ude00") == "\U0001f600"
    shown("\ud800\ud800\udc00x").encode("utf-8")


def test_clean_values_are_returned_as_they_are() -> None:
    value = {"a": ["é", {"b": "ok"}], "c": 1}
    assert shown_value(value) is value
    dirty = {"k\udce9": ["x", {"b": "\ud800"}], "n": None}
    assert shown_value(dirty) == {"k\\xe9": ["x", {"b": "\ufffd"}], "n": None}


def test_a_control_character_in_a_path_is_shown_escaped_and_comes_back() -> None:
    from acp_agent.tools.shown import shown_path

    name = "x\ninnocent\t\x7f.txt"
    assert shown_path(name) == "x\\x0ainnocent\\x09\\x7f.txt"
    assert unshown(shown_path(name)) == name
    assert shown_path("plain/é.txt") == "plain/é.txt"
