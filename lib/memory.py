"""Give freed heap memory back to the system, and bound how much of it glibc keeps.

glibc keeps memory freed by a large task (a document's parse, its embedding batches: hundreds of
megabytes of short-lived buffers) in its arenas, so a worker stays at its peak for ever.
malloc_trim(0) returns the free pages at the top of each arena and the free runs inside them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.cache
def _malloc_trim():
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to give back this way
        return None


def release_freed_memory() -> bool:
    """Return freed heap pages to the system; False where the C library cannot (not glibc)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


M_ARENA_MAX = -8  # <malloc.h>


def limit_malloc_arenas(arenas: int) -> bool:
    """Let glibc's malloc use at most `arenas` arenas in this process and the ones it forks from now
    on, as MALLOC_ARENA_MAX does for a process started with it (each thread that allocates would
    otherwise get its own arena, up to 8 per core, each keeping its peak). False where the C library
    has no mallopt (not glibc)."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):
        return False
    return mallopt is not None and mallopt(M_ARENA_MAX, arenas) == 1
