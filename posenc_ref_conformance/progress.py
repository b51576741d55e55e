"""Progress of a ``posenc-ref check`` run on a terminal: one line on stderr, redrawn in place.

Shown only when the stream is a terminal and the run has lasted :data:`DELAY`
seconds (quick runs and pipes, CI logs included, see nothing), at most every
:data:`INTERVAL` seconds, and erased before the report is printed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["DELAY", "INTERVAL", "TerminalProgress"]

#: Seconds a run lasts before its progress is shown.
DELAY = 2.0
#: Seconds between two redraws of the line.
INTERVAL = 0.1


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed or replaced streams
        return False


class TerminalProgress:
    """A runner ``progress`` callback writing ``\\r  rope_cos_sin  312/862 golden results  4.1 s``.

    ``clock`` (seconds, monotonic) is there for tests; ``delay`` and
    ``interval`` default to :data:`DELAY` and :data:`INTERVAL`.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        delay: float | None = None,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.enabled = _is_terminal(stream)
        self.delay = DELAY if delay is None else delay
        self.interval = INTERVAL if interval is None else interval
        self._clock = clock
        self._start = clock()
        self._last = float("-inf")
        self._width = 0

    def __call__(self, done: int, total: int, function: str) -> None:
        """Redraw the line: ``done`` of ``total`` golden results, ``function`` running now."""
        if not self.enabled:
            return
        now = self._clock()
        elapsed = now - self._start
        if elapsed < self.delay or now - self._last < self.interval:
            return
        self._last = now
        text = f"  {function}  {done}/{total} golden results  {elapsed:.1f} s"
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def close(self) -> None:
        """Erase the line, if one was drawn, so the report starts on a clean line."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
