"""planner.optimize.solver.quiet_stdout: fd 1 goes to /dev/null while any use is open and comes back after the last."""

from __future__ import annotations

import os
import threading

from planner.optimize.solver import quiet_stdout


def _fd1_is_devnull() -> bool:
    null = os.stat(os.devnull)
    here = os.fstat(1)
    return (here.st_dev, here.st_ino) == (null.st_dev, null.st_ino)


def test_nested_uses_restore_fd1_once_the_outermost_ends() -> None:
    before = os.fstat(1).st_ino
    with quiet_stdout():
        assert _fd1_is_devnull()
        with quiet_stdout():
            assert _fd1_is_devnull()
        assert _fd1_is_devnull()  # the inner use ended, the outer one still holds fd 1
    assert not _fd1_is_devnull() and os.fstat(1).st_ino == before


def test_overlapping_uses_in_threads_restore_fd1_after_the_last() -> None:
    """A (which swapped fd 1) ends while B is still quiet: B stays quiet, and fd 1 comes back after B."""
    before = os.fstat(1).st_ino
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen_by_b: list[bool] = []

    def first() -> None:
        with quiet_stdout():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def second() -> None:
        a_in.wait(5)
        with quiet_stdout():
            b_in.set()
            a_out.wait(5)
            seen_by_b.append(_fd1_is_devnull())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen_by_b == [True]
    assert not _fd1_is_devnull() and os.fstat(1).st_ino == before
