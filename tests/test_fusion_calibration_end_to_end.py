"""Fusion weights calibrated on a real knowledge base: once per build, kept in its folder, explicit weights win.

examples/documents (48 articles and a Word file), local MiniLM, FAISS, Whoosh and an nlp graph.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from heta_framework.builtin.engines.calibration import BIAS_MARGIN, CACHE_FILE, PSEUDO_QUERIES, TOLERANCE
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.common.models import EmbeddingModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
from heta_framework.plugins.registry import PluginRegistry

DOCUMENTS = Path(__file__).resolve().parent.parent / "examples" / "documents"
QUESTION = "Who discovered penicillin?"

pytestmark = pytest.mark.slow


def recipe() -> Recipe:
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    return Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")),
        steps=[
            ParseDocuments(), SplitDocuments(), EmbedChunks(), IndexVectors(), IndexFullText(),
            HetaGraphProcedure(extractor="nlp", embed_descriptions=False),
        ],
    )


def counting_embeddings(kb, monkeypatch) -> list[list[str]]:
    client = kb.get_component("models.embedding")
    calls: list[list[str]] = []
    real = client.embed

    async def counted(texts):
        calls.append(list(texts))
        return await real(texts)

    monkeypatch.setattr(client, "embed", counted)
    return calls


async def test_calibrated_once_per_build_and_kept_in_the_folder(tmp_path, monkeypatch):
    registry = PluginRegistry.from_entry_points(strict=True)
    kb = KnowledgeBase.create(tmp_path / "kb", recipe(), registry=registry)
    await kb.build([DOCUMENTS])

    calls = counting_embeddings(kb, monkeypatch)
    response = await kb.query(QUESTION, mode="heta_rerank_search", top_k=5, trace=True)
    fusion = response.metadata["fusion"]
    assert fusion["weights_origin"] == "calibrated"
    calibration = fusion["calibration"]
    assert calibration["pseudo_queries"] == PSEUDO_QUERIES
    assert set(calibration["leg_mrr"]) == {"hybrid_search", "full_text_search"}
    assert fusion["weights"] == calibration["weights"] and max(fusion["weights"].values()) == 1.0
    # the grid holds equal weights. Equal weights favour the keyword leg the pseudo-queries flatter, so they are
    # taken only when they win by more than BIAS_MARGIN, and a tie within TOLERANCE goes to the lighter weight:
    # the chosen pair is never worse than plain RRF on the pseudo-queries by more than the two together
    assert calibration["fused_mrr"] >= calibration["equal_weights_mrr"] - BIAS_MARGIN - TOLERANCE
    # English text and an English model: the keyword list may only tilt the weights, never drop the dense one
    assert calibration["weight_range"].startswith("bounded")
    assert min(fusion["weights"].values()) >= 0.5
    # a document that answers it comes first: Fleming's article or penicillin's (their fused scores are
    # within 1% of each other, so which one leads may change between builds)
    assert response.results[0].metadata["name"] in {"alexander-fleming.md", "penicillin.md"}
    # the user's query embedded once; each pseudo-query once per calibration (hybrid_search's own, then
    # heta_rerank_search's, whose hybrid leg embeds it again; the vector and graph legs share one embedding)
    assert len(calls) == 1 + 2 * PSEUDO_QUERIES
    # the caller's trace shows its own query only, not the calibration's
    assert {c.mode for c in response.trace.children} == {"hybrid_search", "full_text_search"}

    stored = json.loads((tmp_path / "kb" / CACHE_FILE).read_text())
    assert set(stored["modes"]) == {"hybrid_search", "heta_rerank_search"}
    assert stored["modes"]["heta_rerank_search"]["weights"] == fusion["weights"]

    # another process (here: another KnowledgeBase object) reads the stored calibration instead of redoing it
    reopened = KnowledgeBase.load(tmp_path / "kb", registry=registry)
    calls = counting_embeddings(reopened, monkeypatch)
    again = await reopened.query(QUESTION, mode="heta_rerank_search", top_k=5)
    assert again.metadata["fusion"]["weights"] == fusion["weights"]
    assert len(calls) == 1

    explicit = await reopened.query(QUESTION, mode="hybrid_search", options={"hybrid_weights": {"vector_search": 2.0}})
    assert explicit.metadata["fusion"]["weights_origin"] == "explicit"
    assert explicit.metadata["fusion"]["weights"] == {"vector_search": 2.0, "heta_graph_search": 1.0}
    assert "calibration" not in explicit.metadata["fusion"]


CLI_RECIPE = """
[models.embedding]
model_name = "local/all-MiniLM-L6-v2"

