"""The warden (`process/lifetime.py`, `process/warden.py`): once the pipe its owner holds closes,
every process carrying the owner's mark is stopped, SIGKILL for one that ignores SIGTERM, and
nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from acp_agent.process import warden
from acp_agent.process.lifetime import OWNER, inherited_env, owned_env
from tests.support.procs import alive, gone, marked_sleep, started

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@contextmanager
def _sleeps(*commands: tuple[str, dict[str, str]]) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [subprocess.Popen(["sh", "-c", line], env=env, start_new_session=True) for line, env in commands]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


async def test_the_warden_stops_what_carries_its_mark_once_the_pipe_closes() -> None:
    mark = f"{OWNER}=test{os.getpid()}"
    stubborn, plain, stranger = marked_sleep(), marked_sleep(), marked_sleep()
    marked = {**os.environ, OWNER: mark.split("=", 1)[1]}
    reading, writing = os.pipe()
    keeper = subprocess.Popen([sys.executable, "-I", "-S", warden.__file__, mark], stdin=reading)
    os.close(reading)
    with _sleeps(
        (f"trap '' TERM; exec {stubborn}", marked),  # ignores SIGTERM (kept across exec)
        (f"exec {plain}", marked),
        (f"exec {stranger}", dict(os.environ)),
    ):
        pids = {line: await started(line) for line in (stubborn, plain, stranger)}
        os.close(writing)  # as the owner's death would
        await gone([*pids[stubborn], *pids[plain]])
        assert keeper.wait(timeout=30) == 0
        assert all(alive(pid) for pid in pids[stranger])  # not ours: left alone


def test_a_childs_environment_carries_this_processs_one_mark() -> None:
    env = owned_env({"A": "1"})
    assert env == {"A": "1", OWNER: env[OWNER]} and len(env[OWNER]) == 16
    inherited = inherited_env()  # this process's environment is not marked: a marked copy
    assert inherited is not None and inherited[OWNER] == env[OWNER]
    assert inherited["PATH"] == os.environ["PATH"]


def test_once_the_process_is_marked_a_child_inherits_its_environment_as_it_is() -> None:
    script = (
        "import os; from acp_agent.process.lifetime import OWNER, inherited_env, mark_process, owned_env\n"
        "mark_process()\n"
        "print(inherited_env() is None, os.environ[OWNER] == owned_env({})[OWNER] != 'parent')"
    )
    env = {**os.environ, OWNER: "parent"}  # a harness's mark is replaced by this process's own
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "True"], done.stderr


def test_a_process_that_started_its_warden_exits_without_a_word_about_it(tmp_path: Path) -> None:
    """The warden outlives its owner by design, so the owner keeps no `Popen` of it that would be
    collected at exit while it runs (a ResourceWarning, shown wherever warnings are); and the
    warden holds no descriptor the owner inherited, nor the owner's cwd."""
    inherited = tmp_path / "inherited"
    script = (
        "import json, os; from acp_agent.process.lifetime import OWNER, owned_env\n"
        f"fd = os.open({str(inherited)!r}, os.O_WRONLY | os.O_CREAT); os.set_inheritable(fd, True)\n"
        "mark = f'{OWNER}={owned_env()[OWNER]}'.encode()\n"
        "def warden():\n"
        "    for pid in filter(str.isdigit, os.listdir('/proc')):\n"
        "        try:\n"
        "            with open(f'/proc/{pid}/cmdline', 'rb') as f:\n"
        "                if mark in f.read().split(b'\\0') and os.readlink(f'/proc/{pid}/cwd') == '/':\n"
        "                    fds = f'/proc/{pid}/fd'\n"
        "                    return [os.readlink(f'{fds}/{n}') for n in os.listdir(fds)]\n"
        "        except OSError:\n"
        "            continue\n"
        "while (held := warden()) is None: pass\n"  # until its exec and chdir are done
        "print(json.dumps(held))"
    )
    done = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    held = json.loads(done.stdout)
    assert str(inherited) not in held and "/dev/null" in held
