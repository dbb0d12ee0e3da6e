"""The collector's start-up pause (`startup/collector.py`): undone only by its own resume, once,
with start-up's objects frozen."""

from __future__ import annotations

import gc
import textwrap
from collections.abc import Iterator

import pytest

from acp_agent.startup import collector as startup_gc
from tests.support.fresh import fresh_answer


@pytest.fixture
def collector() -> Iterator[None]:
    """Leave the test process's collector as it was (on, nothing frozen)."""
    was_on = gc.isenabled()
    try:
        yield
    finally:
        startup_gc.resume()
        gc.unfreeze()
        if was_on:
            gc.enable()


def test_pause_then_resume_freezes_what_start_up_made_and_collects_again(collector: None) -> None:
    gc.enable()
    startup_gc.pause()
    assert not gc.isenabled() and startup_gc.paused()
    startup_gc.resume()
    assert gc.isenabled() and not startup_gc.paused()
    assert gc.get_freeze_count() > 0
    frozen = gc.get_freeze_count()
    startup_gc.resume()  # a second resume changes nothing
    assert gc.get_freeze_count() == frozen


def test_freeze_keeps_it_paused_and_resume_then_freezes_nothing_more(collector: None) -> None:
    gc.enable()
    startup_gc.pause()
    startup_gc.freeze()
    frozen = gc.get_freeze_count()
    assert frozen > 0 and not gc.isenabled() and startup_gc.paused()
    made_after = [[] for _ in range(1000)]  # tracked containers made after the freeze
    startup_gc.resume()
    assert gc.isenabled() and gc.get_freeze_count() == frozen  # collected as usual from now on
    assert made_after


def test_a_collector_someone_else_turned_off_stays_off(collector: None) -> None:
    gc.disable()
    startup_gc.pause()
    startup_gc.freeze()
    startup_gc.resume()
    assert not gc.isenabled() and gc.get_freeze_count() == 0


SUB_COMMAND = textwrap.dedent("""
    import gc, json, sys
    import acp_agent.harness.smoke

    def smoke_main(argv):
        print(json.dumps({"collecting": gc.isenabled()}))
        return 0

    acp_agent.harness.smoke.smoke_main = smoke_main
    from acp_agent.__main__ import main
    sys.argv = ["acp-agent", "smoke"]
    raise SystemExit(main())
""")


def test_a_sub_command_runs_with_the_collector_on() -> None:
    """Only serving keeps it paused past start-up (until its session layer is built)."""
    assert fresh_answer(SUB_COMMAND, timeout=60) == {"collecting": True}
