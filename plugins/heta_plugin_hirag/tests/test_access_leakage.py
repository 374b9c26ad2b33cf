"""Core's leakage suite over the five modes: offline (extractive summaries and reports), then with a language
model that echoes its prompt, so whatever reached the answer's context shows in the answer."""

from __future__ import annotations

import pytest
from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels
from heta_framework.testing.conformance import AccessLeakageSuite, build_leakage_kb
from heta_framework.testing.http import RecordedRequest, Reply, ScriptedServer, chat_completion_body
from heta_plugin_graph.testing import MODEL, offline_models
from heta_plugin_hirag.testing import MODES, hirag_recipe


@pytest.fixture(scope="module")
def leak_path(tmp_path_factory, hirag_registry):
    path = tmp_path_factory.mktemp("leak") / "kb"
    build_leakage_kb(path, hirag_recipe(offline_models()), registry=hirag_registry).close()
    return path


class TestHiRagModes(AccessLeakageSuite):
    #: the modes' sources are chunks ranked by the mode: a caller's top-k must be full of what they may read
    chunk_modes = MODES

    def modes(self, kb):
        return [mode for mode in super().modes(kb) if mode in MODES]  # the other modes have their own plugins' suites

    @pytest.fixture(scope="class")
    @classmethod
    def leak_kb(cls, leak_path, hirag_registry):
        with KnowledgeBase.load(leak_path, registry=hirag_registry) as kb:
            yield kb

    def test_every_mode_is_checked_and_derived_knowledge_is_there(self, leak_kb):
        assert self.modes(leak_kb) == sorted(MODES)
        reader = self.ask(leak_kb, "Who manages the Qorvath plant for Aurora Labs?", "hi_rag_query", ("group:finance",))
        assert reader.metadata["reports"] and reader.metadata["entities"]
        public = self.ask(leak_kb, "penicillin production", "hi_rag_nobridge_query", None)
        assert public.metadata["reports"] and public.metadata["relations"]  # the public caller gets the public part


def echo(request: RecordedRequest) -> Reply:
    """Everything the model was shown, as its answer (the modes ask for plain text)."""
    return Reply(body=chat_completion_body(" ".join(str(m.get("content", "")) for m in request.json["messages"])))


class TestHiRagAnswersWithALanguageModel(AccessLeakageSuite):
    chunk_modes = ()

    def modes(self, kb):
        return [mode for mode in super().modes(kb) if mode in MODES]

    @pytest.fixture(scope="class")
    @classmethod
    def leak_kb(cls, leak_path, hirag_registry):
        with ScriptedServer() as server:
            server.respond("chat/completions", echo)
            models = KnowledgeModels(
                embedding=EmbeddingModel(model_name=MODEL),
                language=LanguageModel(model_name="openai/echo", base_url=server.base_url, api_key="sk-test-echo",
                                       options={"max_attempts": 1, "timeout": 10}),
            )
            with KnowledgeBase.load(leak_path, registry=hirag_registry, models=models) as kb:
                yield kb

    def test_the_answer_is_the_echo(self, leak_kb):
        response = self.ask(leak_kb, "penicillin production", "hi_rag_global_query", None)
        assert "-----Backgrounds-----" in response.metadata["answer"]
