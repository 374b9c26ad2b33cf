"""An embedding batch that fails (the model server down for it, a worker's work raising) is a step issue:
the build goes on, the other batches are cached and indexed, and the next build retries the documents."""

from __future__ import annotations

import attrs
import heta_plugin_local
import pytest
from heta_framework.common.models import ModelProvider
from heta_framework.errors import ModelError
from heta_framework.kb import KnowledgeBase
from heta_framework.testing import inline_plugin, make_registry
from heta_plugin_local import create_client

import heta_plugin_vector
from heta_plugin_vector import EmbedChunks


class WhaleShy:
    """The real model, except that a batch holding the word "whale" fails while ``down`` is set."""

    down = True

    def __init__(self, config):
        self._inner = create_client(attrs.evolve(config, model_name=f"local/{config.model}"))
        self.model_name = self._inner.model_name

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed(self, texts):
        if type(self).down and any("whale" in t.lower() for t in texts):
            raise ModelError("the embedding server answered 503")
        return await self._inner.embed(texts)


@pytest.fixture
def whale_shy_registry(local_model):
    provider = ModelProvider(name="counting", kinds=frozenset({"embedding"}), create=WhaleShy)
    return make_registry(heta_plugin_vector, heta_plugin_local, inline_plugin("whale_shy", model_providers=[provider]))


def test_a_failed_batch_is_an_issue_and_the_next_build_retries_its_document(tmp_path, whale_shy_registry, vector_recipe, docs_dir):
    recipe = vector_recipe(model="counting/all-MiniLM-L6-v2")
    recipe = type(recipe)(models=recipe.models, steps=[*recipe.steps[:3], EmbedChunks(batch_size=1), *recipe.steps[4:]])
    WhaleShy.down = True
    with KnowledgeBase.create(tmp_path / "kb", recipe, registry=whale_shy_registry) as kb:
        report = kb.sync.build([docs_dir])
        embed = next(s for s in report.steps if s.name == "embed_chunks")
        [failure] = [i for i in embed.issues if i.code == "embedding_failed"]
        assert failure.severity == "error" and "503" in failure.message
        whales = next(d for d, r in kb.documents.items() if r.name == "whales.md")
        assert failure.details["documents"] == whales
        assert embed.stats["embedding_failed_batches"] == 1
        states = {r.name: r.state for r in kb.documents.values()}
        assert states == {"whales.md": "pending", "fox.txt": "built", "shanghai.txt": "built"}
        hits = kb.sync.query("clever animals in dens", mode="vector_search", top_k=3).results
        assert hits and hits[0].document_id != whales and whales not in {h.document_id for h in hits}

        WhaleShy.down = False
        again = kb.sync.build()
        assert again.document_count == 1  # only the document whose batch failed
        assert {r.state for r in kb.documents.values()} == {"built"}
        top = kb.sync.query("marine mammals breathing through a blowhole", mode="vector_search", top_k=1).results
        assert top[0].document_id == whales
