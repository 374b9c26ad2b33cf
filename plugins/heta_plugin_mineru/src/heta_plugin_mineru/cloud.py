"""MinerU's hosted service (``api = "cloud"``, ``endpoint = "https://mineru.net/api/v4"``).

It takes a document in four steps: ``POST {endpoint}/file-urls/batch`` asks for an upload
address (JSON ``{"code": 0, "data": {"batch_id", "file_urls": [...]}}``); the file is
``PUT`` there; ``GET {endpoint}/extract-results/batch/{batch_id}`` is polled until the
file's ``state`` is ``done`` (or ``failed``); its ``full_zip_url`` holds the output folder
as a zip (``answers.py``). The API's own answers carry ``code`` (0 when all is well) and
``msg``.

The key goes to the API only: the upload and download addresses are pre-signed storage
URLs on other hosts, so they are fetched by a client that sends no ``Authorization``.
"""

from __future__ import annotations

import functools
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from heta_plugin_mineru.answers import LayoutAnswer
from heta_plugin_mineru.calls import AGAIN, DETAIL_CHARS, call, read_answer, read_json
from heta_plugin_mineru.config import MinerUConfig
from heta_plugin_mineru.errors import BAD_ANSWER, REJECTED, TASK_FAILED, TIMEOUT, LayoutServiceError, redact

#: file states of the batch API that are neither finished nor failed
_WAITING = frozenset({"waiting-file", "pending", "running", "converting"})


def _checked(body: dict[str, Any], key: str | None, what: str) -> dict[str, Any]:
    """The ``data`` of an answer whose ``code`` is 0; a non-zero code is the service refusing the request."""
    if body.get("code") not in (0, "0"):
        reason = redact(str(body.get("msg") or body.get("code")), key)[:DETAIL_CHARS]
        raise LayoutServiceError(f"the layout service refused {what}: {reason}", code=REJECTED,
                                 outcome="Not indexed. Check the key (api_key_env), the account's quota and the file's size.")
    data = body.get("data")
    if not isinstance(data, dict):
        raise LayoutServiceError(f"the layout service's answer to {what} has no data", code=BAD_ANSWER)
    return data


def _address(value: Any, what: str) -> str:
    if not isinstance(value, str) or urlsplit(value).scheme not in ("http", "https"):
        raise LayoutServiceError(f"the layout service gave no usable {what} address", code=BAD_ANSWER)
    return value


def _result(data: dict[str, Any], name: str) -> dict[str, Any]:
    results = [r for r in data.get("extract_result") or () if isinstance(r, dict)]
    return next((r for r in results if r.get("file_name") == name), results[0] if results else {})


def run_cloud(config: MinerUConfig, key: str | None, client: httpx.Client, name: str, data: bytes) -> LayoutAnswer:
    base = config.endpoint.rstrip("/")
    url = base + "/file-urls/batch"
    request = {
        "files": [{"name": name, "data_id": name[:120]}], "language": config.language,
        "enable_table": config.table_enable, "enable_formula": config.formula_enable,
    }
    created = _checked(read_json(call(config, key, url, lambda: client.post(url, json=request)), key, "the upload request"), key, "the upload request")
    batch = created.get("batch_id")
    urls = created.get("file_urls")
    if not isinstance(batch, str) or not batch or "/" in batch or not isinstance(urls, list) or not urls:
        raise LayoutServiceError("the layout service's answer to the upload request has no batch_id and file_urls", code=BAD_ANSWER)
    upload = _address(urls[0], "upload")
    with httpx.Client(timeout=httpx.Timeout(config.timeout_seconds)) as storage:  # pre-signed: never the key
        call(config, key, "the upload address", lambda: storage.put(upload, content=data))
        deadline = time.monotonic() + config.timeout_seconds
        status_url = f"{base}/extract-results/batch/{batch}"
        while True:
            body = _checked(read_json(call(config, key, status_url, lambda: client.get(status_url)), key, "a batch's state"), key, "a batch's state")
            result = _result(body, name)
            state = str(result.get("state") or "")
            if state == "done":
                archive = _address(result.get("full_zip_url"), "result")
                return read_answer(call(config, key, "the result address", functools.partial(storage.get, archive)), key)
            if state == "failed":
                reason = redact(str(result.get("err_msg") or "no reason given"), key)[:DETAIL_CHARS]
                raise LayoutServiceError(f"the layout service could not read the file: {reason}", code=TASK_FAILED,
                                         outcome="Not indexed. The service could not read this file; check it opens, then build again with --rebuild.")
            if state and state not in _WAITING:
                raise LayoutServiceError(f"the layout service reports the unknown state {state[:40]!r}", code=BAD_ANSWER)
            if time.monotonic() + config.poll_interval_seconds > deadline:
                raise LayoutServiceError(f"the layout service had not read the file within {config.timeout_seconds:g} s (last state {state or 'none'!r})",
                                         code=TIMEOUT, outcome=AGAIN, retry=True)
            time.sleep(config.poll_interval_seconds)
