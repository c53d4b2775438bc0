"""A gating hook step that does not answer in time refuses its call itself.

Claude Code cancels a command hook at its ``timeout`` (600 s unless the entry sets one) and then
goes on: "a timed-out command hook doesn't block the tool call", it continues through the host's
own permission flow. A ``pre`` or ``permission-request`` step stuck on something the agent can
arrange (a FIFO where a file is read, a lock or a disk that hangs) would so let the call run
unjudged. :class:`Deadline` bounds the step: when it has not answered within its seconds, the
refusal the host honours at that event is written and the process ends (``pre``: exit 2, the
reason on stderr; ``permission-request``: the ``deny`` decision, exit 0). The call is not
recorded then: the step never got as far as judging it. A ``post`` step is bounded the same
way: the call has run, so past its deadline it keeps a fault for the session's next event to
record (:func:`.hook_faults.keep_unfinished`) and exits 1. The host cancels a hook at its entry's
own ``timeout`` by ending it (``SIGTERM``), which may come before the deadline: a post step
then keeps its fault the same way (:meth:`Deadline.on_cancel`) before it ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Seconds a gating step may take before it refuses its call: well under the host's default
#: timeout (600 s), well over what a step takes (a lock is waited for 15 s at most).
DEADLINE_S = 120.0


@dataclass(frozen=True)
class Refusal:
    """What the process writes, and its exit code, when its deadline passes."""

    stdout: str
    stderr: str
    code: int


class Deadline:
    """Ends the process with ``refusal`` unless :meth:`finish` is called within ``seconds``;
    ``last_word`` runs first (a post step keeps its fault for the next event)."""

    def __init__(
        self, seconds: float, refusal: Refusal, last_word: Callable[[], object] | None = None
    ) -> None:
        self._refusal = refusal
        self._last_word = last_word
        # re-entrant: a cancellation's handler runs in the main thread, maybe inside finish()
        self._lock = threading.RLock()
        self._over = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        #: The SIGTERM handler :meth:`on_cancel` replaced (``None``: none replaced).
        self._before: signal.Handlers | Callable[[int, Any], Any] | int | None = None

    def start(self) -> Deadline:
        """Start counting; returns ``self``."""
        self._timer.start()
        return self

    def on_cancel(self, refusal: Refusal, last_word: Callable[[], object]) -> Deadline:
        """Unless the step has answered, a ``SIGTERM`` (the host cancelling the hook at its
        ``timeout``) runs ``last_word`` and ends the process with ``refusal``; returns ``self``."""

        def cancelled(signum: int, frame: object) -> None:
            with self._lock:
                if self._over:
                    os._exit(128 + signum)  # answered, or the deadline is ending the process
                self._over = True
                self._timer.cancel()
                self._end(refusal, last_word)

        with contextlib.suppress(ValueError):  # only the main thread takes signals
            self._before = signal.signal(signal.SIGTERM, cancelled)
        return self

    def finish(self) -> None:
        """The step answers itself: the deadline no longer ends the process. Called after the
        deadline has passed, it never returns (the process is ending)."""
        with self._lock:
            self._over = True
        self._timer.cancel()
        if self._before is not None:  # the process's own handling of SIGTERM back
            with contextlib.suppress(ValueError):
                signal.signal(signal.SIGTERM, self._before)
            self._before = None

    def _expire(self) -> None:
        with self._lock:
            if self._over:
                return
            self._over = True
            self._end(self._refusal, self._last_word)

    @staticmethod
    def _end(refusal: Refusal, last_word: Callable[[], object] | None) -> None:
        if last_word is not None:
            with contextlib.suppress(Exception):  # the refusal is written whatever it does
                last_word()
        # straight to the descriptors: the main thread may be stuck inside a buffered write
        for fd, text in ((1, refusal.stdout), (2, refusal.stderr)):
            if text:
                with contextlib.suppress(OSError):
                    os.write(fd, text.encode("utf-8", "backslashreplace"))
        os._exit(refusal.code)


__all__ = ["DEADLINE_S", "Deadline", "Refusal"]
