"""A token-protected server refuses requests without the right bearer token; exposing without a token is refused."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from heta_framework.cli.main import cli
from heta_server.config import ServerConfig, ServerConfigError, read_token

TOKEN = "t0ken-for-tests-0123456789abcdef"


@pytest.fixture
def protected(built_kb, server_factory):
    return server_factory(built_kb, ServerConfig(token=TOKEN))


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": TOKEN},
                                     {"Authorization": f"Basic {TOKEN}"}])
def test_requests_without_the_token_are_refused(protected, headers):
    with protected.client(headers=headers) as client:
        for method, path in [("GET", "/api/v1/modes"), ("POST", "/api/v1/query"), ("GET", "/openapi.json"),
                             ("GET", "/api/v1/documents"), ("DELETE", "/api/v1/documents/penicillin"), ("GET", "/static/other")]:
            reply = client.request(method, path, json={"text": "x"})
            assert reply.status_code == 401, (method, path)
            assert reply.json()["error"]["code"] == "Unauthorized"
            assert TOKEN not in reply.text
        assert client.get("/healthz").status_code == 200  # health checks need no token
        # a browser opens the page without a bearer header: the page and its own files load, and it asks for the token
        for path in ("/", "/static/page.js", "/static/page.css"):
            assert client.get(path).status_code == 200, path


def test_the_right_token_is_let_in(protected):
    with protected.client(headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        assert client.get("/api/v1/modes").status_code == 200
        reply = client.post("/api/v1/query", json={"text": "penicillin", "mode": "full_text_search"})
    assert reply.status_code == 200 and reply.json()["results"]


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.org"])
def test_a_non_loopback_bind_needs_a_token(host):
    with pytest.raises(ServerConfigError, match="HETA_SERVER_TOKEN"):
        ServerConfig(host=host).check()
    ServerConfig(host=host, token=TOKEN).check()
    for loopback in ("127.0.0.1", "localhost", "::1"):
        ServerConfig(host=loopback).check()


def test_a_short_token_is_refused():
    with pytest.raises(ServerConfigError, match="16 characters"):
        ServerConfig(host="0.0.0.0", token="short").check()


def test_the_token_comes_from_a_file_or_the_environment(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(f"{TOKEN}\n")
    assert read_token(token_file) == TOKEN
    assert read_token(None, environ={"HETA_SERVER_TOKEN": f" {TOKEN} "}) == TOKEN
    assert read_token(None, environ={}) is None
    (tmp_path / "empty").write_text("")
    with pytest.raises(ServerConfigError, match="empty"):
        read_token(tmp_path / "empty")


def test_heta_serve_refuses_to_expose_without_a_token(built_kb, monkeypatch):
    monkeypatch.delenv("HETA_SERVER_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["--kb", str(built_kb), "serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "token is required" in result.output and "Traceback" not in result.output


def test_heta_serve_without_heta_server_says_what_to_install(built_kb, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "heta_server.serve", None)  # as if the distribution were not installed
    result = CliRunner().invoke(cli, ["--kb", str(built_kb), "serve"])
    assert result.exit_code == 2
    assert "`heta serve` needs the heta-server distribution: pip install heta-server" in result.output


def test_the_page_has_security_headers_and_no_inline_script(served):
    with served.client() as client:
        page = client.get("/")
        script = client.get("/static/page.js")
        api = client.get("/api/v1/modes")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert "<script>" not in page.text and "<style>" not in page.text and "style=" not in page.text  # all in files
    assert script.headers["content-type"].startswith("text/javascript")
    for reply in (page, script, api):
        assert reply.headers["x-content-type-options"] == "nosniff"
        assert reply.headers["x-frame-options"] == "DENY" and reply.headers["referrer-policy"] == "no-referrer"


def test_a_cors_preflight_passes_without_the_token_for_allowed_origins_only(built_kb, server_factory):
    running = server_factory(built_kb, ServerConfig(token=TOKEN, cors_origins=("https://app.example",)))
    preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}
    with running.client() as client:
        allowed = client.options("/api/v1/query", headers={"Origin": "https://app.example", **preflight})
        other = client.options("/api/v1/query", headers={"Origin": "https://evil.example", **preflight})
        no_token = client.post("/api/v1/query", json={"text": "x"}, headers={"Origin": "https://app.example"})
        with_token = client.post("/api/v1/query", json={"text": "penicillin", "mode": "full_text_search"},
                                 headers={"Origin": "https://app.example", "Authorization": f"Bearer {TOKEN}"})
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == "https://app.example"
    assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-origin" not in other.headers  # a disallowed origin learns nothing
    assert no_token.status_code == 401  # the request itself still needs the token
    assert with_token.status_code == 200 and with_token.headers["access-control-allow-origin"] == "https://app.example"
