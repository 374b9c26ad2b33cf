"""A tool-calling turn read as a stream (``stream=True``), for servers and proxies that answer tool calls best, or
only, that way. The pieces are put back together into the one ``ToolCompletion`` a plain call returns: text pieces
joined, each tool call's id and name from its first piece and its arguments from every piece, by the call's index.
A stream that ends without a ``finish_reason`` was cut off, and raises, as ``stream_chat`` does.
"""

from __future__ import annotations

from typing import Any

import openai
from heta_framework.common.models import ToolCall, ToolCompletion
from heta_framework.errors import ModelError
from openai import AsyncStream

from heta_plugin_openai.connection import OpenAIConnection

WHAT = "streamed chat completion with tools"


async def stream_tool_turn(connection: OpenAIConnection, request: dict[str, Any]) -> ToolCompletion:
    streamed = {**request, "stream": True, "stream_options": {"include_usage": True}}

    async def open_stream(client: openai.AsyncOpenAI) -> Any:
        stream = await client.chat.completions.create(**streamed)
        if not isinstance(stream, AsyncStream):  # a server that ignored stream=True and answered in one body
            raise ModelError(f"{connection.where} answered a {WHAT} request for {connection.config.model_name} without streaming.")
        return stream

    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    prompt_tokens = completion_tokens = 0
    finished = False
    async with connection.streaming(WHAT, open_stream) as stream:
        async for chunk in stream:
            for choice in chunk.choices or ():
                delta = choice.delta
                if delta is not None:
                    if delta.content:
                        text.append(delta.content)
                    for piece in delta.tool_calls or ():
                        call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": []})
                        call["id"] = call["id"] or (piece.id or "")
                        if piece.function is not None:
                            call["name"] = call["name"] or (piece.function.name or "")
                            call["arguments"].append(piece.function.arguments or "")
                finished = finished or choice.finish_reason is not None
            if chunk.usage is not None:
                prompt_tokens, completion_tokens = chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0
    if not finished:
        raise ModelError(f"{connection.where} ended the {WHAT} for {connection.config.model_name} before the model finished "
                         "(no finish_reason); the turn is incomplete.")
    return ToolCompletion(
        text="".join(text),
        tool_calls=tuple(ToolCall(c["id"], c["name"], "".join(c["arguments"])) for _, c in sorted(calls.items())),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )
