"""``heta serve``: the HTTP API and search page of the heta-server distribution, over the ``--kb`` folder.

A thin command: the server lives in ``heta_server`` (FastAPI, uvicorn), imported only
here and only when the command runs, so heta-core never needs those libraries.
"""

from __future__ import annotations

import math
from pathlib import Path

import click

from heta_framework.cli.output import UserError

MISSING_SERVER = "`heta serve` needs the heta-server distribution: pip install heta-server"
MISSING_MCP = "`heta mcp` needs the heta-server distribution: pip install heta-server"


class _SizeMB(click.ParamType):
    """Megabytes: a finite number above 0 (``nan`` and ``inf`` pass a plain FloatRange)."""

    name = "megabytes"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of megabytes.", param, ctx)
        if not math.isfinite(number) or number <= 0:
            self.fail(f"{value!r} is not a size: give a number of megabytes above 0.", param, ctx)
        return number


SIZE_MB = _SizeMB()


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; anything but loopback needs a token.")
@click.option("--port", default=8321, show_default=True, type=click.IntRange(0, 65535), help="TCP port (0: any free port).")
@click.option("--token-file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="File whose first line is the bearer token (default: the HETA_SERVER_TOKEN environment variable).")
@click.option("--tokens", "tokens_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Tokens file (TOML, or JSON by its .json name): the SHA-256 of each token with its principal, groups, "
                   "knowledge bases and rights (docs/server.md). Instead of --token-file.")
@click.option("--kb-dir", "kb_dirs", multiple=True, metavar="NAME=PATH",
              help="Also serve the knowledge base at PATH as NAME, under /api/v1/kbs/NAME/; repeat for more. --kb is 'default'.")
@click.option("--audit-log", type=click.Path(dir_okay=False), default=None,
              help="Append the audit records (every write, with the token's principal) to this file, one JSON object a line.")
@click.option("--audit-reads", is_flag=True, help="Audit queries, searches and document reads too (needs --audit-log).")
@click.option("--cors-origin", "cors_origins", multiple=True, help="Allow browser pages from this origin (CORS); repeat for more. Default: CORS off.")
@click.option("--max-body-mb", default=1.0, show_default=True, type=SIZE_MB, help="Largest JSON request body.")
@click.option("--max-upload-mb", default=50.0, show_default=True, type=SIZE_MB, help="Largest uploaded file.")
@click.option("--request-log", is_flag=True, help="Log one line per request on stderr: method, path, status, time, query mode.")
@click.option("--log-queries", is_flag=True, help="Put each query's text in its request log line (off: queries may be private).")
@click.option("--mcp-writes", is_flag=True, help="Offer the MCP write tools at /mcp (needs a token; callers need the write right).")
@click.option("--no-warm", is_flag=True, help="Do not load local models at start-up (the first query loads them).")
@click.pass_obj
def serve(obj: dict, host: str, port: int, token_file: str | None, tokens_file: str | None, kb_dirs: tuple[str, ...],
          audit_log: str | None, audit_reads: bool, cors_origins: tuple[str, ...], max_body_mb: float, max_upload_mb: float,
          request_log: bool, log_queries: bool, mcp_writes: bool, no_warm: bool) -> None:
    """Serve the knowledge base over HTTP (JSON API at /api/v1, search page at /) until Ctrl-C."""
    try:
        from heta_server.config import ServerConfig, parse_kb_dir, read_token
        from heta_server.serve import serve as run_server
        from heta_server.tokens import read_tokens
    except ImportError:
        raise UserError(MISSING_SERVER) from None
    config = ServerConfig(
        host=host, port=port, token=read_token(token_file), tokens=read_tokens(tokens_file) if tokens_file else None,
        kb_dirs=[parse_kb_dir(text) for text in kb_dirs], audit_log=Path(audit_log) if audit_log else None, audit_reads=audit_reads,
        cors_origins=cors_origins, max_body_bytes=int(max_body_mb * 1_000_000), max_upload_bytes=int(max_upload_mb * 1_000_000),
        mcp_writes=mcp_writes, request_log=request_log, log_queries=log_queries,
    )
    address = f"http://{host}:{port}/" if port else f"http://{host} on a free port (uvicorn's line below names it)"

    def announce() -> None:  # once the server is sure to start: never a "Serving" line before a refusal
        click.echo(f"Serving {obj['kb']} at {address} (API: /api/v1, OpenAI-compatible: /v1, MCP: /mcp, schema: /openapi.json). "
                   "Ctrl-C stops.", err=True)

    run_server(obj["kb"], config, warm=not no_warm, on_start=announce)


@click.command("mcp")
@click.option("--as", "principals", multiple=True, metavar="PRINCIPAL",
              help="Run as this principal (repeat for a user and their groups); without it only public documents are seen.")
@click.option("--allow-writes", is_flag=True, help="Offer the add_document and remove_document tools (off by default).")
@click.option("--no-warm", is_flag=True, help="Do not load local models at start-up (the first search loads them).")
@click.pass_obj
def mcp(obj: dict, principals: tuple[str, ...], allow_writes: bool, no_warm: bool) -> None:
    """Serve the knowledge base to an assistant over MCP on stdin/stdout (docs/mcp.md)."""
    try:
        from heta_server.mcp_stdio import run_stdio
    except ImportError:
        raise UserError(MISSING_MCP) from None
    run_stdio(obj["kb"], principals=principals, allow_writes=allow_writes, warm=not no_warm)


COMMANDS = (serve, mcp)
