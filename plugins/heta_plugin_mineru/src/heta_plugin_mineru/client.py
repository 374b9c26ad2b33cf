"""One document to the layout service over HTTP, and its answer back (read by ``answers.py``).

The call is MinerU's ``POST {endpoint}/file_parse``: the file as multipart ``files``, form
fields asking for the Markdown (``return_md``) and the block list (``return_content_list``),
and the answer as JSON, ``{"backend", "version", "results": {<file stem>: {"md_content",
"content_list"}}}`` (``content_list`` is a list, or a JSON string of one in older versions).
With ``api = "tasks"`` it is MinerU's asynchronous API instead: ``POST {endpoint}/tasks``
gives a ``task_id``, ``GET /tasks/{id}`` is polled until its ``status`` is done, and
``GET /tasks/{id}/result`` gives the answer. Either answer may be JSON or the zip of MinerU's output folder.

Every failure is a ``LayoutServiceError`` with a stable code (``errors.py``).

The key is sent only in the ``Authorization`` header. It is cut out of any text that goes
into an error (a service may echo a request back in its error page), and never logged.
"""

from __future__ import annotations

import json
import logging
import mimetypes
import time
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

import httpx

from heta_plugin_mineru.answers import LayoutAnswer, answer_from_json, answer_from_zip
from heta_plugin_mineru.config import MinerUConfig
from heta_plugin_mineru.errors import BAD_ANSWER, FAILED, KEY_MISSING, REJECTED, TASK_FAILED, TIMEOUT, LayoutServiceError, redact

log = logging.getLogger(__name__)

_DETAIL_CHARS = 200
#: task states of MinerU's asynchronous API (and of services modelled on it)
_DONE = frozenset({"completed", "done", "success", "finished"})
_FAILED = frozenset({"failed", "error", "cancelled", "canceled"})
#: a time-out or a server error may pass: the document stays pending and the next build sends it again
_AGAIN = "Not indexed this build; the next heta build sends it to the service again."


def _detail(response: httpx.Response, key: str | None) -> str:
    """A short reason from an error answer (FastAPI's ``detail``, or its start), with the key cut out."""
    try:
        body = response.json()
        reason = body.get("detail") or body.get("error") or body.get("msg") if isinstance(body, dict) else body
        text = reason if isinstance(reason, str) else json.dumps(reason)
    except ValueError:
        text = response.text
    text = " ".join(redact(text, key).split())[:_DETAIL_CHARS]
    return f": {text}" if text else ""


def _form(config: MinerUConfig) -> dict[str, str]:
    flag = {True: "true", False: "false"}
    return {
        "lang_list": config.language,
        "backend": config.backend,
        "parse_method": config.parse_method,
        "formula_enable": flag[config.formula_enable],
        "table_enable": flag[config.table_enable],
        "return_md": "true",
        "return_content_list": "true",
        "return_middle_json": "false",
        "return_model_output": "false",
        "return_images": "false",
    }


def request_layout(config: MinerUConfig, data: bytes, name: str) -> LayoutAnswer:
    """Send ``data`` (the file ``name``) to the service and return its answer; ``LayoutServiceError`` when it fails."""
    key = config.api_key()
    if config.api_key_env is not None and key is None:
        raise LayoutServiceError(
            f"api_key_env names the environment variable {config.api_key_env}, which is not set", code=KEY_MISSING,
            outcome=f"Not indexed. Set {config.api_key_env} in the environment of the build, then build again with --rebuild.",
        )
    base = config.endpoint.rstrip("/")
    headers = {"Accept": "application/json, application/zip", **({"Authorization": f"Bearer {key}"} if key else {})}
    upload = {"files": (PurePath(name).name, data, mimetypes.guess_type(name)[0] or "application/octet-stream")}
    with httpx.Client(timeout=httpx.Timeout(config.timeout_seconds), headers=headers) as client:
        if config.api == "file_parse":
            url = base + "/file_parse"
            return _answer(_call(config, key, url, lambda: client.post(url, files=upload, data=_form(config))), key)
        return _run_task(config, key, client, base, lambda url: client.post(url, files=upload, data=_form(config)))


