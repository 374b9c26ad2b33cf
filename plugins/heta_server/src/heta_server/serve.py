"""Run the server: load the knowledge bases once and hand the app to uvicorn (models warm at start-up)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import uvicorn
from heta_framework.kb import KnowledgeBase

from heta_server.app import create_app
from heta_server.config import DEFAULT_KB, ServerConfig, ServerConfigError
from heta_server.request_log import REQUEST_LOGGER, show_on_stderr


def serve(
    kb_path: str | Path, config: ServerConfig, *, warm: bool = True, log_level: str = "info",
    on_start: Callable[[], None] | None = None,
) -> None:
    """Serve ``kb_path`` (and ``config.kb_dirs`` by name) until interrupted (Ctrl-C). Refuses a non-loopback bind
    without a token.

    ``on_start`` runs once the configuration is checked and the knowledge bases loaded, just before the server
    binds: a "Serving ..." line printed there is never followed by a refusal to start.
    """
    config.check()
    # model loading is said (a line or two), at start-up or at the first query under --no-warm
    show_on_stderr("heta_server.tenants", "heta_server.warm", *([REQUEST_LOGGER] if config.request_log else []))
    check_distinct_folders([(DEFAULT_KB, Path(kb_path)), *config.kb_dirs])
    with ExitStack() as stack:
        kb = KnowledgeBase.load(kb_path)
        stack.callback(kb.close)
        others = {}
        for name, path in config.kb_dirs:
            others[name] = KnowledgeBase.load(path)
            stack.callback(others[name].close)
        app = create_app(kb, config, warm=warm, kbs=others)
        if on_start is not None:
            on_start()
        uvicorn.run(app, host=config.host, port=config.port, log_level=log_level, access_log=False, server_header=False)


def check_distinct_folders(named: list[tuple[str, Path]]) -> None:
    """One knowledge-base folder under one name: two loaded copies of one folder would not see each other's writes."""
    seen: dict[Path, str] = {}
    for name, path in named:
        resolved = path.resolve()
        if resolved in seen:
            raise ServerConfigError(f"{name!r} and {seen[resolved]!r} are the same knowledge-base folder ({path}); serve it under one name.")
        seen[resolved] = name
