"""MCP through the SDK's own client: the streamable-HTTP client against ``/mcp`` on a served knowledge base, and the
stdio client spawning ``heta mcp``. Every tool is listed and called; callers see only what their token (or ``--as``)
may read; failures are tool errors with the HTTP API's codes."""

from __future__ import annotations

import json
import os
import shutil
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from heta_framework.testing.http import chat_stream_reply, last_user_message
from heta_server.config import ServerConfig
from heta_server.tokens import parse_tokens, token_hash
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

READ_TOOLS = {"search", "list_modes", "list_documents", "read_document"}
LAB_QUESTION = "secret formula penicillin broth corn steep liquor lactose Peoria"


@asynccontextmanager
async def http_client(url: str, headers: dict | None = None):
    async with Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))) as client:
        yield client


def data(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def error(result) -> dict:
    assert result.is_error
    return json.loads(result.content[0].text)["error"]


async def test_http_lists_and_calls_every_read_tool_as_the_tokens_caller(assistant_served, scripted_model):
    running, headers, _ = assistant_served
    async with http_client(f"{running.url}/mcp", headers["outsider"]) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == READ_TOOLS | {"answer"}  # a language model: answer; no --mcp-writes: no write tools
        assert tools["search"].input_schema["required"] == ["query"] and "mode" in tools["search"].input_schema["properties"]

        found = data(await client.call_tool("search", {"query": "Who discovered penicillin?", "top_k": 3}))
        assert found["mode"] == "full_text_search" and found["results"][0]["document_id"] == "penicillin"
        hidden = data(await client.call_tool("search", {"query": LAB_QUESTION, "top_k": 10}))
        assert "lab-note" not in {r["document_id"] for r in hidden["results"]}

        modes = {row["mode"]: row for row in data(await client.call_tool("list_modes", {}))["modes"]}
        assert modes["full_text_search"]["available"] and not modes["vector_search"]["available"]
        assert modes["vector_search"]["reasons"]  # why not, as `heta modes` says

        listed = data(await client.call_tool("list_documents", {"limit": 2}))
        assert listed["total"] == 4 and len(listed["documents"]) == 2 and listed["next_offset"] == 2
        rest = data(await client.call_tool("list_documents", {"offset": 2}))
        ids = {d["id"] for d in listed["documents"] + rest["documents"]}
        assert ids == {"penicillin", "fleming", "whales", "python"} and rest["next_offset"] is None

        page = data(await client.call_tool("read_document", {"document_id": "penicillin", "max_chars": 40}))
        assert page["text"] == "# Penicillin\n\nAlexander Fleming discover" and page["next_offset"] == 40
        following = data(await client.call_tool("read_document", {"document_id": "penicillin", "offset": 40}))
        assert following["text"].startswith("ed penicillin in London") and following["next_offset"] is None
        assert page["name"] == "penicillin.md" and page["total_chars"] == 40 + len(following["text"])

        unreadable = error(await client.call_tool("read_document", {"document_id": "lab-note"}))
        assert unreadable == error(await client.call_tool("read_document", {"document_id": "never-was"})) | {
            "message": unreadable["message"]}
        assert (unreadable["code"], unreadable["status"]) == ("UnknownDocument", 404)
        assert error(await client.call_tool("search", {"query": "x", "mode": "no_such_mode"}))["code"] == "UnknownNameError"

        scripted_model.enqueue("chat/completions", chat_stream_reply(["Alexander Fleming [1]."]))
        answered = data(await client.call_tool("answer", {"question": LAB_QUESTION}))
        assert answered["answer"] == "Alexander Fleming [1]." and answered["citations"][0]["document_id"] == "penicillin"
        assert "corn steep" not in last_user_message(scripted_model.requests[-1]).partition("Evidence:")[2]

        scripted_model.enqueue("chat/completions", chat_stream_reply(["Alexander "], fail_after=0))
        failed = error(await client.call_tool("answer", {"question": "Who discovered penicillin?"}))
        assert (failed["code"], failed["status"]) == ("ModelError", 502)
        assert data(await client.call_tool("list_documents", {}))["total"] == 4  # the session lives on


async def test_http_resources_are_the_callers_documents_and_a_recipe_without_secrets(assistant_served):
    running, headers, raw = assistant_served
    async with http_client(f"{running.url}/mcp", headers["outsider"]) as client:
        listed = {resource.uri for resource in (await client.list_resources()).resources}
        assert listed == {"heta://recipe", *(f"heta://documents/{d}" for d in ("penicillin", "fleming", "whales", "python"))}
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["heta://documents/{document_id}"]
        text = (await client.read_resource("heta://documents/penicillin")).contents[0].text
        assert text.startswith("# Penicillin\n\nAlexander Fleming")
        with pytest.raises(Exception) as hidden:
            await client.read_resource("heta://documents/lab-note")
        assert "UnknownDocument" in str(hidden.value) and "corn steep" not in str(hidden.value)
        recipe = (await client.read_resource("heta://recipe")).contents[0].text
        assert "openai/test-model" in recipe and "sk-test-ASSISTANT" not in recipe
    async with http_client(f"{running.url}/mcp", headers["chemist"]) as client:
        assert "corn steep" in (await client.read_resource("heta://documents/lab-note")).contents[0].text
        assert "heta://documents/lab-note" in {resource.uri for resource in (await client.list_resources()).resources}
        found = data(await client.call_tool("search", {"query": LAB_QUESTION, "top_k": 10}))
        assert "lab-note" in {r["document_id"] for r in found["results"]}


async def test_http_needs_a_token_the_server_knows(assistant_served):
    running, _, _ = assistant_served
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    for headers in ({}, {"Authorization": "Bearer not-a-token-of-this-server"}):
        with pytest.raises((ExceptionGroup, MCPError)):  # the SDK's client gives up: it never gets a session
            async with http_client(f"{running.url}/mcp", headers) as client:
                await client.list_tools()
        with running.client() as plain:  # and what it got was the API's 401
            answer = plain.post("/mcp", json=initialize, headers={"Accept": "application/json, text/event-stream", **headers})
        assert answer.status_code == 401 and answer.json()["error"]["code"] == "Unauthorized"


async def test_http_write_tools_only_with_mcp_writes_and_the_write_right(answer_kb, tmp_path, server_factory, scripted_model):
    copy = tmp_path / "kb"
    shutil.copytree(answer_kb, copy)
    raw = {"reader": "tok-reader-0123456789abcdef", "editor": "tok-editor-0123456789abcdef"}
    table = parse_tokens({"tokens": [
        {"sha256": token_hash(raw["reader"]), "principal": "reader", "kbs": ["*"], "rights": ["read"]},
        {"sha256": token_hash(raw["editor"]), "principal": "editor", "groups": ["group:lab"], "kbs": ["*"], "rights": ["write"]},
    ]})
    running = server_factory(copy, ServerConfig(tokens=table, mcp_writes=True))
    auth = {name: {"Authorization": f"Bearer {token}"} for name, token in raw.items()}
    async with http_client(f"{running.url}/mcp", auth["reader"]) as client:
        assert {"add_document", "remove_document"} <= {t.name for t in (await client.list_tools()).tools}
        refused = error(await client.call_tool("add_document", {"text": "A reader's note.", "document_id": "note"}))
        assert (refused["code"], refused["status"]) == ("Forbidden", 403)
    async with http_client(f"{running.url}/mcp", auth["editor"]) as client:
        added = data(await client.call_tool("add_document", {"text": "# Streptomycin\n\nSelman Waksman isolated streptomycin in 1943.",
                                                             "document_id": "streptomycin", "name": "streptomycin.md"}))
        assert added["job"]["status"] == "done"
        found = data(await client.call_tool("search", {"query": "Waksman streptomycin", "top_k": 3}))
        assert found["results"][0]["document_id"] == "streptomycin"
        assert error(await client.call_tool("add_document", {"text": "x", "document_id": "../x"}))["code"] == "InvalidDocumentIdError"
        removed = data(await client.call_tool("remove_document", {"document_id": "streptomycin"}))
        assert removed["job"]["status"] == "done" and removed["job"]["result"] == {"removed": ["streptomycin"]}
        assert error(await client.call_tool("remove_document", {"document_id": "streptomycin"}))["code"] == "UnknownDocument"


async def test_http_a_knowledge_base_the_token_may_not_use_is_404(answer_kb, tmp_path, server_factory):
    other = tmp_path / "lab-kb"
    shutil.copytree(answer_kb, other)
    token, lab_token = "tok-only-default-0123456789ab", "tok-only-lab-0123456789abcdef"
    table = parse_tokens({"tokens": [{"sha256": token_hash(token), "principal": "p", "kbs": ["default"], "rights": ["read"]},
                                     {"sha256": token_hash(lab_token), "principal": "q", "kbs": ["lab"], "rights": ["read"]}]})
    running = server_factory(answer_kb, ServerConfig(tokens=table), kbs={"lab": other})
    async with http_client(f"{running.url}/mcp/lab", {"Authorization": f"Bearer {lab_token}"}) as client:
        assert data(await client.call_tool("list_documents", {}))["total"] == 4
    async with http_client(f"{running.url}/mcp", {"Authorization": f"Bearer {token}"}) as client:
        assert "search" in {t.name for t in (await client.list_tools()).tools}
    with pytest.raises((ExceptionGroup, MCPError)):
        async with http_client(f"{running.url}/mcp/lab", {"Authorization": f"Bearer {token}"}) as client:
            await client.list_tools()
    with running.client() as plain:
        answer = plain.post("/mcp/lab", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"})
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "UnknownKnowledgeBase"


def heta_mcp(kb: Path, *args: str) -> StdioServerParameters:
    heta = Path(sys.executable).with_name("heta")
    return StdioServerParameters(command=str(heta), args=["--kb", str(kb), "mcp", "--no-warm", *args], env=dict(os.environ))


async def test_stdio_heta_mcp_serves_every_read_tool_as_its_principals(answer_kb, scripted_model):
    async with Client(heta_mcp(answer_kb)) as client:
        assert {t.name for t in (await client.list_tools()).tools} == READ_TOOLS | {"answer"}  # never writes by default
        found = data(await client.call_tool("search", {"query": LAB_QUESTION, "top_k": 10}))
        assert found["results"] and "lab-note" not in {r["document_id"] for r in found["results"]}
        assert data(await client.call_tool("list_modes", {}))["modes"]
        assert data(await client.call_tool("list_documents", {}))["total"] == 4
        assert data(await client.call_tool("read_document", {"document_id": "whales"}))["text"].startswith("# Whales")
        assert error(await client.call_tool("read_document", {"document_id": "lab-note"}))["code"] == "UnknownDocument"
        scripted_model.enqueue("chat/completions", chat_stream_reply(["Fleming [1]."]))
        assert data(await client.call_tool("answer", {"question": "Who discovered penicillin?"}))["answer"] == "Fleming [1]."
    async with Client(heta_mcp(answer_kb, "--as", "chemist", "--as", "group:lab")) as client:
        assert "corn steep" in (await client.read_resource("heta://documents/lab-note")).contents[0].text
        assert data(await client.call_tool("list_documents", {}))["total"] == 5


async def test_stdio_allow_writes_offers_the_write_tools(answer_kb, tmp_path):
    copy = tmp_path / "kb"
    shutil.copytree(answer_kb, copy)
    async with Client(heta_mcp(copy, "--allow-writes")) as client:
        assert {"add_document", "remove_document"} <= {t.name for t in (await client.list_tools()).tools}
        added = data(await client.call_tool("add_document", {"text": "# Insulin\n\nBanting and Best isolated insulin in 1921.",
                                                             "document_id": "insulin", "name": "insulin.md"}))
        assert added["job"]["status"] == "done"
        assert data(await client.call_tool("search", {"query": "Banting insulin"}))["results"][0]["document_id"] == "insulin"
        removed = data(await client.call_tool("remove_document", {"document_id": "insulin"}))
        assert removed["job"]["status"] == "done" and removed["job"]["result"] == {"removed": ["insulin"]}
        assert "insulin" not in {d["id"] for d in data(await client.call_tool("list_documents", {}))["documents"]}


async def test_http_resources_list_the_documents_a_page_at_a_time(assistant_served, monkeypatch):
    from heta_server import mcp_server

    monkeypatch.setattr(mcp_server, "RESOURCES_PAGE", 3)
    running, headers, _ = assistant_served
    async with http_client(f"{running.url}/mcp", headers["chemist"]) as client:
        first = await client.list_resources()
        second = await client.list_resources(cursor=first.next_cursor)
    assert first.next_cursor == "3" and second.next_cursor is None
    uris = [r.uri for r in first.resources + second.resources]
    assert uris[0] == "heta://recipe" and len(uris) == 6 and len(set(uris)) == 6  # 5 documents, none twice
    assert "heta://documents/lab-note" in uris
