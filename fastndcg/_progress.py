"""A one-line progress bar on stderr: rows done, percent, rows/s, elapsed."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Redraws at most 10 times a second, and only once a run has lasted 0.5 s.

    >>> import io
    >>> out = io.StringIO()
    >>> p = Progress(100, enabled=True, stream=out, delay=0.0)
    >>> p.update(50); p.close()
    >>> "50 / 100 rows" in out.getvalue()
    True
    """

    def __init__(self, total: int | None, *, enabled: bool, stream: TextIO | None = None,
                 delay: float = 0.5) -> None:
        self.total = total
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.done = 0
        self.start = time.perf_counter()
        self._last = 0.0
        self._drawn = False

    def update(self, rows: int) -> None:
        self.done += rows
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.start >= self.delay and now - self._last >= 0.1:
            self._last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        if self.total:
            frac = min(1.0, self.done / self.total)
            bar = "#" * int(frac * 20)
            text = (f"[{bar:<20}] {self.done:,} / {self.total:,} rows {100 * frac:5.1f}%")
        else:
            text = f"{self.done:,} rows"
        self.stream.write(f"\r{text}  {rate / 1e6:,.1f}M rows/s  {elapsed:,.1f}s ")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self.enabled and (self._drawn or self.delay == 0.0):
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()
