"""The one reader of text that comes from outside: every form field, every socket event, every import.

A person types letters, digits, punctuation, emoji, newlines and tabs. Anything else in a string is
either an attack or a broken client: a lone surrogate (half of a UTF-16 pair, which UTF-8 cannot
encode, so the export, the report and PostgreSQL all fail on it later) or a control character (NUL,
which PostgreSQL refuses in text, escape sequences, ...). The reader refuses those with a clear
error before anything is stored, on every database alike. A carriage return is read as the newline it
stands for (a form's textarea sends CRLF).

- :func:`read_text` reads one field: its type, the characters, blank or not, its length.
- :func:`read_payload` reads a whole socket payload or imported document: every string in it (keys
  too), whole numbers a browser holds exactly, and a bound on nesting. The socket layer passes each
  event's payload through it before any handler runs, so a handler sees only clean text.
- :func:`scrub` is for what is already stored (from before this reader): it replaces each refused
  character with U+FFFD, so an old battle still exports, reports and verifies.

New text fields need nothing more when they arrive in a socket event; a new form field is read with
:func:`read_text` (the app refuses a form whose fields hold a refused character before the view runs).
"""

from __future__ import annotations

import re
from typing import Any

from rules import InvalidDeclaration

#: control characters other than tab and newline (C0, DEL, C1) and lone surrogates; a carriage return
#: is turned into a newline before this is applied
REFUSED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
#: the deepest nesting a payload or document may have (a lineup or declaration needs a handful)
MAX_DEPTH = 32
#: the largest whole number a browser holds exactly (JavaScript's Number.MAX_SAFE_INTEGER)
MAX_SAFE_INTEGER = 2**53 - 1
REPLACEMENT = "\ufffd"
#: what :func:`scrub` replaces: the refused characters, but a carriage return stays what it was
SCRUBBED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


class BadText(InvalidDeclaration):
    """Text the reader refuses (an ``invalid`` error, as any malformed input)."""


def _describe(char: str) -> str:
    point = ord(char)
    if 0xD800 <= point <= 0xDFFF:
        return f"a broken character (lone surrogate U+{point:04X})"
    return f"a control character (U+{point:04X})"


def check_characters(text: str, what: str) -> str:
    """``text`` with its carriage returns read as newlines, or :class:`BadText` naming the first
    refused character.

    >>> check_characters("two\\r\\nlines", "notes")
    'two\\nlines'
    >>> check_characters("tab\\tand\\nnewline", "notes")
    'tab\\tand\\nnewline'
    >>> check_characters("Jinx\\x00", "name")
    Traceback (most recent call last):
    ...
    webapp.text.BadText: name holds a control character (U+0000): type only letters, digits, punctuation, newlines and tabs
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    found = REFUSED.search(text)
    if found is not None:
        raise BadText(f"{what} holds {_describe(found.group())}: type only letters, digits, punctuation, newlines and tabs")
    return text


def read_text(raw: Any, what: str, *, limit: int, required: bool = True, multiline: bool = False) -> str:
    """One text field from a form or an event: text, no refused character, at most ``limit``
    characters. A single-line field has its runs of whitespace (newlines and tabs too) made one
    space and its ends trimmed; a multi-line one keeps them.

    >>> read_text("  Friday   night ", "table name", limit=80)
    'Friday night'
    >>> read_text("", "notes", limit=10, required=False, multiline=True)
    ''
    >>> read_text(None, "player name", limit=40)
    Traceback (most recent call last):
    ...
    webapp.text.BadText: a player name is needed
    >>> read_text("x" * 41, "player name", limit=40)
    Traceback (most recent call last):
    ...
    webapp.text.BadText: the player name is too long (at most 40 characters)
    """
    if raw is None and not required:
        return ""
    if not isinstance(raw, str):
        raise BadText(f"a {what} is needed" if raw is None else f"the {what} must be text")
    text = check_characters(raw, f"the {what}")
    if not multiline:
        text = " ".join(text.split())
    if required and not text.strip():
        raise BadText(f"a {what} is needed")
    if len(text) > limit:
        raise BadText(f"the {what} is too long (at most {limit} characters)")
    return text


def read_payload(value: Any, what: str, *, max_depth: int = MAX_DEPTH, browser_numbers: bool = True) -> Any:
    """A socket payload or an imported document, read whole: the same structure with every string
    (and key) through :func:`check_characters`; a whole number beyond what a browser holds exactly,
    or nesting deeper than :data:`MAX_DEPTH`, is refused (``browser_numbers=False``: whole numbers
    of any size, for a document the board wrote itself). Iterative: a deeply nested document is
    refused, never a RecursionError.

    >>> read_payload({"note": "a\\r\\nb", "n": [1, {"x": "y"}]}, "declare")
    {'note': 'a\\nb', 'n': [1, {'x': 'y'}]}
    >>> read_payload({"lineup": [{"name": "\\ud800"}]}, "lineup_set")
    Traceback (most recent call last):
    ...
    webapp.text.BadText: lineup_set holds a broken character (lone surrogate U+D800): type only letters, digits, punctuation, newlines and tabs
    """
    # each stack entry: (value, depth, container to put the read value in, key or index there)
    root: list[Any] = [None]
    stack: list[tuple[Any, int, Any, Any]] = [(value, 0, root, 0)]
    while stack:
        item, depth, into, slot = stack.pop()
        if isinstance(item, str):
            into[slot] = check_characters(item, what)
        elif isinstance(item, bool) or item is None or isinstance(item, float):
            into[slot] = item
        elif isinstance(item, int):
            if browser_numbers and not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                raise InvalidDeclaration(f"{what}: whole numbers must lie between -{MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER}")
            into[slot] = item
        elif depth > max_depth:
            raise InvalidDeclaration(f"{what} is nested too deeply (at most {max_depth} levels)")
        elif isinstance(item, dict):
            out: dict[Any, Any] = {}
            into[slot] = out
            for key, inner in item.items():
                if isinstance(key, str):
                    key = check_characters(key, what)
                out[key] = None
                stack.append((inner, depth + 1, out, key))
        elif isinstance(item, list | tuple):
            seq: list[Any] = [None] * len(item)
            into[slot] = seq
            for index, inner in enumerate(item):
                stack.append((inner, depth + 1, seq, index))
        else:
            into[slot] = item
    return root[0]


def scrub(value: Any) -> Any:
    """What is already stored, made safe to write out: every refused character of every string
    (keys too) replaced with U+FFFD, the same everywhere, so a document stays consistent with itself
    (its commands and events re-apply to the same words).

    >>> scrub({"name": "Jinx\\ud800", "log": ["a\\x00b", 3]})
    {'name': 'Jinx�', 'log': ['a�b', 3]}
    """
    if isinstance(value, str):
        return SCRUBBED.sub(REPLACEMENT, value) if SCRUBBED.search(value) else value
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub(v) for v in value)
    return value
