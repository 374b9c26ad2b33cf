"""How the layout service failed, as stable codes: the codes of the document issues the failures become.

- ``layout_service_timeout``: no answer (or no finished task) within ``timeout_seconds``; the
  document stays pending and the next build sends it again;
- ``layout_service_error``: a 5xx answer or a connection that failed, after ``retries`` further
  attempts with a doubling back-off; pending for the next build, too;
- ``layout_service_rejected``: a 4xx answer (a wrong key, a file too large or of a type the
  service does not take): retrying would not help;
- ``layout_service_bad_answer``: an answer that is not JSON or a readable zip, or not of the
  shape MinerU answers in;
- ``layout_service_task_failed``: the service ran the task and says it failed;
- ``layout_service_key_missing``: ``api_key_env`` names a variable that is not set.
"""

from __future__ import annotations

from heta_framework.contracts.documents import DocumentParseError

TIMEOUT = "layout_service_timeout"
TASK_FAILED = "layout_service_task_failed"
FAILED = "layout_service_error"
REJECTED = "layout_service_rejected"
BAD_ANSWER = "layout_service_bad_answer"
KEY_MISSING = "layout_service_key_missing"


class LayoutServiceError(DocumentParseError):
    """The layout service could not read this document; ``code`` says how (see the module docstring)."""

    outcome = "Not indexed. Check the layout service, then build again with --rebuild."


def redact(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` cut out: a service may echo a request, key and all, in its error page."""
    return text.replace(secret, "***") if secret else text
