"""Talking to the layout service: retries, time-outs and error answers as ``LayoutServiceError``s, answers read.

Shared by the service's APIs (``client.py``: ``file_parse`` and ``tasks``; ``cloud.py``: MinerU's
cloud). The key is cut out of every text that goes into an error (``redact``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

import httpx

from heta_plugin_mineru.answers import LayoutAnswer, answer_from_json, answer_from_zip
from heta_plugin_mineru.config import MinerUConfig
from heta_plugin_mineru.errors import BAD_ANSWER, FAILED, REJECTED, TIMEOUT, LayoutServiceError, redact

log = logging.getLogger(__name__)

DETAIL_CHARS = 200
#: a time-out or a server error may pass: the document stays pending and the next build sends it again
AGAIN = "Not indexed this build; the next heta build sends it to the service again."


def detail(response: httpx.Response, key: str | None) -> str:
    """A short reason from an error answer (FastAPI's ``detail``, or its start), with the key cut out."""
    try:
        body = response.json()
        reason = body.get("detail") or body.get("error") or body.get("msg") if isinstance(body, dict) else body
        text = reason if isinstance(reason, str) else json.dumps(reason)
    except ValueError:
        text = response.text
    text = " ".join(redact(text, key).split())[:DETAIL_CHARS]
    return f": {text}" if text else ""


def call(config: MinerUConfig, key: str | None, url: str, send: Callable[[], httpx.Response]) -> httpx.Response:
    """``send()`` with ``retries`` further attempts after a 5xx answer or a failed connection; a 2xx/3xx answer."""
    attempt = 0
    while True:
        try:
            response = send()
        except httpx.TimeoutException:
            raise LayoutServiceError(
                f"the layout service at {url} did not answer within {config.timeout_seconds:g} s", code=TIMEOUT, outcome=AGAIN, retry=True,
            ) from None
        except httpx.TransportError as exc:
            problem = f"the layout service at {url} could not be reached ({type(exc).__name__}: {redact(str(exc), key)})"
        else:
            if response.status_code < 400:
                return response
            if response.status_code < 500:
                raise LayoutServiceError(
                    f"the layout service at {url} refused the document: HTTP {response.status_code}{detail(response, key)}", code=REJECTED,
                    outcome="Not indexed. Check the key (api_key_env) and that the service takes this file type and size.",
                )
            problem = f"the layout service at {url} failed: HTTP {response.status_code}{detail(response, key)}"
        if attempt >= config.retries:
            raise LayoutServiceError(problem + (f" ({attempt + 1} attempts)" if attempt else ""), code=FAILED, outcome=AGAIN, retry=True)
        attempt += 1
        log.warning("layout service attempt %d failed, retrying: %s", attempt, problem)
        time.sleep(config.retry_backoff_seconds * 2 ** (attempt - 1))


def read_answer(response: httpx.Response, key: str | None) -> LayoutAnswer:
    if response.content.startswith(b"PK\x03\x04") or "zip" in response.headers.get("content-type", ""):
        return answer_from_zip(response.content)
    try:
        body = response.json()
    except ValueError:
        raise LayoutServiceError(f"the layout service answered with something that is not JSON{detail(response, key)}", code=BAD_ANSWER) from None
    return answer_from_json(body)


def read_json(response: httpx.Response, key: str | None, what: str) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        raise LayoutServiceError(f"the layout service answered {what} with something that is not JSON{detail(response, key)}", code=BAD_ANSWER) from None
    if not isinstance(body, dict):
        raise LayoutServiceError(f"the layout service answered {what} with a {type(body).__name__}, not an object", code=BAD_ANSWER)
    return body


def field(body: dict[str, Any], name: str) -> Any:
    """``body[name]``, or ``body["data"][name]``: services wrap their answers either way."""
    inner = body.get("data")
    return body.get(name) if body.get(name) is not None or not isinstance(inner, dict) else inner.get(name)
