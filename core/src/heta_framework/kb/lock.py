"""The public import path of ``heta_framework.common.writer_lock`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.common.writer_lock import (
    LOCK_FILE,
    MIN_WAIT_SECONDS,
    POLL_SECONDS,
    PollingWriterLock,
    WriterLock,
    another_writer_holds,
    holds_writer_lock,
    may_change_stores,
    writer_active,
)

__all__ = [
    "LOCK_FILE",
    "MIN_WAIT_SECONDS",
    "POLL_SECONDS",
    "PollingWriterLock",
    "WriterLock",
    "another_writer_holds",
    "holds_writer_lock",
    "may_change_stores",
    "writer_active",
]
