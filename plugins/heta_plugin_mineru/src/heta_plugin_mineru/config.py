"""``[parsers.documents.options.mineru]``: where the layout service is and how to call it.

The API key is never a setting: ``api_key_env`` names the environment variable that holds
it, read when a document is sent, so the key is in no recipe file, run record or summary.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import attrs
from heta_framework.common.validators import OptionValueError, boolean, number, one_of, whole_number

#: what MinerU reads and heta-core reads less well (PDF layout) or not at all (.doc, .ppt)
DEFAULT_EXTENSIONS = (".pdf", ".doc", ".docx", ".ppt")


def _endpoint(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise OptionValueError(attribute.name, f"endpoint must be an http:// or https:// address, got {value!r}")
    if parts.username or parts.password or parts.query:  # a key in the address would be written into the recipe and errors
        raise OptionValueError(attribute.name, "endpoint must hold no user name, password or query; name the key's environment variable with api_key_env")


def _extensions(instance: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]) -> None:
    bad = [extension for extension in value if not (isinstance(extension, str) and extension.startswith(".") and len(extension) > 1)]
    if bad or not value:
        raise OptionValueError(attribute.name, f"extensions must be a non-empty list like [\".pdf\", \".doc\"], got {list(value)!r}")


def _env_name(instance: object, attribute: attrs.Attribute[str | None], value: str | None) -> None:
    if value is not None and not (value.replace("_", "").isalnum() and not value[0].isdigit()):
        raise OptionValueError(attribute.name, "api_key_env must be the name of an environment variable, like MINERU_API_KEY (not the key itself)")


@attrs.frozen
class MinerUConfig:
    """How to reach the service. ``endpoint`` is its base address (``POST {endpoint}/file_parse``)."""

    endpoint: str = attrs.field(validator=_endpoint)
    #: the environment variable holding the key, sent as ``Authorization: Bearer``; none: no key
    api_key_env: str | None = attrs.field(default=None, validator=_env_name)
    #: MinerU's synchronous ``POST /file_parse``, its asynchronous ``/tasks`` API (submit, poll, fetch the result),
    #: or its hosted service's batch API (``cloud``: endpoint ``https://mineru.net/api/v4`` and a key)
    api: str = attrs.field(default="file_parse", validator=one_of(("file_parse", "tasks", "cloud")))
    #: seconds one document may take, upload and layout analysis included (for ``tasks``: until the task is done)
    timeout_seconds: float = attrs.field(default=300.0, validator=number(above=0))
    #: how often a task's status is asked for (``api = "tasks"``)
    poll_interval_seconds: float = attrs.field(default=2.0, validator=number(above=0))
    #: further attempts after a 5xx answer or a dropped connection (not after a time-out: the next would wait as long)
    retries: int = attrs.field(default=2, validator=whole_number(0))
    retry_backoff_seconds: float = attrs.field(default=2.0, validator=number(minimum=0))
    #: the file types sent to the service; the others keep their local parsers
    extensions: tuple[str, ...] = attrs.field(default=DEFAULT_EXTENSIONS, converter=lambda v: tuple(str(e).lower() for e in v), validator=_extensions)
    #: when the service fails, read the document with the local parser of its type (if one is installed)
    fallback: bool = attrs.field(default=True, validator=boolean)
    #: MinerU's own form fields: the OCR language, its backend (pipeline, vlm-...), auto/txt/ocr, and what to recognise
    language: str = "en"
    backend: str = "pipeline"
    parse_method: str = "auto"
    formula_enable: bool = attrs.field(default=True, validator=boolean)
    table_enable: bool = attrs.field(default=True, validator=boolean)

    def api_key(self) -> str | None:
        """The key from the environment, at the moment of the call; ``None`` when no variable is named."""
        if self.api_key_env is None:
            return None
        return os.environ.get(self.api_key_env) or None
