"""A student folder's name as text and as a key: one text per name, one key per name.

Folder names are bytes on POSIX: a GBK name, a name with a backslash, a name with ESC in it.
`display_name` gives the text rows, results.json and merged shards are keyed by (injective),
`terminal_name` the same for a terminal (no control character reaches it), `student_key`
a file-system-safe key for the state file and the staged copy (injective too).
"""

from __future__ import annotations

import hashlib
import os
import urllib.parse


def display_name(name: str) -> str:
    r"""The name as text, one text per name: a UTF-8 name as it is, but each backslash doubled;
    a byte that is not UTF-8 as \xNN. So a folder literally named `\xd5` never reads as the
    one whose name is the byte 0xD5: rows, results.json and merged shards keep both.

    >>> print(display_name("张三"), display_name(os.fsdecode(b"\xd5")), display_name(r"\xd5"))
    张三 \xd5 \\xd5
    """
    text = os.fsencode(name).decode("utf-8", "surrogateescape")  # odd bytes as U+DC80..U+DCFF
    return "".join("\\\\" if c == "\\" else f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else c
                   for c in text)


def terminal_name(name: str) -> str:
    r"""`display_name` for a terminal: control characters (ESC, CR, BEL, a newline) as \xNN,
    so a folder's name cannot move the cursor, overwrite a line or clear the screen, and two
    names still never print the same (display_name has doubled every backslash).

    >>> print(terminal_name("a\x1b[2Jb"), terminal_name(r"a\x1b[2Jb"))
    a\x1b[2Jb a\\x1b[2Jb
    """
    return terminal_text(display_name(name))


def terminal_text(text: str) -> str:
    r"""A name already shown (`display_name`) made safe for a terminal: control characters as
    \xNN, and the marks that reorder the text around them (U+202A-202E, U+2066-2069) as \uNNNN.

    >>> print(terminal_text("a\x1b[2Jb\u202e"))
    a\x1b[2Jb\u202e
    """
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 32 or 127 <= ord(c) < 160
                   else f"\\u{ord(c):04x}" if 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 else c
                   for c in text)


def student_key(name: str) -> str:
    """An injective, filesystem-safe key for a folder name: escapes, then a hash of the bytes.

    >>> student_key("alice smith"), student_key("alice_smith")
    ('alice%20smith~6f1c…', 'alice_smith~0b9e…')
    """
    raw = os.fsencode(name)
    readable = urllib.parse.quote_from_bytes(raw, safe="-_@+")[:64]
    if readable.startswith("."):
        readable = "%2E" + readable[1:]  # no hidden state files
    return f"{readable}~{hashlib.sha256(raw).hexdigest()[:20]}"
