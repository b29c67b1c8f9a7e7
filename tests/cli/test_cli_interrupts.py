"""Ctrl-C during a page write is held back until the page is whole."""

from __future__ import annotations

import os
import signal

import pytest

from service_api_cli._interrupts import InterruptGuard


def test_sigint_inside_critical_is_raised_after_the_block() -> None:
    written: list[int] = []
    with InterruptGuard() as guard, pytest.raises(KeyboardInterrupt):  # noqa: PT012
        with guard.critical():
            os.kill(os.getpid(), signal.SIGINT)
            written.extend([1, 2, 3])
        written.append(99)  # never reached: the interrupt fires at the block's end
    assert written == [1, 2, 3]


def _interrupt_then_spin() -> None:
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):  # the handler runs between bytecodes, before this loop ends
        pass


def test_sigint_outside_critical_is_raised_at_once() -> None:
    with InterruptGuard(), pytest.raises(KeyboardInterrupt):
        _interrupt_then_spin()


def test_an_error_in_the_block_is_not_hidden_by_a_pending_interrupt() -> None:
    def write_fails(guard: InterruptGuard) -> None:
        with guard.critical():
            os.kill(os.getpid(), signal.SIGINT)
            raise ValueError("disk full")

    with InterruptGuard() as guard, pytest.raises(ValueError, match="disk full"):
        write_fails(guard)


def test_the_previous_handler_is_restored() -> None:
    before = signal.getsignal(signal.SIGINT)
    with InterruptGuard():
        assert signal.getsignal(signal.SIGINT) is not before
    assert signal.getsignal(signal.SIGINT) is before
