"""What ``POST /v1/chat/completions`` accepts: the OpenAI request fields Heta uses, those it accepts and
ignores, and those it refuses (400 ``UnsupportedParameter`` naming the field), and the model names.

Model names say which knowledge base and mode answer: ``heta`` (the ``--kb`` knowledge base, the best
available mode, as ``/api/v1/query`` picks it), ``heta:MODE`` (the ``--kb`` one in that mode) and
``heta:KB:MODE`` (the knowledge base ``KB`` of ``--kb-dir``, or ``default``). A name the caller may not
use is answered exactly like one that does not exist (404 ``UnknownModel``).
"""

from __future__ import annotations

from typing import Any

import attrs
from pydantic import BaseModel, ConfigDict, Field

from heta_server.config import DEFAULT_KB
from heta_server.errors import ApiError

PREFIX = "heta"
#: accepted and without effect on a grounded answer (sampling knobs, client bookkeeping)
IGNORED = frozenset({
    "top_p", "presence_penalty", "frequency_penalty", "seed", "user", "stop", "metadata", "store", "logit_bias",
    "parallel_tool_calls", "service_tier", "reasoning_effort", "prompt_cache_key", "safety_identifier", "verbosity",
})


class HetaExtension(BaseModel):
    """``"heta": {...}``: retrieval settings a chat request may carry (``extra_body`` in the openai client)."""

    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(default=8, ge=1, le=100)
    filters: dict[str, Any] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)


class ChatBody(BaseModel):
    model_config = ConfigDict(extra="allow")  # unknown fields are refused by name in ``check_fields``, not by pydantic

    model: str
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    n: int | None = None
    tools: list[Any] | None = None
    tool_choice: Any = None
    functions: list[Any] | None = None
    function_call: Any = None
    response_format: dict[str, Any] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None
    modalities: list[str] | None = None
    heta: HetaExtension = Field(default_factory=HetaExtension)

    def token_limit(self) -> int | None:
        return self.max_completion_tokens or self.max_tokens

    def include_usage(self) -> bool:
        return bool((self.stream_options or {}).get("include_usage"))


def unsupported(param: str, message: str) -> ApiError:
    return ApiError(400, "UnsupportedParameter", message, param=param)


def check_fields(body: ChatBody) -> list[str]:
    """Refuse what Heta cannot do as asked; returns the accepted-but-ignored fields present (for a response header)."""
    extra = sorted(set(body.model_extra or {}) - IGNORED)
    if extra:
        raise unsupported(extra[0], f"Unknown field {extra[0]!r}. Heta's chat endpoint takes the OpenAI chat fields "
                                    "(docs/server.md#openai-compatible-chat); retrieval settings go in \"heta\": {top_k, filters, options}.")
    if body.n not in (None, 1):
        raise unsupported("n", "Heta writes one answer per request: n must be 1.")
    if body.tools or body.functions or body.function_call not in (None, "none", "auto"):
        raise unsupported("tools", "Heta answers from its knowledge base and calls no tools; leave tools and functions out.")
    if body.tool_choice not in (None, "none", "auto"):
        raise unsupported("tool_choice", "Heta calls no tools: tool_choice may only be \"none\" or \"auto\".")
    if body.response_format is not None and body.response_format.get("type") != "text":
        raise unsupported("response_format", "Heta's answers are text with [n] citations: response_format may only be {\"type\": \"text\"}.")
    if body.logprobs or body.top_logprobs:
        raise unsupported("logprobs", "Heta does not return log probabilities.")
    if body.modalities not in (None, ["text"]):
        raise unsupported("modalities", "Heta answers in text only.")
    return sorted(set(body.model_extra or {}) & IGNORED)


def question_of(body: ChatBody) -> str:
    """The last user message's text: the query. Earlier turns and system messages do not change the retrieval."""
    for message in reversed(body.messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            if any(isinstance(part, dict) and part.get("type") != "text" for part in content):
                raise unsupported("messages", "Heta reads text only: the last user message has a part that is not text.")
            content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        if isinstance(content, str) and content.strip():
            return content.strip()
        raise unsupported("messages", "The last user message has no text to search for.")
    raise unsupported("messages", "No user message: the last user message is the question Heta answers.")


@attrs.frozen
class ModelName:
    kb: str
    #: ``None``: the best available mode
    mode: str | None


def parse_model(name: str) -> ModelName:
    parts = name.split(":")
    if parts[0] != PREFIX or len(parts) > 3 or any(not part for part in parts[1:]):
        raise unknown_model(name)
    if len(parts) == 1:
        return ModelName(DEFAULT_KB, None)
    if len(parts) == 2:
        return ModelName(DEFAULT_KB, parts[1])
    return ModelName(parts[1], parts[2])


def model_name(kb: str, mode: str | None) -> str:
    if kb == DEFAULT_KB:
        return PREFIX if mode is None else f"{PREFIX}:{mode}"
    return f"{PREFIX}:{kb}:{mode}"


def unknown_model(name: str) -> ApiError:
    return ApiError(404, "UnknownModel", f"No model {name[:120]!r} here; GET /v1/models lists the ones you may use.")
