"""``openai/<model>`` language models: chat completions on OpenAI or any compatible server."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import openai
from heta_framework.common.model_streaming import CompletionDelta
from heta_framework.common.models import Completion, LanguageModel, Message, ToolCall, ToolCompletion, ToolSpec
from openai.types.chat import ChatCompletion

from heta_plugin_openai.connection import OpenAIConnection, require_fields
from heta_plugin_openai.options import OpenAIOptions
from heta_plugin_openai.streaming import stream_chat
from heta_plugin_openai.tool_streaming import stream_tool_turn

_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")
_FENCED = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)


def json_instruction(schema: Mapping[str, Any]) -> str:
    return "Answer with one JSON value only, no prose, matching this JSON schema:\n" + json.dumps(schema, ensure_ascii=False)


def response_format(json_mode: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` for a JSON answer; ``None`` when the server is told only in words."""
    if json_mode == "schema":
        name = _SCHEMA_NAME.sub("_", str(schema.get("title") or "response"))[:64] or "response"
        # strict off: strict mode rejects common schema features (optional fields, free-form objects)
        return {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema), "strict": False}}
    if json_mode == "object":
        return {"type": "json_object"}
    return None


def unfence(text: str) -> str:
    """Drop a Markdown code fence around a JSON answer; models without JSON mode often add one."""
    match = _FENCED.match(text)
    return match.group(1).strip() if match else text


def tool_message_payload(message: Message) -> dict[str, Any]:
    """A message as the chat API takes it, with the assistant's tool calls or the id a tool result answers."""
    payload: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        payload["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        payload["tool_call_id"] = message.tool_call_id
    return payload


class OpenAILanguageClient:
    """Satisfies ``LanguageClient``. Created without touching the network."""

    def __init__(self, config: LanguageModel):
        self.config = config
        self.model_name = config.model_name
        self.options = OpenAIOptions.from_config(config.model_name, config.options)
        self.connection = OpenAIConnection(config, self.options)

    def __repr__(self) -> str:
        return f"OpenAILanguageClient({self.model_name!r}, base_url={self.config.base_url!r})"

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> Completion:
        options = self.options
        payload: list[dict[str, str]] = [{"role": m.role, "content": m.content} for m in messages]
        request: dict[str, Any] = {
            "model": self.config.model,
            "temperature": options.temperature if options.temperature is not None else temperature,
        }
        if json_schema is not None:
            fmt = response_format(options.json_mode, json_schema)
            if fmt is not None:
                request["response_format"] = fmt
            if options.json_mode != "schema":
                # json_object needs the word JSON in the prompt, and neither mode shows the server the schema
                payload.append({"role": "system", "content": json_instruction(json_schema)})
        limit = max_tokens if max_tokens is not None else options.max_tokens
        if limit is not None:
            request[options.max_tokens_param] = limit
        if options.extra_body:
            request["extra_body"] = dict(options.extra_body)

        async def create(client: openai.AsyncOpenAI) -> Any:
            response = await client.chat.completions.create(messages=payload, **request)
            return require_fields(response, ChatCompletion, ("choices",))

        response = await self.connection.call("chat completion", create)
        text = (response.choices[0].message.content or "") if response.choices else ""
        if json_schema is not None:
            text = unfence(text)
        usage = response.usage
        return Completion(
            text=text,
            prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
            completion_tokens=(usage.completion_tokens or 0) if usage else 0,
        )

    async def complete_with_tools(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        tool_choice: str = "auto",
        temperature: float = 0.0,
        max_tokens: int | None = None,
        stream: bool = False,
    ) -> ToolCompletion:
        """One chat completion that offers ``tools`` (OpenAI function calling): the reply's text and the calls it asks
        for; ``stream=True`` reads it as a stream and puts the pieces back together (``tool_streaming``)."""
        options = self.options
        request: dict[str, Any] = {
            "model": self.config.model,
            "temperature": options.temperature if options.temperature is not None else temperature,
            "messages": [tool_message_payload(m) for m in messages],
        }
        if tools:
            request["tools"] = [tool.to_openai() for tool in tools]
            request["tool_choice"] = tool_choice
        limit = max_tokens if max_tokens is not None else options.max_tokens
        if limit is not None:
            request[options.max_tokens_param] = limit
        if options.extra_body:
            request["extra_body"] = dict(options.extra_body)
        if stream:
            return await stream_tool_turn(self.connection, request)

        async def create(client: openai.AsyncOpenAI) -> Any:
            response = await client.chat.completions.create(**request)
            return require_fields(response, ChatCompletion, ("choices",))

        response = await self.connection.call("chat completion with tools", create)
        message = response.choices[0].message if response.choices else None
        calls = tuple(
            ToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments or "")
            for call in ((message.tool_calls or []) if message is not None else [])
            if getattr(call, "function", None) is not None
        )
        usage = response.usage
        return ToolCompletion(
            text=(message.content or "") if message is not None else "",
            tool_calls=calls,
            prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
            completion_tokens=(usage.completion_tokens or 0) if usage else 0,
        )

    @property
    def accepts_images(self) -> bool:
        return self.options.accepts_images

    async def read_image(self, image: bytes, media_type: str, instruction: str) -> Completion:
        """One chat completion whose user message carries ``instruction`` and the image as a base64 data URL."""
        import base64

        url = f"data:{media_type};base64,{base64.b64encode(image).decode('ascii')}"
        content = [{"type": "text", "text": instruction}, {"type": "image_url", "image_url": {"url": url}}]
        request: dict[str, Any] = {"model": self.config.model, "temperature": self.options.temperature or 0.0}
        if self.options.max_tokens is not None:
            request[self.options.max_tokens_param] = self.options.max_tokens
        if self.options.extra_body:
            request["extra_body"] = dict(self.options.extra_body)

        async def create(client: openai.AsyncOpenAI) -> Any:
            response = await client.chat.completions.create(messages=[{"role": "user", "content": content}], **request)
            return require_fields(response, ChatCompletion, ("choices",))

        response = await self.connection.call("image reading", create)
        text = (response.choices[0].message.content or "") if response.choices else ""
        usage = response.usage
        return Completion(
            text=text,
            prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
            completion_tokens=(usage.completion_tokens or 0) if usage else 0,
        )

    def stream(
        self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int | None = None,
    ) -> AsyncIterator[CompletionDelta]:
        """The answer piece by piece (``stream_completion`` in core calls this); plain text, no JSON schema."""
        return stream_chat(self.connection, self.options, self.config.model, messages, temperature=temperature, max_tokens=max_tokens)

    async def aclose(self) -> None:
        await self.connection.aclose()

    def close(self) -> None:
        self.connection.forget()
