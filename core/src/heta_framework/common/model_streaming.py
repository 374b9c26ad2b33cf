"""Answers read as the language model writes them: ``stream_completion(client, messages)``.

Streaming is optional for a ``LanguageClient``: a client that can stream defines
``stream(messages, *, temperature, max_tokens)``, an async iterator of ``CompletionDelta``.
Every caller goes through ``stream_completion``, which uses that method when the client has
one and otherwise yields the whole ``complete()`` answer once (the pattern of
``embed_queries``), so every existing client keeps working, just without the pieces.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import attrs

from heta_framework.common.models import LanguageClient, Message


@attrs.frozen
class CompletionDelta:
    """One piece of a streamed answer. Token usage, when the server reports it, comes on a piece of its own
    (usually the last, with empty ``text``); a client adds up nothing, the caller sums the pieces."""

    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0


async def stream_completion(
    client: LanguageClient, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int | None = None,
) -> AsyncIterator[CompletionDelta]:
    """The answer to ``messages`` piece by piece: ``client.stream`` when the client streams, else its whole
    ``complete()`` answer as one piece. A failure mid-stream raises from the iteration, after the pieces that came."""
    own: Any = getattr(client, "stream", None)
    if own is None:
        completion = await client.complete(messages, temperature=temperature, max_tokens=max_tokens)
        yield CompletionDelta(completion.text, completion.prompt_tokens, completion.completion_tokens)
        return
    async for delta in own(messages, temperature=temperature, max_tokens=max_tokens):
        yield delta
