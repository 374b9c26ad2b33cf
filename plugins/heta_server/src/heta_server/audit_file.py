"""``heta serve --audit-log FILE``: the ``heta.audit`` records (``heta_framework.common.audit``) as JSON lines in a file.

Core logs every write (build, remove, access change) with its actor; the server passes the token's
principal as the actor, and with ``--audit-reads`` logs its reads too. While the file is attached the
records go to it alone (not also to stderr), one JSON object a line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from heta_framework.common.audit import AUDIT_LOGGER


def attach_audit_log(path: Path) -> Callable[[], None]:
    """Send the audit records to ``path`` (appended); returns the function that stops it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(message)s"))  # each record is one JSON object already
    logger = logging.getLogger(AUDIT_LOGGER)
    before = (logger.level, logger.propagate)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False

    def detach() -> None:
        logger.removeHandler(handler)
        handler.close()
        logger.setLevel(before[0])
        logger.propagate = before[1]

    return detach
