"""Single keys from the terminal for `grade watch`, in cbreak mode (termios; works over SSH; no curses).

`Keys(events, stop).start()` puts ("key", ch) on `events` for every key pressed, until `stop`
is set; the terminal is restored on `close()`, Ctrl-Z and `fg` included (`again()`).
"""

from __future__ import annotations

import os
import queue
import select
import sys
import threading


class Keys:
    """Single keys from the terminal in cbreak mode (no echo, no Enter), restored on close.

    Reads from a duplicate of fd 0, so that pytest's capture (which points fd 0 at
    /dev/null while checks run) does not cut the keyboard off.
    """

    def __init__(self, events: queue.Queue, stop: threading.Event):
        self.events, self.stop = events, stop
        self.fd = None
        self.saved = None
        self.thread = None

    def start(self) -> bool:
        try:
            if not os.isatty(0):
                return False
            import termios
            import tty

            self.fd = os.dup(0)
            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd, termios.TCSANOW)
        except (OSError, ImportError, Exception):  # noqa: BLE001 - no terminal: saves only
            self.close()
            return False
        self.thread = threading.Thread(target=self._read, name="grade-watch-keys", daemon=True)
        self.thread.start()
        return True

    def again(self) -> None:
        """Back into cbreak mode (after Ctrl-Z and fg the shell has reset the terminal)."""
        if self.fd is not None:
            import termios
            import tty

            try:
                tty.setcbreak(self.fd, termios.TCSANOW)
            except OSError:
                pass

    def _read(self) -> None:
        while not self.stop.is_set():
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.2)
                if not ready:
                    continue
                data = os.read(self.fd, 32)
            except (OSError, ValueError):
                return
            if not data:
                return
            for ch in data.decode("utf-8", "ignore"):
                self.events.put(("key", ch))

    def close(self) -> None:
        if self.fd is None:
            return
        if self.saved is not None:
            import termios

            try:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
            except OSError:
                pass
        if self.thread is not None:
            self.stop.set()
            self.thread.join(timeout=1)
        try:
            os.close(self.fd)
        except OSError:
            pass
        self.fd = None


def _own_stdout():
    try:
        return open(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", errors="replace")
    except (AttributeError, OSError, ValueError):  # not a real file (a test runner's capture)
        return sys.stdout
