"""``TextIndexStore`` now lives in core (``heta_framework.kb.stores``); this name stays for existing imports."""

from __future__ import annotations

from heta_framework.kb.text_index import TextIndexStore

__all__ = ["TextIndexStore"]
