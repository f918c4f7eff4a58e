"""Long computations of the rules (Olympia's odds simulate a thousand battles) kept off the loop.

On gevent (how ``battleboard serve`` and gunicorn's gevent worker run) every page, socket and
command of the process shares one loop: a computation of several seconds in a handler holds up
every table on it, and even Ctrl+C, until it ends. :func:`off_the_loop` runs such a computation in
one of gevent's native threads instead: the loop goes on serving meanwhile (the computation takes
the interpreter in turns with it), and only the greenlet that asked waits for the answer. Without
gevent (the threading server of the tests and of ``flask run``) each request has a thread of its
own already, and the computation simply runs in it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def on_gevent() -> bool:
    """Whether this process serves on gevent's loop (the standard library is monkey-patched)."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and bool(monkey.is_module_patched("socket"))


def off_the_loop(compute: Callable[..., T], *args: Any) -> T:
    """``compute(*args)``, in a native thread of gevent's pool when serving on gevent; its
    exceptions reach the caller as they would from a direct call."""
    if on_gevent():
        import gevent

        result: T = gevent.get_hub().threadpool.apply(compute, args)
        return result
    return compute(*args)
