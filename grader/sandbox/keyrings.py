"""Kernel keyrings: nothing one worker's code stores there reaches another worker's.

The kernel keeps keys per process (thread, process keyrings: gone with it), per session (a
worker inherits the zygote's session keyring, shared by every worker, whatever its uid) and
per user (the user and user-session keyrings, and the persistent one, which outlive every
process of that uid). A submission reaches them without ctypes (`perl -e 'syscall(248, …)'`
from a subprocess), so a key one exercise adds could be read by the next exercise, or by the
next student graded under the same leased uid. The fence calls `start_fresh` before anything
of the student's runs:

- every worker joins a new anonymous session keyring of its own;
- as root, under a leased uid (`clear_user`), the uid's user, user-session and persistent
  keyrings are cleared: whatever an earlier worker of that uid left is gone. As an ordinary
  user the worker's user namespace has keyrings of its own (Linux 5.3+), and the user's real
  keyrings are never touched.

    start_fresh(clear_user=True)   # "fresh session keyring; user keyrings cleared"
"""

from __future__ import annotations

import ctypes
import platform
import sys

_KEYCTL = {"x86_64": 250, "amd64": 250, "aarch64": 219, "arm64": 219}  # the keyctl syscall's number
KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL_CLEAR = 7
KEYCTL_GET_PERSISTENT = 22
KEY_SPEC_SESSION_KEYRING = -3
KEY_SPEC_USER_KEYRING = -4
KEY_SPEC_USER_SESSION_KEYRING = -5


def start_fresh(clear_user: bool) -> str:
    """Join a new session keyring; with `clear_user`, empty this uid's own keyrings. What was done."""
    number = _KEYCTL.get(platform.machine().lower())
    if not sys.platform.startswith("linux") or number is None:
        return "not available"
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def keyctl(*args) -> int:
        return libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) if isinstance(a, int) else a for a in args))

    if keyctl(KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        return "no keyrings (the kernel refused a session keyring)"
    if not clear_user:
        return "fresh session keyring"
    for keyring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
        keyctl(KEYCTL_CLEAR, keyring)
    persistent = keyctl(KEYCTL_GET_PERSISTENT, -1, KEY_SPEC_SESSION_KEYRING)  # linked into the new session's
    if persistent > 0:
        keyctl(KEYCTL_CLEAR, persistent)
    return "fresh session keyring; user keyrings cleared"


__all__ = ["start_fresh"]
