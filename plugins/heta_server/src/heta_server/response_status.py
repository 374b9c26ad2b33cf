"""The status code of the response a middleware passes on: one ``send`` wrapper for every middleware that reports it."""

from __future__ import annotations

from typing import Any


class ResponseStatus:
    """A ``send`` that passes every message on and keeps the status of ``http.response.start``.

    ``code`` is ``default`` until the response starts: 500 for a middleware that reports a request whose
    app raised before answering as the client will see it, 0 for one that says no response was sent.
    """

    def __init__(self, send: Any, default: int):
        self._send = send
        self.code = default

    async def __call__(self, message: dict) -> None:
        if message["type"] == "http.response.start":
            self.code = message["status"]
        await self._send(message)
