"""A repository-shaped tree for testing and benchmarking file listing and search.

It has what a real checkout has and a tidy workspace lacks: generated output and logs listed in
nested `.gitignore`s, a `.ignore`, a `.git/info/exclude` entry, hidden files, a large ignored
log, binary files, and symlinks that point out of the tree. The tests build a small one; the
bench builds one with 20,000 tracked and 20,000 ignored files (`bench/search.py`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RepoShape", "make_repo"]

_SOURCE = '''"""Module {n}."""


def url_for(endpoint, **values):
    return "/" + endpoint  # {n}


class Handler{n}:
    def dispatch(self, request):
        return url_for("index", page={n})
'''
_PLAIN = "value = {n}\nname = 'plain {n}'\n"


@dataclass(frozen=True, slots=True)
class RepoShape:
    """How big to make it: files kept by the ignore rules, files they leave out, the log's size."""

    tracked: int = 200
    ignored: int = 200
    log_bytes: int = 256 * 1024
    per_dir: int = 40


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make_repo(root: Path, shape: RepoShape = RepoShape(), *, outside: Path | None = None) -> Path:
    """Build the tree under `root` (made if missing); `outside` is a directory the symlinks reach."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "info" / "exclude").write_text("secret.txt\n")
    _write(root / ".gitignore", "build/\n*.log\n!keep.log\n/dist\n__pycache__/\n")
    _write(root / ".ignore", "vendor/\n")
    _write(root / ".github" / "workflows" / "ci.yml", "name: ci  # url_for\n")
    _write(root / ".env", "URL_FOR=1\n")
    _write(root / "secret.txt", "url_for secret\n")
    _write(root / "keep.log", "def url_for kept log\n")
    _write(root / "README.md", "# Fixture\nuse url_for to build links\n")
    (root / "image.bin").write_bytes(b"def url_for\0\x01\x02binary")
    with open(root / "big.log", "wb") as log:
        line = b"2026-11-24 GET /url_for 200 def url_for\n"
        for _ in range(max(shape.log_bytes // len(line), 1)):
            log.write(line)
    # Tracked sources, with a nested .gitignore (and a negation) in every package.
    for n in range(shape.tracked):
        package = root / "src" / f"pkg{n // (shape.per_dir * 5):03d}"
        module = package / f"mod{(n // shape.per_dir) % 5}"
        if not (package / ".gitignore").exists():
            _write(package / ".gitignore", "generated/\n*.tmp\n!keep.tmp\n")
        text = (_SOURCE if n % 3 == 0 else _PLAIN).format(n=n)
        _write(module / f"file{n:05d}.py", text)
        if n % 50 == 0:
            _write(module / "keep.tmp", f"def url_for kept {n}\n")
    # Ignored ones: build output, vendored code, generated files, caches.
    places = ("build/lib", "vendor/lib", "src/pkg000/generated", "dist", "src/__pycache__")
    for n in range(shape.ignored):
        where = root / places[n % len(places)] / f"d{n // (shape.per_dir * len(places)):03d}"
        _write(where / f"out{n:05d}.py", _SOURCE.format(n=n))
        if n % 100 == 0:
            _write(root / "src" / "pkg000" / "mod0" / f"scratch{n}.tmp", "def url_for tmp\n")
    if outside is not None:
        outside.mkdir(parents=True, exist_ok=True)
        _write(outside / "escaped.py", "def url_for(): escaped\n")
        os.symlink(outside, root / "src" / "outside_dir", target_is_directory=True)
        os.symlink(outside / "escaped.py", root / "src" / "outside_file.py")
    return root
