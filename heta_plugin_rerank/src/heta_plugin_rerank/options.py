"""The ``options`` tables of ``cohere/...`` and ``local/...`` rerankers, with defaults.

Unknown keys are an error, so that a typo is not silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import attrs

from heta_framework.common.retry import RetryPolicy
from heta_framework.errors import ModelError

O = TypeVar("O")


def _positive(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and value <= 0:
        raise ValueError(f"{attribute.name} must be greater than 0, got {value!r}")


def _non_negative(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more, got {value!r}")


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def parse_options(cls: type[O], model_name: str, options: Mapping[str, Any]) -> O:
    known = {a.name for a in attrs.fields(cls)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ModelError(
            f"Unknown option(s) {', '.join(map(repr, unknown))} for {model_name}. "
            f"Known options: {', '.join(sorted(known))} (see docs/plugins/rerank.md)."
        )
    try:
        return cls(**dict(options))
    except (TypeError, ValueError) as exc:
        raise ModelError(f"Invalid options for {model_name}: {exc}. Fix the model's options table in the recipe.") from None


@attrs.frozen
class CohereOptions:
    #: at most this many rerank requests in flight at once
    concurrency: int = attrs.field(default=8, converter=int, validator=_positive)
    #: seconds one HTTP attempt may take before it counts as a time-out
    timeout: float = attrs.field(default=60.0, converter=float, validator=_positive)
    #: attempts per call, the first included; 1 means no retries
    max_attempts: int = attrs.field(default=4, converter=int, validator=_positive)
    retry_initial_delay: float = attrs.field(default=0.5, converter=float, validator=_non_negative)
    retry_max_delay: float = attrs.field(default=8.0, converter=float, validator=_non_negative)
    #: the longest Retry-After (seconds) we are willing to honour
    max_retry_after: float = attrs.field(default=60.0, converter=float, validator=_non_negative)
    #: documents longer than this many tokens are truncated by the server (its default: 4096)
    max_tokens_per_doc: int | None = attrs.field(default=None, converter=_optional_int, validator=_positive)

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(max_attempts=self.max_attempts, initial_delay=self.retry_initial_delay, max_delay=self.retry_max_delay)


@attrs.frozen
class LocalCrossEncoderOptions:
    #: query-document pairs scored per forward pass
    batch_size: int = attrs.field(default=32, converter=int, validator=_positive)
    #: tokens per pair; longer pairs are truncated (default: the model's own limit)
    max_length: int | None = attrs.field(default=None, converter=_optional_int, validator=_positive)
    #: torch device, e.g. "cpu" or "cuda"; default: sentence-transformers picks
    device: str | None = None
