"""A small real knowledge base (MiniLM vectors, Whoosh full text, an nlp-extracted graph) and a real uvicorn over it."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
import httpx
import pytest
import uvicorn
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.common.models import EmbeddingModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
from heta_framework.plugins.registry import PluginRegistry
from heta_server.app import create_app
from heta_server.config import ServerConfig

DOCUMENTS = [
    SourceDocument(
        id="penicillin", name="penicillin.md",
        text="# Penicillin\n\nAlexander Fleming discovered penicillin in London in 1928. Penicillin is an antibiotic "
             "made by the mould Penicillium. Howard Florey and Ernst Chain turned penicillin into a medicine at Oxford.",
        metadata={"importance": 9, "tags": ["medicine", "history"]},
    ),
    SourceDocument(
        id="fleming", name="fleming.md",
        text="# Alexander Fleming\n\nAlexander Fleming was a Scottish physician who worked at St Mary's Hospital in London. "
             "Fleming shared the Nobel Prize with Howard Florey and Ernst Chain.",
        metadata={"importance": 6, "tags": ["history"]},
    ),
    SourceDocument(
        id="whales", name="whales.md",
        text="# Whales\n\nWhales are marine mammals that breathe air through a blowhole. The blue whale lives in every ocean "
             "and eats krill.",
        metadata={"importance": 2, "tags": ["animals"]},
    ),
    SourceDocument(
        id="python", name="python.md",
        text="# Python\n\nPython is a programming language created by Guido van Rossum in the Netherlands. Python runs "
             "scripts and notebooks.",
        metadata={"tags": ["computing"]},
    ),
]


def every_leg_recipe() -> Recipe:
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    return Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")),
        steps=[ParseDocuments(), SplitDocuments(), EmbedChunks(), IndexVectors(), IndexFullText(), HetaGraphProcedure(extractor="nlp")],
    )


def full_text_recipe() -> Recipe:
    from heta_plugin_fulltext import IndexFullText

    return Recipe(steps=[ParseDocuments(), SplitDocuments(), IndexFullText()])


@pytest.fixture(scope="session")
def every_leg_recipe_factory():
    return every_leg_recipe


@pytest.fixture(scope="session")
def built_kb(tmp_path_factory) -> Path:
    """Built once per session; tests that write copy it (``kb_copy``)."""
    path = tmp_path_factory.mktemp("server") / "kb"
    kb = KnowledgeBase.create(path, every_leg_recipe(), registry=PluginRegistry.from_entry_points(strict=True))
    kb.sync.build(DOCUMENTS)
    kb.close()
    return path


@attrs.define
class RunningServer:
    url: str
    kb: KnowledgeBase
    server: uvicorn.Server
    thread: threading.Thread

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, **kwargs)

    others: dict[str, KnowledgeBase] = attrs.field(factory=dict)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.kb.close()
        for other in self.others.values():
            other.close()


def start_server(kb_path: Path, config: ServerConfig | None = None, *, warm: bool = False,
                 kbs: dict[str, Path] | None = None) -> RunningServer:
    """uvicorn on 127.0.0.1 (an ephemeral port) in a thread, serving ``kb_path`` (and ``kbs`` by name); returns once it
    accepts requests."""
    kb = KnowledgeBase.load(kb_path)
    others = {name: KnowledgeBase.load(path) for name, path in (kbs or {}).items()}
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(kb, config, warm=warm, kbs=others), log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    return RunningServer(f"http://127.0.0.1:{port}", kb, server, thread, others)


@pytest.fixture(scope="session")
def served(built_kb) -> Iterator[RunningServer]:
    """The read-only server every query test shares (no test writes through it)."""
    running = start_server(built_kb, warm=True)
    yield running
    running.stop()


@pytest.fixture
def server_factory() -> Iterator:
    """``start(kb_path, config, kbs={name: path})`` -> a ``RunningServer`` stopped after the test."""
    started: list[RunningServer] = []

    def start(kb_path: Path, config: ServerConfig | None = None, *, kbs: dict[str, Path] | None = None) -> RunningServer:
        running = start_server(kb_path, config, kbs=kbs)
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()


@pytest.fixture
def tokens(tmp_path):
    """``tokens({name: entry})`` -> (the ``TokenTable`` read from a real tokens file, {name: request headers}).

    Each entry is a tokens-file table without ``sha256``: a fresh random token is made for it, and only its
    hash is written to the file."""
    import secrets

    from heta_server.tokens import read_tokens, token_hash

    def make(entries: dict[str, dict]) -> tuple:
        raw = {name: f"tok-{name}-{secrets.token_hex(16)}" for name in entries}
        lines = []
        for name, entry in entries.items():
            lines.append("[[tokens]]")
            lines.append(f'sha256 = "{token_hash(raw[name])}"')
            lines += [f"{key} = {json.dumps(value)}" for key, value in entry.items()]
        path = tmp_path / "tokens.toml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return read_tokens(path), {name: {"Authorization": f"Bearer {token}"} for name, token in raw.items()}

    return make


@pytest.fixture
def kb_copy(built_kb, tmp_path) -> Path:
    import shutil

    target = tmp_path / "kb"
    shutil.copytree(built_kb, target)
    return target


# --- a knowledge base with a language model: the scripted OpenAI-compatible server answers ----------------

#: readable by group:lab only; its words must never reach an outsider's results, answer or model prompt
LAB_NOTE = SourceDocument(
    id="lab-note", name="lab-note.md", access=["group:lab"],
    text="# Lab note\n\nThe secret formula for penicillin broth is corn steep liquor and lactose, kept at the Peoria lab.",
)
#: callers of the assistant tests: a reader outside the lab, a reader in it, a writer in it
ASSISTANT_PEOPLE = {
    "outsider": {"principal": "outsider", "kbs": ["*"], "rights": ["read"]},
    "chemist": {"principal": "chemist", "groups": ["group:lab"], "kbs": ["*"], "rights": ["read"]},
    "editor": {"principal": "editor", "groups": ["group:lab"], "kbs": ["*"], "rights": ["write"]},
}


@pytest.fixture(scope="session")
def model_server() -> Iterator:
    """The scripted OpenAI-compatible server every assistant test's language model talks to (reset per test)."""
    from heta_framework.testing.http import ScriptedServer

    with ScriptedServer() as server:
        yield server


