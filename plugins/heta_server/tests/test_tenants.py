"""One server, several knowledge bases by name: /api/v1/kbs/{name}/... beside /api/v1/... (the --kb one), each token
confined to its own, under concurrent load."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.plugins.registry import PluginRegistry
from heta_server.config import ServerConfig, ServerConfigError, parse_kb_dir
from heta_server.serve import check_distinct_folders

ZOO = [
    SourceDocument(id="otters", text="Sea otters float on their backs in the cold ocean and hold hands while they sleep."),
    SourceDocument(id="giraffes", text="Giraffes eat acacia leaves; the ocean of grass around them is the savanna."),
]
DEFAULT_IDS = {"penicillin", "fleming", "whales", "python"}
ZOO_IDS = {"otters", "giraffes"}


@pytest.fixture
def zoo_kb(tmp_path):
    from heta_plugin_fulltext import IndexFullText

    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(), IndexFullText()])
    kb = KnowledgeBase.create(tmp_path / "zoo", recipe, registry=PluginRegistry.from_entry_points())
    kb.sync.build(ZOO)
    kb.close()
    return tmp_path / "zoo"


@pytest.fixture
def two_kbs(kb_copy, zoo_kb, server_factory, tokens):
    table, headers = tokens({
        "med": {"principal": "medic", "kbs": ["default"], "rights": ["read"]},
        "keeper": {"principal": "keeper", "kbs": ["zoo"], "rights": ["write"]},
        "both": {"principal": "auditor", "kbs": ["*"], "rights": ["read"]},
    })
    return server_factory(kb_copy, ServerConfig(tokens=table), kbs={"zoo": zoo_kb}), headers


def wait_for(client, url: str, headers: dict, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while (job := client.get(url, headers=headers).json()["job"])["status"] == "running":
        assert time.monotonic() < deadline, job
        time.sleep(0.1)
    return job


def test_each_token_sees_only_its_knowledge_bases_and_others_do_not_exist_for_it(two_kbs):
    running, headers = two_kbs
    with running.client() as client:
        listed = {name: [kb["name"] for kb in client.get("/api/v1/kbs", headers=h).json()["kbs"]] for name, h in headers.items()}
        assert listed == {"med": ["default"], "keeper": ["zoo"], "both": ["default", "zoo"]}
        ask = {"text": "ocean", "mode": "full_text_search"}
        for path in ("/api/v1/query", "/api/v1/kbs/default/query"):  # the --kb one under both of its paths
            found = client.post(path, json=ask, headers=headers["med"]).json()["results"]
            assert {r["metadata"]["document_id"] for r in found} == {"whales"}
        zoo = client.post("/api/v1/kbs/zoo/query", json=ask, headers=headers["keeper"]).json()["results"]
        assert {r["metadata"]["document_id"] for r in zoo} == {"otters", "giraffes"}
        # a knowledge base the token may not use answers exactly like one that does not exist
        refused = {
            "default via /api/v1": client.post("/api/v1/query", json=ask, headers=headers["keeper"]),
            "default by name": client.get("/api/v1/kbs/default/documents", headers=headers["keeper"]),
            "zoo": client.get("/api/v1/kbs/zoo/documents", headers=headers["med"]),
        }
        unknown = client.get("/api/v1/kbs/nowhere/documents", headers=headers["med"])
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "UnknownKnowledgeBase"
    for name, reply in refused.items():
        assert reply.status_code == 404, name
        asked = "zoo" if name == "zoo" else "default"
        assert reply.json()["error"] == {**unknown.json()["error"], "message": unknown.json()["error"]["message"].replace("nowhere", asked)}
        assert "zoo" not in reply.text or name == "zoo"  # never names a knowledge base the caller may not use


async def test_tenants_stay_apart_under_concurrent_load(two_kbs):
    running, headers = two_kbs
    med, keeper = headers["med"], headers["keeper"]
    async with httpx.AsyncClient(base_url=running.url, timeout=120) as client:
        async def ask(path: str, token: dict, body: dict | None = None) -> tuple[str, httpx.Response]:
            reply = await (client.post(path, json=body, headers=token) if body is not None else client.get(path, headers=token))
            return path, reply

        work = []
        for n in range(12):
            work += [
                ask("/api/v1/query", med, {"text": "ocean", "mode": ("full_text_search", "vector_search", "memory_search")[n % 3],
                                           "options": {"update_access": False} if n % 3 == 2 else {}}),
                ask("/api/v1/kbs/zoo/query", keeper, {"text": "ocean", "mode": ("full_text_search", "memory_search")[n % 2]}),
                ask("/api/v1/kbs/zoo/search", keeper, {"query": "ocean sleep"}),
                ask("/api/v1/documents", med),
                ask("/api/v1/kbs/zoo/documents", keeper),
            ]
        # a write to the zoo while the reads run: it lands in the zoo only
        write = ask("/api/v1/kbs/zoo/documents", keeper, {"documents": [{"id": "penguins", "text": "Penguins swim in the cold ocean."}]})
        replies = await asyncio.gather(write, *work)
        job = replies[0][1].json()["job"]
        while (await client.get(f"/api/v1/kbs/zoo/jobs/{job['id']}", headers=keeper)).json()["job"]["status"] == "running":
            await asyncio.sleep(0.1)
        zoo_after = (await client.get("/api/v1/kbs/zoo/documents", headers=keeper)).json()["documents"]
        default_after = (await client.get("/api/v1/documents", headers=med)).json()["documents"]
        elsewhere = await client.get(f"/api/v1/jobs/{job['id']}", headers=keeper)  # its job is the zoo's
    for path, reply in replies[1:]:
        assert reply.status_code == 200, (path, reply.text)
        data = reply.json()
        own = ZOO_IDS | {"penguins"} if "/kbs/zoo/" in path else DEFAULT_IDS
        if "documents" in data:
            seen = {d["id"] for d in data["documents"]}
        else:
            seen = {r["memory"]["document_id"] if "memory" in r else r["metadata"]["document_id"] for r in data["results"]}
        assert seen and seen <= own, (path, seen)
    assert {d["id"] for d in zoo_after} == ZOO_IDS | {"penguins"}
    assert {d["id"] for d in default_after} == DEFAULT_IDS
    assert elsewhere.status_code == 404


def test_a_tenant_is_written_through_its_own_path(two_kbs):
    running, headers = two_kbs
    keeper = headers["keeper"]
    with running.client() as client:
        added = client.post("/api/v1/kbs/zoo/documents/upload", files={"file": ("lions.txt", b"Lions rest in the shade.")}, headers=keeper)
        assert added.status_code == 202, added.text
        job = wait_for(client, f"/api/v1/kbs/zoo/jobs/{added.json()['job']['id']}", keeper)
        changed = client.put("/api/v1/kbs/zoo/documents/lions.txt/access", json={"access": ["keeper"]}, headers=keeper)
        removed = client.delete("/api/v1/kbs/zoo/documents/otters", headers=keeper)
        wait_for(client, f"/api/v1/kbs/zoo/jobs/{removed.json()['job']['id']}", keeper)
        ids = {d["id"] for d in client.get("/api/v1/kbs/zoo/documents", headers=keeper).json()["documents"]}
        seen_by_both = {d["id"] for d in client.get("/api/v1/kbs/zoo/documents", headers=headers["both"]).json()["documents"]}
        read_only = client.post("/api/v1/kbs/zoo/documents", json={"documents": [{"text": "x"}]}, headers=headers["both"])
    assert job["status"] == "done" and changed.status_code == 200
    assert ids == {"giraffes", "lions.txt"} and seen_by_both == {"giraffes"}  # lions are the keeper's alone now
    assert read_only.status_code == 403


def test_kb_dir_names_and_folders_are_checked(tmp_path):
    assert parse_kb_dir("hr=/srv/kb/hr") == ("hr", tmp_path.__class__("/srv/kb/hr"))
    for bad, message in [("hr", "NAME=PATH"), ("=x", "NAME=PATH"), ("hr=", "NAME=PATH")]:
        with pytest.raises(ServerConfigError, match=message):
            parse_kb_dir(bad)
    for names, message in [([("default", tmp_path)], "is the --kb knowledge base's"), ([("a/b", tmp_path)], "use letters"),
                           ([("hr", tmp_path), ("hr", tmp_path / "x")], "more than once")]:
        with pytest.raises(ServerConfigError, match=message):
            ServerConfig(kb_dirs=names).check()
    with pytest.raises(ServerConfigError, match="same knowledge-base folder"):
        check_distinct_folders([("default", tmp_path / "kb"), ("hr", tmp_path / "other" / ".." / "kb")])
