"""A one-line progress bar on stderr for large transfers at a terminal."""

from __future__ import annotations

import sys
import time
from typing import Optional

#: Transfers at least this large show a bar when stderr is a terminal.
THRESHOLD_BYTES = 64 << 20


class Progress:
    def __init__(self, label: str, total: int, enabled: Optional[bool]) -> None:
        if enabled is None:
            enabled = total >= THRESHOLD_BYTES and sys.stderr.isatty()
        self.enabled = bool(enabled)
        self.label, self.total, self.done = label, total, 0
        self.t0 = self.last = time.monotonic()

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last >= 0.1 or self.done >= self.total:
            self.last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        frac = self.done / self.total if self.total else 1.0
        width = 30
        bar = "#" * int(frac * width)
        rate = self.done / max(now - self.t0, 1e-9) / (1 << 20)
        sys.stderr.write(f"\r{self.label} [{bar:<{width}}] {frac:4.0%} "
                         f"{self.done / (1 << 20):.0f}/{self.total / (1 << 20):.0f} MiB "
                         f"{rate:.0f} MiB/s")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(time.monotonic())
            sys.stderr.write("\n")
            sys.stderr.flush()