def _call(config: MinerUConfig, key: str | None, url: str, send: Callable[[], httpx.Response]) -> httpx.Response:
    """``send()`` with ``retries`` further attempts after a 5xx answer or a failed connection; a 2xx/3xx answer."""
    attempt = 0
    while True:
        try:
            response = send()
        except httpx.TimeoutException:
            raise LayoutServiceError(
                f"the layout service at {url} did not answer within {config.timeout_seconds:g} s", code=TIMEOUT, outcome=_AGAIN, retry=True,
            ) from None
        except httpx.TransportError as exc:
            problem = f"the layout service at {url} could not be reached ({type(exc).__name__}: {redact(str(exc), key)})"
        else:
            if response.status_code < 400:
                return response
            if response.status_code < 500:
                raise LayoutServiceError(
                    f"the layout service at {url} refused the document: HTTP {response.status_code}{_detail(response, key)}", code=REJECTED,
                    outcome="Not indexed. Check the key (api_key_env) and that the service takes this file type and size.",
                )
            problem = f"the layout service at {url} failed: HTTP {response.status_code}{_detail(response, key)}"
        if attempt >= config.retries:
            raise LayoutServiceError(problem + (f" ({attempt + 1} attempts)" if attempt else ""), code=FAILED, outcome=_AGAIN, retry=True)
        attempt += 1
        log.warning("layout service attempt %d failed, retrying: %s", attempt, problem)
        time.sleep(config.retry_backoff_seconds * 2 ** (attempt - 1))


def _answer(response: httpx.Response, key: str | None) -> LayoutAnswer:
    if response.content.startswith(b"PK\x03\x04") or "zip" in response.headers.get("content-type", ""):
        return answer_from_zip(response.content)
    try:
        body = response.json()
    except ValueError:
        raise LayoutServiceError(f"the layout service answered with something that is not JSON{_detail(response, key)}", code=BAD_ANSWER) from None
    return answer_from_json(body)


def _json(response: httpx.Response, key: str | None, what: str) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        raise LayoutServiceError(f"the layout service answered {what} with something that is not JSON{_detail(response, key)}", code=BAD_ANSWER) from None
    if not isinstance(body, dict):
        raise LayoutServiceError(f"the layout service answered {what} with a {type(body).__name__}, not an object", code=BAD_ANSWER)
    return body


def _field(body: dict[str, Any], name: str) -> Any:
    """``body[name]``, or ``body["data"][name]``: services wrap their answers either way."""
    inner = body.get("data")
    return body.get(name) if body.get(name) is not None or not isinstance(inner, dict) else inner.get(name)


def _run_task(config: MinerUConfig, key: str | None, client: httpx.Client, base: str, submit: Callable[[str], httpx.Response]) -> LayoutAnswer:
    """MinerU's asynchronous API: ``POST /tasks``, poll ``GET /tasks/{id}`` until it is done, ``GET /tasks/{id}/result``."""
    url = base + "/tasks"
    task = _field(_json(_call(config, key, url, lambda: submit(url)), key, "the new task"), "task_id")
    if not isinstance(task, str) or not task.strip() or "/" in task:
        raise LayoutServiceError("the layout service's answer to a new task has no task_id", code=BAD_ANSWER)
    deadline = time.monotonic() + config.timeout_seconds
    status_url = f"{url}/{task}"
    while True:
        body = _json(_call(config, key, status_url, lambda: client.get(status_url)), key, "a task's status")
        state = str(_field(body, "status") or "").lower()
        if state in _DONE:
            break
        if state in _FAILED:
            reason = next((str(r) for r in (_field(body, k) for k in ("error", "err_msg", "message", "msg")) if r), "no reason given")
            raise LayoutServiceError(f"the layout service's task {task} failed: {redact(reason, key)[:_DETAIL_CHARS]}", code=TASK_FAILED,
                                     outcome="Not indexed. The service could not read this file; check it opens, then build again with --rebuild.")
        if time.monotonic() + config.poll_interval_seconds > deadline:
            raise LayoutServiceError(f"the layout service's task {task} was not done within {config.timeout_seconds:g} s (last status {state or 'none'!r})",
                                     code=TIMEOUT, outcome=_AGAIN, retry=True)
        time.sleep(config.poll_interval_seconds)
    result_url = f"{status_url}/result"
    return _answer(_call(config, key, result_url, lambda: client.get(result_url)), key)


