"""The ``options`` table of an ``openai/...`` model, with defaults and validation.

Every key is optional; unknown keys are an error (a typo must not be silently ignored)::

    [models.language]
    model_name = "openai/gpt-4o-mini"
    options = { concurrency = 4, timeout = 30, json_mode = "object" }
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from heta_framework.common.retry import RetryPolicy
from heta_framework.errors import ModelError

JsonMode = Literal["schema", "object", "none"]
JSON_MODES = ("schema", "object", "none")
MAX_TOKENS_PARAMS = ("max_tokens", "max_completion_tokens")


def _positive(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and value <= 0:
        raise ValueError(f"{attribute.name} must be greater than 0, got {value!r}")


def _non_negative(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more, got {value!r}")


def _optional(convert: Any) -> Any:
    return lambda value: None if value is None else convert(value)


@attrs.frozen
class OpenAIOptions:
    """Options shared by the language and embedding clients (see docs/plugins/openai.md)."""

    #: at most this many requests of one client in flight at once
    concurrency: int = attrs.field(default=8, converter=int, validator=_positive)
    #: seconds one HTTP attempt may take before it counts as a time-out
    timeout: float = attrs.field(default=60.0, converter=float, validator=_positive)
    #: attempts per call, the first included; 1 means no retries
    max_attempts: int = attrs.field(default=4, converter=int, validator=_positive)
    #: first back-off delay in seconds; doubles per retry up to retry_max_delay
    retry_initial_delay: float = attrs.field(default=0.5, converter=float, validator=_non_negative)
    retry_max_delay: float = attrs.field(default=8.0, converter=float, validator=_non_negative)
    #: the longest Retry-After (seconds) we are willing to honour
    max_retry_after: float = attrs.field(default=60.0, converter=float, validator=_non_negative)
    #: extra JSON fields sent with every request (server-specific parameters, e.g. vLLM's top_k)
    extra_body: Mapping[str, Any] = attrs.field(factory=dict, converter=dict)

    # language
    #: how a json_schema request is sent: response_format json_schema, json_object, or only as an instruction
    json_mode: str = attrs.field(default="schema", validator=attrs.validators.in_(JSON_MODES))
    #: when set, replaces the temperature callers ask for (some models accept only one value)
    temperature: float | None = attrs.field(default=None, converter=_optional(float))
    #: used when the caller gives no max_tokens
    max_tokens: int | None = attrs.field(default=None, converter=_optional(int), validator=_positive)
    #: the request field that carries max_tokens; newer OpenAI models want max_completion_tokens
    max_tokens_param: str = attrs.field(default="max_tokens", validator=attrs.validators.in_(MAX_TOKENS_PARAMS))

    # embedding
    #: texts per embeddings request
    batch_size: int = attrs.field(default=128, converter=int, validator=_positive)
    #: the vector size, known before the first call; otherwise learned from the first answer
    dimension: int | None = attrs.field(default=None, converter=_optional(int), validator=_positive)
    #: also send ``dimensions=dimension`` (models that can shorten their vectors, e.g. text-embedding-3-*)
    send_dimensions: bool = attrs.field(default=False, converter=bool)

    @classmethod
    def from_config(cls, model_name: str, options: Mapping[str, Any]) -> OpenAIOptions:
        known = {a.name for a in attrs.fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ModelError(
                f"Unknown option(s) {', '.join(map(repr, unknown))} for {model_name}. "
                f"Known options: {', '.join(sorted(known))} (see docs/plugins/openai.md)."
            )
        try:
            return cls(**dict(options))
        except (TypeError, ValueError) as exc:
            raise ModelError(f"Invalid options for {model_name}: {exc}. Fix the model's options table in the recipe.") from None

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_attempts=self.max_attempts,
            initial_delay=self.retry_initial_delay,
            max_delay=self.retry_max_delay,
        )
