"""The public import path of ``heta_framework.common.usage``: ``report_tokens`` for a provider whose client learns
a call's token counts, ``add_usage`` to sum ``usage`` dicts (docs/observability.md)."""

from heta_framework.common.usage import EMPTY_USAGE, add_usage, metering, report_tokens

__all__ = ["EMPTY_USAGE", "add_usage", "metering", "report_tokens"]
