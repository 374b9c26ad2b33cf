"""Let SQLite statements in different threads run at the same time.

SQLite keeps memory-usage statistics behind one process-wide mutex taken on
every allocation, and the libsqlite3 most Linux distributions ship is built
without lookaside memory, so every row a statement touches takes that mutex:
eight reader threads, each on its own connection, ran slower together than one
after another (0.76x on 2 cores; 1.54x with the statistics off, see
bench/bench_concurrency.py). Heta never reads those statistics, so it turns them
off. SQLite accepts this only before the library initialises, which Python's
``_sqlite3`` module does on import: the library is reached through the
extension's file (dlopen does not run the module's init) before anything
imports it. When ``sqlite3`` is already imported, or the platform does not
expose the symbol, nothing happens and everything still works, only with
less parallelism.
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import sys

log = logging.getLogger(__name__)

_SQLITE_CONFIG_MEMSTATUS = 9  # sqlite3.h


def turn_off_memory_statistics() -> bool:
    """``sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0)`` if SQLite is not initialised yet; whether it took."""
    if "_sqlite3" in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec("_sqlite3")
        if spec is None or not spec.origin:
            return False
        configure = ctypes.CDLL(spec.origin).sqlite3_config
        configure.restype = ctypes.c_int
        return configure(_SQLITE_CONFIG_MEMSTATUS, ctypes.c_int(0)) == 0
    except (OSError, AttributeError, ValueError) as error:  # no shared library, or sqlite3_config not exported
        log.debug("SQLite memory statistics left on: %s", error)
        return False
