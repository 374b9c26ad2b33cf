"""Opening a ``MilvusClient``: a Lite file inside the knowledge base, or a server with a token from the environment.

The token is read from the variable ``token_env`` names, passed to the client and
kept nowhere else: errors name the server by a redacted uri (scheme, host, port)
and never repeat what the client said, since a client error can echo credentials.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from heta_framework.errors import RecipeError, StoreConnectionError

from heta_plugin_milvus.config import MilvusVectorConfig

if TYPE_CHECKING:  # imported when a client opens: pymilvus takes seconds to import
    from pymilvus import MilvusClient


def redact_uri(uri: str) -> str:
    """``scheme://host:port`` of a server uri (user, password, path and query dropped)."""
    parts = urlsplit(uri)
    host = parts.hostname or "?"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def lite_path(config: MilvusVectorConfig, root: Path) -> Path:
    """The Milvus Lite file: ``uri`` resolved inside the knowledge-base folder when relative; its folder is created."""
    path = Path(config.uri).expanduser()
    if not path.is_absolute():
        path = Path(root) / path
    if path.suffix != ".db":
        # Milvus Lite only opens *.db files; say so instead of its own less helpful message
        raise RecipeError(f"stores.vector uri {config.uri!r}: a Milvus Lite file must end in .db (or use http://host:19530)")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def token_from_environment(config: MilvusVectorConfig) -> str:
    if not config.token_env:
        return ""
    token = os.environ.get(config.token_env, "")
    if not token:
        raise StoreConnectionError(
            f"stores.vector (milvus) reads its credentials from ${config.token_env}, which is not set: "
            f"export {config.token_env}='user:password' (or an API key), or remove token_env for a server without auth"
        )
    return token


def describe_target(config: MilvusVectorConfig, root: Path) -> str:
    return f"Milvus at {redact_uri(config.uri)}" if config.is_server else f"Milvus Lite file {lite_path(config, root)}"


def open_client(config: MilvusVectorConfig, root: Path) -> MilvusClient:
    """A connected client, or a ``StoreConnectionError`` that names the server (never the token) and what to do."""
    if config.is_server:
        uri = config.uri
        hint = "check that the server is running and reachable, and the token in $" + (config.token_env or "TOKEN_ENV")
    else:
        uri = str(lite_path(config, root))
        hint = ("Milvus Lite opens a file in one process at a time: if another one (a build, `heta serve`) has it "
                "open, stop it or query through it, or move [stores.vector] to a Milvus server uri; "
                "Milvus Lite itself is `pip install heta-plugin-milvus[lite]`")
    token = token_from_environment(config)
    from pymilvus import MilvusClient

    try:
        return MilvusClient(uri=uri, token=token, db_name=config.db_name, timeout=config.timeout)
    except Exception as exc:  # noqa: BLE001  (pymilvus raises many types; the message may echo the token)
        # a Lite file has no secret to leak, so its error is kept; a server's is reduced to its type
        detail = type(exc).__name__ if config.is_server else f"{type(exc).__name__}: {exc}"
        raise StoreConnectionError(f"cannot open {describe_target(config, root)} ({detail}): {hint}") from None
