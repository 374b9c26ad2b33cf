"""The audit trail: every write to a knowledge base (build, upload, remove, access change) as one JSON
record on the ``heta.audit`` logger, with who did it and when.

A logger rather than a file of our own: operators already route logs (a file, syslog, a collector),
and ``heta serve --audit-log FILE`` attaches a file handler for them. Records never hold document
text or secrets, only ids, counts and principals.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

AUDIT_LOGGER = "heta.audit"
log = logging.getLogger(AUDIT_LOGGER)


def audit(operation: str, actor: str | None, kb_path: Path | str, **details: Any) -> dict[str, Any]:
    """Log one write: ``operation`` by ``actor`` (``None``: not said) on the knowledge base at ``kb_path``."""
    record = {"time": time.time(), "operation": operation, "actor": actor, "kb": str(kb_path), **details}
    log.info("%s", json.dumps(record, ensure_ascii=False, default=str, sort_keys=True))
    return record