@pytest.fixture
def scripted_model(model_server):
    model_server.reset()
    yield model_server


@pytest.fixture(scope="session")
def answer_kb(tmp_path_factory, model_server) -> Path:
    """Full text only (fast to build), with ``models.language`` at the scripted server, and the lab note restricted."""
    from heta_framework.common.models import LanguageModel
    from heta_plugin_fulltext import IndexFullText

    path = tmp_path_factory.mktemp("assistant") / "kb"
    language = LanguageModel(model_name="openai/test-model", base_url=model_server.base_url, api_key="sk-test-ASSISTANT-91c2e7",
                             options={"retry_initial_delay": 0.01, "retry_max_delay": 0.05, "timeout": 10, "max_attempts": 2})
    recipe = Recipe(models=KnowledgeModels(language=language), steps=[ParseDocuments(), SplitDocuments(), IndexFullText()])
    kb = KnowledgeBase.create(path, recipe, registry=PluginRegistry.from_entry_points(strict=True))
    kb.sync.build([*DOCUMENTS, LAB_NOTE])
    kb.close()
    return path


def assistant_tokens() -> tuple:
    """(the ``TokenTable``, {name: request headers}, {name: raw token}) for ``ASSISTANT_PEOPLE``."""
    import secrets

    from heta_server.tokens import parse_tokens, token_hash

    raw = {name: f"tok-{name}-{secrets.token_hex(16)}" for name in ASSISTANT_PEOPLE}
    table = parse_tokens({"tokens": [{"sha256": token_hash(raw[name]), **entry} for name, entry in ASSISTANT_PEOPLE.items()]})
    return table, {name: {"Authorization": f"Bearer {token}"} for name, token in raw.items()}, raw


@pytest.fixture(scope="session")
def assistant_served(answer_kb) -> Iterator:
    """``(RunningServer, headers, raw tokens)``: the answer knowledge base behind the assistant tokens (read-only)."""
    table, headers, raw = assistant_tokens()
    running = start_server(answer_kb, ServerConfig(tokens=table))
    yield running, headers, raw
    running.stop()


@pytest.fixture(scope="session")
def server_starter():
    """``start_server`` itself, for a test module that keeps one server for all its tests (it calls ``stop()``)."""
    return start_server


@pytest.fixture(scope="session")
def server_documents() -> dict:
    """The documents of ``built_kb`` and the restricted lab note, for modules that build their own knowledge base."""
    return {"documents": DOCUMENTS, "lab_note": LAB_NOTE}
