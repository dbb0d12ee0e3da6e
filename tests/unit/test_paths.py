"""Path confinement: nothing a tool touches may resolve outside the session's roots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_agent.errors import PathOutsideCwd, ToolError
from acp_agent.tools.paths import display_path, name_glob, resolve_inside


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    (r / "src").mkdir(parents=True)
    (r / "src" / "app.py").write_text("print()\n")
    return r


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    o = tmp_path / "outside"
    o.mkdir()
    (o / "secret.txt").write_text("secret\n")
    return o


def test_relative_path_resolves_against_the_root(root: Path) -> None:
    assert resolve_inside(root, "src/app.py") == root / "src" / "app.py"
    assert resolve_inside(root, ".") == root
    assert resolve_inside(root, "src/../src/./app.py") == root / "src" / "app.py"


def test_missing_file_inside_the_root_is_allowed(root: Path) -> None:
    assert resolve_inside(root, "new/file.txt") == root / "new" / "file.txt"


@pytest.mark.parametrize("path", ["..", "../outside/secret.txt", "src/../../outside", "src/../.."])
def test_dotdot_that_leaves_the_root_is_refused(root: Path, path: str) -> None:
    with pytest.raises(PathOutsideCwd) as info:
        resolve_inside(root, path)
    assert repr(path) in str(info.value)
    assert "outside the working directory" in str(info.value)


def test_absolute_path_outside_the_root_is_refused(root: Path, outside: Path) -> None:
    with pytest.raises(PathOutsideCwd, match="outside the working directory"):
        resolve_inside(root, str(outside / "secret.txt"))
    with pytest.raises(PathOutsideCwd):
        resolve_inside(root, "/etc/passwd")


def test_absolute_path_inside_the_root_is_allowed(root: Path) -> None:
    target = root / "src" / "app.py"
    assert resolve_inside(root, str(target)) == target


def test_sibling_with_the_root_as_name_prefix_is_outside(tmp_path: Path, root: Path) -> None:
    (tmp_path / "root2").mkdir()
    with pytest.raises(PathOutsideCwd):
        resolve_inside(root, str(tmp_path / "root2"))


def test_symlinked_file_pointing_outside_is_refused(root: Path, outside: Path) -> None:
    (root / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(PathOutsideCwd) as info:
        resolve_inside(root, "link.txt")
    message = str(info.value)
    assert "'link.txt'" in message and "symlink" in message
    assert "outside the working directory" in message


def test_symlinked_directory_pointing_outside_is_refused(root: Path, outside: Path) -> None:
    (root / "src" / "ext").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathOutsideCwd):
        resolve_inside(root, "src/ext/secret.txt")
    with pytest.raises(PathOutsideCwd):
        resolve_inside(root, "src/ext")
    with pytest.raises(PathOutsideCwd):
        resolve_inside(root, str(root / "src" / "ext" / "new-file"))


def test_dangling_symlink_pointing_outside_is_refused(root: Path, outside: Path) -> None:
    (root / "dangling").symlink_to(outside / "does-not-exist")
    with pytest.raises(PathOutsideCwd):
        resolve_inside(root, "dangling")


def test_symlink_then_dotdot_is_resolved_like_the_os_does(root: Path, outside: Path) -> None:
    deep = outside / "a" / "b"
    deep.mkdir(parents=True)
    (root / "jump").symlink_to(deep, target_is_directory=True)
    # Lexically "jump/.." is the root; the OS follows the link first and lands in outside/a.
    with pytest.raises(PathOutsideCwd):
        resolve_inside(root, "jump/..")


def test_chain_of_links_that_ends_outside_is_refused(root: Path, outside: Path) -> None:
    (root / "hop2").symlink_to(outside / "secret.txt")
    (root / "hop1").symlink_to(root / "hop2")
    with pytest.raises(PathOutsideCwd):
        resolve_inside(root, "hop1")


def test_symlinks_that_stay_inside_are_followed(root: Path) -> None:
    (root / "alias").symlink_to(root / "src", target_is_directory=True)
    (root / "pending").symlink_to("src/not-yet.py")  # dangling, relative, inside
    assert resolve_inside(root, "alias/app.py") == root / "src" / "app.py"
    assert resolve_inside(root, "pending") == root / "src" / "not-yet.py"


def test_root_reached_through_a_symlink_accepts_both_spellings(tmp_path: Path, root: Path) -> None:
    alias = tmp_path / "alias-of-root"
    alias.symlink_to(root, target_is_directory=True)
    assert resolve_inside(alias, "src/app.py") == root / "src" / "app.py"
    assert resolve_inside(alias, str(alias / "src" / "app.py")) == root / "src" / "app.py"


def test_several_roots_relative_to_the_first_absolute_in_any(
    tmp_path: Path, root: Path, outside: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    roots = (root, extra)
    assert resolve_inside(roots, "src/app.py") == root / "src" / "app.py"
    assert resolve_inside(roots, str(extra / "notes.md")) == extra / "notes.md"
    with pytest.raises(PathOutsideCwd):
        resolve_inside(roots, str(outside / "secret.txt"))


@pytest.mark.parametrize("bad", ["", "src/\0app.py"])
def test_unusable_path_strings_are_tool_errors_not_escapes(root: Path, bad: str) -> None:
    with pytest.raises(ToolError) as info:
        resolve_inside(root, bad)
    assert not isinstance(info.value, PathOutsideCwd)


def test_display_path_is_relative_to_the_root(root: Path, outside: Path) -> None:
    assert display_path(root, root / "src" / "app.py") == "src/app.py"
    assert display_path(root, root) == "."
    assert display_path(root, outside) == str(outside)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*", "a", True),
        ("**/*", "a/b/c.txt", True),
        ("**/*.py", "app.py", True),
        ("**/*.py", "src/deep/app.py", True),
        ("**/*.py", "src/app.pyc", False),
        ("*.py", "app.py", True),
        ("*.py", "src/app.py", False),
        ("src/*.py", "src/app.py", True),
        ("src/**", "src/a/b", True),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file10.txt", False),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "b.txt", False),
        ("[!ab].txt", "c.txt", True),
        ("a+b(1).txt", "a+b(1).txt", True),
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    assert name_glob(pattern).matches(path) is matches


def test_a_shown_name_resolves_back_to_the_non_utf8_file(root: Path) -> None:
    real = os.fsencode(root) + b"/d\xe9j\xe0/caf\xe9.txt"
    os.makedirs(os.path.dirname(real))
    with open(real, "wb") as f:
        f.write(b"x")
    assert os.fsencode(resolve_inside(root, "d\\xe9j\\xe0/caf\\xe9.txt")) == real
    new = resolve_inside(root, "d\\xe9j\\xe0/new.txt")  # a new file in that directory
    assert os.fsencode(new) == os.path.dirname(real) + b"/new.txt"
    (root / "lit\\xe9").write_text("a file really named with a backslash")
    assert resolve_inside(root, "lit\\xe9") == root.resolve() / "lit\\xe9"
    assert resolve_inside(root, "gone\\xe9") == root.resolve() / "gone\\xe9"
    # Only bytes 80-ff are ever shown escaped: "\\x2f" stays four characters, never a "/".
    assert resolve_inside(root, "..\\x2f..") == root.resolve() / "..\\x2f.."
