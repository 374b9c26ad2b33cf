"""How a server is set up: where it listens, its tokens, the knowledge bases it serves, its size limits, CORS, audit."""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path

import attrs
from heta_framework.errors import HetaError

from heta_server.tokens import TokenTable

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8321
TOKEN_ENV = "HETA_SERVER_TOKEN"
#: a JSON request body (queries, text documents) larger than this is refused with 413
DEFAULT_MAX_BODY_BYTES = 1_000_000
#: an uploaded file larger than this is refused with 413
DEFAULT_MAX_UPLOAD_BYTES = 50_000_000
#: the name of the ``--kb`` knowledge base (served at /api/v1/... and /api/v1/kbs/default/...)
DEFAULT_KB = "default"
_KB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


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
    #: the tokens file's table (``--tokens``): several tokens, each with its principals, knowledge bases and rights
    tokens: TokenTable | None = attrs.field(default=None, repr=False)
    #: further knowledge bases by name (``--kb-dir NAME=PATH``), served at /api/v1/kbs/NAME/...
    kb_dirs: tuple[tuple[str, Path], ...] = attrs.field(default=(), converter=tuple)
    #: a file the ``heta.audit`` records go to (JSON lines)
    audit_log: Path | None = None
    #: audit reads (queries, searches, document listings) too, not only writes
    audit_reads: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    #: origins allowed by CORS; empty = CORS off (browsers only allow the page the server serves itself)
    cors_origins: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    #: offer the MCP write tools (add_document, remove_document) at /mcp; needs a token, and the caller's write right
    mcp_writes: bool = False
    #: one ``heta.requests`` log line per request (method, path, status, time, mode); off by default, like
    #: uvicorn's access log here: a line per request costs throughput, and a supervisor may not drain stderr
    request_log: bool = False
    #: put the query's text in that line too (off: a query may be private)
    log_queries: bool = False

    def check(self) -> None:
        if not is_loopback(self.host) and not self.token and self.tokens is None:
            raise ServerConfigError(
                f"Binding to {self.host} exposes the knowledge base beyond this machine, so a token is required: "
                f"set {TOKEN_ENV} (or pass --token-file FILE, or --tokens FILE); clients send 'Authorization: Bearer <token>'."
            )
        if self.token is not None and self.tokens is not None:
            raise ServerConfigError(
                f"Both a single token ({TOKEN_ENV} or --token-file) and a tokens file (--tokens) are set; give one: "
                "a tokens file entry with kbs = [\"*\"] and rights = [\"write\"] does what the single token does."
            )
        if self.token is not None and len(self.token) < 16:
            raise ServerConfigError("The server token is shorter than 16 characters; use a long random one (e.g. `openssl rand -hex 32`).")
        check_kb_names([name for name, _ in self.kb_dirs])
        if self.mcp_writes and not self.token and self.tokens is None:
            raise ServerConfigError(
                "--mcp-writes needs a token (--token-file, HETA_SERVER_TOKEN or --tokens): MCP write tools are only offered "
                "to callers a token names, and only those with the write right may use them."
            )
        if self.audit_reads and self.audit_log is None:
            raise ServerConfigError("--audit-reads needs --audit-log FILE: the file the records go to.")

    def token_table(self) -> TokenTable | None:
        """The tokens requests are checked against; ``None``: no token (every request is the anonymous caller)."""
        if self.tokens is not None:
            return self.tokens
        return TokenTable.single(self.token) if self.token else None


def parse_kb_dir(text: str) -> tuple[str, Path]:
    """``NAME=PATH`` (``heta serve --kb-dir``) as (name, path)."""
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise ServerConfigError(f"--kb-dir takes NAME=PATH (e.g. --kb-dir hr=/srv/kb/hr), got {text!r}.")
    return name.strip(), Path(path.strip())


def check_kb_names(names: list[str]) -> None:
    for name in names:
        if not _KB_NAME.fullmatch(name):
            raise ServerConfigError(
                f"Knowledge-base name {name[:80]!r}: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)."
            )
        if name == DEFAULT_KB:
            raise ServerConfigError(f"The name {DEFAULT_KB!r} is the --kb knowledge base's; give the --kb-dir one another name.")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ServerConfigError(f"--kb-dir names {', '.join(repeated)} more than once; each name serves one knowledge base.")


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
