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
from heta_framework.common.remote import RemoteCallOptions, parse_model_options, positive_count, to_float
from heta_framework.common.validators import boolean, number

JsonMode = Literal["schema", "object", "none"]
JSON_MODES = ("schema", "object", "none")
MAX_TOKENS_PARAMS = ("max_tokens", "max_completion_tokens")


@attrs.frozen
class OpenAIOptions(RemoteCallOptions):
    """Options shared by the language and embedding clients (see docs/plugins/openai.md)."""

    #: extra JSON fields sent with every request (server-specific parameters, e.g. vLLM's top_k)
    extra_body: Mapping[str, Any] = attrs.field(factory=dict, converter=dict)

    # language
    #: how a json_schema request is sent: response_format json_schema, json_object, or only as an instruction
    json_mode: str = attrs.field(default="schema", validator=attrs.validators.in_(JSON_MODES))
    #: when set, replaces the temperature callers ask for (some models accept only one value)
    temperature: float | None = attrs.field(default=None, converter=to_float, validator=number(minimum=0, optional=True))
    #: used when the caller gives no max_tokens
    max_tokens: int | None = attrs.field(default=None, validator=positive_count)
    #: the request field that carries max_tokens; newer OpenAI models want max_completion_tokens
    max_tokens_param: str = attrs.field(default="max_tokens", validator=attrs.validators.in_(MAX_TOKENS_PARAMS))

    #: the language model also reads images (chat completions with an image part): ParseDocuments may
    #: use it for image files and scanned PDF pages when the recipe has no models.vision
    accepts_images: bool = attrs.field(default=False, validator=boolean)

    # embedding
    #: texts per embeddings request
    batch_size: int = attrs.field(default=128, validator=positive_count)
    #: the vector size, known before the first call; otherwise learned from the first answer
    dimension: int | None = attrs.field(default=None, validator=positive_count)
    #: also send ``dimensions=dimension`` (models that can shorten their vectors, e.g. text-embedding-3-*)
    send_dimensions: bool = attrs.field(default=False, validator=boolean)

    @classmethod
    def from_config(cls, model_name: str, options: Mapping[str, Any]) -> OpenAIOptions:
        return parse_model_options(cls, model_name, options, "docs/plugins/openai.md")
