"""How a server is set up: where it listens, its token, its size limits, CORS."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import attrs
from heta_framework.errors import HetaError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8321
TOKEN_ENV = "HETA_SERVER_TOKEN"
#: a JSON request body (queries, text documents) larger than this is refused with 413
DEFAULT_MAX_BODY_BYTES = 1_000_000
#: an uploaded file larger than this is refused with 413
DEFAULT_MAX_UPLOAD_BYTES = 50_000_000


class ServerConfigError(HetaError):
    """The server cannot start as configured (say, exposed without a token)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything: treat it as exposed


@attrs.frozen
class ServerConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    #: the bearer token every endpoint but /healthz requires; None = no token (loopback only)
    token: str | None = attrs.field(default=None, repr=False)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    #: origins allowed by CORS; empty = CORS off (browsers only allow the page the server serves itself)
    cors_origins: tuple[str, ...] = attrs.field(default=(), converter=tuple)

    def check(self) -> None:
        if not is_loopback(self.host) and not self.token:
            raise ServerConfigError(
                f"Binding to {self.host} exposes the knowledge base beyond this machine, so a token is required: "
                f"set {TOKEN_ENV} (or pass --token-file FILE); clients send 'Authorization: Bearer <token>'."
            )
        if self.token is not None and len(self.token) < 16:
            raise ServerConfigError("The server token is shorter than 16 characters; use a long random one (e.g. `openssl rand -hex 32`).")


def read_token(token_file: str | Path | None = None, *, environ: dict[str, str] | None = None) -> str | None:
    """The token from ``token_file`` (first line) or else the ``HETA_SERVER_TOKEN`` environment variable."""
    if token_file is not None:
        try:
            text = Path(token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ServerConfigError(f"Cannot read the token file {token_file}: {exc.strerror}.") from None
        except UnicodeDecodeError:
            raise ServerConfigError(
                f"The token file {token_file} is not UTF-8 text; write the token as one line of plain text."
            ) from None
        if not text:
            raise ServerConfigError(f"The token file {token_file} is empty.")
        return text.splitlines()[0].strip()
    value = (environ if environ is not None else os.environ).get(TOKEN_ENV, "").strip()
    return value or None
