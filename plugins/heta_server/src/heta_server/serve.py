"""Run the server: load the knowledge base once and hand the app to uvicorn (models warm at start-up)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import uvicorn
from heta_framework.kb import KnowledgeBase

from heta_server.app import create_app
from heta_server.config import ServerConfig


def serve(
    kb_path: str | Path, config: ServerConfig, *, warm: bool = True, log_level: str = "info",
    on_start: Callable[[], None] | None = None,
) -> None:
    """Serve ``kb_path`` until interrupted (Ctrl-C). Refuses a non-loopback bind without a token.

    ``on_start`` runs once the configuration is checked and the knowledge base loaded, just before the server
    binds: a "Serving ..." line printed there is never followed by a refusal to start.
    """
    config.check()
    kb = KnowledgeBase.load(kb_path)
    try:
        app = create_app(kb, config, warm=warm)
        if on_start is not None:
            on_start()
        uvicorn.run(app, host=config.host, port=config.port, log_level=log_level, access_log=False, server_header=False)
    finally:
        kb.close()
