"""API keys that cannot leak by accident.

A ``Secret`` prints as ``'***'`` in reprs, logs, tracebacks and recipe summaries;
only ``reveal()`` gives the value, and only provider code calls it. ``redact``
scrubs known secret values out of any text before it is stored or raised.
"""

from __future__ import annotations

import os

import attrs

_MASK = "***"


@attrs.frozen(repr=False)
class Secret:
    """A secret value, either given directly or read from an environment variable."""

    value: str | None = None
    env: str | None = None

    def reveal(self) -> str | None:
        if self.value is not None:
            return self.value
        if self.env:
            return os.environ.get(self.env)
        return None

    def __repr__(self) -> str:
        if self.env and self.value is None:
            return f"Secret(env={self.env!r})"
        return f"Secret({_MASK})"

    __str__ = __repr__


def redact(text: str, *secrets: Secret | str | None) -> str:
    """Replace every occurrence of the given secret values in ``text`` with ``***``."""
    for secret in secrets:
        value = secret.reveal() if isinstance(secret, Secret) else secret
        if value and len(value) >= 4:
            text = text.replace(value, _MASK)
    return text
