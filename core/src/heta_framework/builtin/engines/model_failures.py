"""How a failed model call is described in ``metadata["issues"]``: short, and with no secret in it."""

from __future__ import annotations

from typing import Any

from heta_framework.common.secrets import redact


def describe_failure(exc: BaseException, context: Any, limit: int = 160) -> str:
    """``"TypeName: first line of the message"``, with the recipe's API keys scrubbed out."""
    first_line = str(exc).splitlines()[0] if str(exc) else ""
    secrets = context.knowledge_base.secrets() if hasattr(context.knowledge_base, "secrets") else ()
    text = redact(first_line, *secrets)[:limit]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