[[steps]]
step = "parse_documents"
[[steps]]
step = "split_documents"
[[steps]]
step = "persist_chunks"
[[steps]]
step = "embed_chunks"
[[steps]]
step = "index_vectors"
[[steps]]
step = "index_full_text"
[[steps]]
step = "heta_graph"
extractor = "nlp"
embed_descriptions = false
"""


def test_heta_build_calibrates_the_fused_modes_and_says_when_a_leg_is_off(tmp_path, monkeypatch):
    import attrs
    from click.testing import CliRunner
    from heta_framework.builtin.engines import calibration
    from heta_framework.cli.main import cli

    real, hybrid_legs = calibration.choose_weights, calibration.CALIBRATED_MODES["hybrid_search"]
    answered: dict[tuple[str, ...], list] = {}

    def vector_off_in_hybrid(legs, answers, queries, **kwargs):
        answered[tuple(legs)] = answers
        chosen = real(legs, answers, queries, **kwargs)  # the real calibration ran; hybrid_search's is overruled
        return attrs.evolve(chosen, weights={"vector_search": 0.0, "heta_graph_search": 1.0}) if tuple(legs) == hybrid_legs else chosen

    monkeypatch.setattr(calibration, "choose_weights", vector_off_in_hybrid)
    documents = tmp_path / "documents"
    documents.mkdir()
    for path in sorted(DOCUMENTS.rglob("*.md"))[:12]:
        (documents / path.name).write_bytes(path.read_bytes())
    (tmp_path / "recipe.toml").write_text(CLI_RECIPE)
    kb = str(tmp_path / "kb")

    def heta(*args: str) -> str:
        result = CliRunner().invoke(cli, ["--kb", kb, *args])
        assert result.exit_code == 0, result.output
        return result.output

    heta("init", "--recipe", str(tmp_path / "recipe.toml"))
    report = heta("build", str(documents))
    assert "hybrid_search: calibration switched vector_search off: it ranks as heta_graph_search alone" in report
    assert "fusion_search:" not in report and "heta_rerank_search:" not in report  # both legs kept: nothing to say
    stored = json.loads((tmp_path / "kb" / CACHE_FILE).read_text())["modes"]
    assert set(stored) == {"hybrid_search", "fusion_search", "heta_rerank_search"}
    # a leg two modes share answered each pseudo-query once for both: vector_search in hybrid and fusion,
    # full_text_search in fusion and rerank (the same result lists, not equal copies)
    hybrid, fusion, rerank = (answered[calibration.CALIBRATED_MODES[m]] for m in ("hybrid_search", "fusion_search", "heta_rerank_search"))
    assert len(hybrid) == len(fusion) == len(rerank) > 0
    assert all(h["vector_search"] is f["vector_search"] for h, f in zip(hybrid, fusion))
    assert all(f["full_text_search"] is r["full_text_search"] for f, r in zip(fusion, rerank))

    # the same build again changes nothing: the kept calibration is reported, not made again
    monkeypatch.setattr(calibration, "choose_weights", lambda *args, **kwargs: pytest.fail("calibrated twice"))
    fusion = json.loads(heta("build", str(documents), "--json"))["fusion"]
    assert fusion["hybrid_search"]["weights"]["weights"] == {"vector_search": 0.0, "heta_graph_search": 1.0}
    assert fusion["hybrid_search"]["note"].startswith("calibration switched vector_search off")
    assert {mode: entry["weights"] for mode, entry in fusion.items()} == stored
    assert "note" not in fusion["fusion_search"] and min(fusion["fusion_search"]["weights"]["weights"].values()) > 0
    # and the first query uses it without calibrating
    with KnowledgeBase.load(kb) as loaded:
        response = loaded.sync.query(QUESTION, mode="heta_rerank_search", top_k=5)
    assert response.metadata["fusion"]["weights"] == stored["heta_rerank_search"]["weights"]
