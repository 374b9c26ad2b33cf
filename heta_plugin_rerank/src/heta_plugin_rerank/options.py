"""The ``options`` tables of ``cohere/...`` and ``local/...`` rerankers, with defaults.

Unknown keys are an error, so that a typo is not silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import attrs
from heta_framework.common.remote import RemoteCallOptions, parse_model_options, positive_count

O = TypeVar("O")


def parse_options(cls: type[O], model_name: str, options: Mapping[str, Any]) -> O:
    return parse_model_options(cls, model_name, options, "docs/plugins/rerank.md")


@attrs.frozen
class CohereOptions(RemoteCallOptions):
    #: documents longer than this many tokens are truncated by the server (its default: 4096)
    max_tokens_per_doc: int | None = attrs.field(default=None, validator=positive_count)


@attrs.frozen
class LocalCrossEncoderOptions:
    #: query-document pairs scored per forward pass
    batch_size: int = attrs.field(default=32, validator=positive_count)
    #: tokens per pair; longer pairs are truncated (default: the model's own limit)
    max_length: int | None = attrs.field(default=None, validator=positive_count)
    #: torch device, e.g. "cpu" or "cuda"; default: sentence-transformers picks
    device: str | None = None
