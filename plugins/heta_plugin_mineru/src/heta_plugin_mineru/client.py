"""One document to the layout service over HTTP, and its answer back (read by ``answers.py``).

The call is MinerU's ``POST {endpoint}/file_parse``: the file as multipart ``files``, form
fields asking for the Markdown (``return_md``) and the block list (``return_content_list``),
and the answer as JSON, ``{"backend", "version", "results": {<file stem>: {"md_content",
"content_list"}}}`` (``content_list`` is a list, or a JSON string of one in older versions).
With ``api = "tasks"`` it is MinerU's asynchronous API instead: ``POST {endpoint}/tasks``
gives a ``task_id``, ``GET /tasks/{id}`` is polled until its ``status`` is done, and
``GET /tasks/{id}/result`` gives the answer. Either answer may be JSON or the zip of MinerU's
output folder. ``api = "cloud"`` is MinerU's hosted service (``cloud.py``).

Every failure is a ``LayoutServiceError`` with a stable code (``errors.py``).

The key is sent only in the ``Authorization`` header. It is cut out of any text that goes
into an error (a service may echo a request back in its error page), and never logged.
"""

from __future__ import annotations

import mimetypes
import time
from collections.abc import Callable
from pathlib import PurePath

import httpx

from heta_plugin_mineru.answers import LayoutAnswer
from heta_plugin_mineru.calls import AGAIN, DETAIL_CHARS, call, field, read_answer, read_json
from heta_plugin_mineru.cloud import run_cloud
from heta_plugin_mineru.config import MinerUConfig
from heta_plugin_mineru.errors import BAD_ANSWER, KEY_MISSING, TASK_FAILED, TIMEOUT, LayoutServiceError, redact

#: task states of MinerU's asynchronous API (and of services modelled on it)
_DONE = frozenset({"completed", "done", "success", "finished"})
_FAILED = frozenset({"failed", "error", "cancelled", "canceled"})


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
        if config.api == "cloud":
            return run_cloud(config, key, client, PurePath(name).name, data)
        if config.api == "file_parse":
            url = base + "/file_parse"
            return read_answer(call(config, key, url, lambda: client.post(url, files=upload, data=_form(config))), key)
        return _run_task(config, key, client, base, lambda url: client.post(url, files=upload, data=_form(config)))


def _run_task(config: MinerUConfig, key: str | None, client: httpx.Client, base: str, submit: Callable[[str], httpx.Response]) -> LayoutAnswer:
    """MinerU's asynchronous API: ``POST /tasks``, poll ``GET /tasks/{id}`` until it is done, ``GET /tasks/{id}/result``."""
    url = base + "/tasks"
    task = field(read_json(call(config, key, url, lambda: submit(url)), key, "the new task"), "task_id")
    if not isinstance(task, str) or not task.strip() or "/" in task:
        raise LayoutServiceError("the layout service's answer to a new task has no task_id", code=BAD_ANSWER)
    deadline = time.monotonic() + config.timeout_seconds
    status_url = f"{url}/{task}"
    while True:
        body = read_json(call(config, key, status_url, lambda: client.get(status_url)), key, "a task's status")
        state = str(field(body, "status") or "").lower()
        if state in _DONE:
            break
        if state in _FAILED:
            reason = next((str(r) for r in (field(body, k) for k in ("error", "err_msg", "message", "msg")) if r), "no reason given")
            raise LayoutServiceError(f"the layout service's task {task} failed: {redact(reason, key)[:DETAIL_CHARS]}", code=TASK_FAILED,
                                     outcome="Not indexed. The service could not read this file; check it opens, then build again with --rebuild.")
        if time.monotonic() + config.poll_interval_seconds > deadline:
            raise LayoutServiceError(f"the layout service's task {task} was not done within {config.timeout_seconds:g} s (last status {state or 'none'!r})",
                                     code=TIMEOUT, outcome=AGAIN, retry=True)
        time.sleep(config.poll_interval_seconds)
    result_url = f"{status_url}/result"
    return read_answer(call(config, key, result_url, lambda: client.get(result_url)), key)


