"""Streamed chat completions (``stream=True``): the answer's pieces as the server sends them.

The request is the one ``complete()`` sends, plus ``stream_options.include_usage`` so the
server's token counts arrive on a last piece of their own. A stream that ends without any
choice saying why it finished (no ``finish_reason``) was cut off, not finished: it raises.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import openai
from heta_framework.common.model_streaming import CompletionDelta
from heta_framework.common.models import Message
from heta_framework.errors import ModelError
from openai import AsyncStream

from heta_plugin_openai.connection import OpenAIConnection
from heta_plugin_openai.options import OpenAIOptions

WHAT = "streamed chat completion"


async def stream_chat(
    connection: OpenAIConnection, options: OpenAIOptions, model: str, messages: Sequence[Message], *,
    temperature: float, max_tokens: int | None,
) -> AsyncIterator[CompletionDelta]:
    request: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "temperature": options.temperature if options.temperature is not None else temperature,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    limit = max_tokens if max_tokens is not None else options.max_tokens
    if limit is not None:
        request[options.max_tokens_param] = limit
    if options.extra_body:
        request["extra_body"] = dict(options.extra_body)

    async def open_stream(client: openai.AsyncOpenAI) -> Any:
        stream = await client.chat.completions.create(**request)
        if not isinstance(stream, AsyncStream):  # a server that ignored stream=True and answered in one body
            raise ModelError(f"{connection.where} answered a {WHAT} request for {connection.config.model_name} without streaming.")
        return stream

    finished = False
    async with connection.streaming(WHAT, open_stream) as stream:
        async for chunk in stream:
            for choice in chunk.choices or ():
                text = choice.delta.content if choice.delta is not None else None
                if text:
                    yield CompletionDelta(text)
                finished = finished or choice.finish_reason is not None
            if chunk.usage is not None:
                yield CompletionDelta("", chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
    if not finished:
        raise ModelError(
            f"{connection.where} ended the {WHAT} for {connection.config.model_name} before the model finished "
            "(no finish_reason); the answer is incomplete."
        )
