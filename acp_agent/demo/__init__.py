"""The offline demo: a recorded turn and the small sample project it works on (`workspace.py`).

`--model demo` replays `demo.jsonl` through the real SDK (no key, no network); the smoke runner
copies `sample/` to a scratch workspace so the demo never edits the user's own files.
"""
