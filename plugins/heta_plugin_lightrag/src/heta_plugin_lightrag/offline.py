"""Keywords without a language model: LightRAG's two levels from the query and the graph's own labels.

- low level: the query's noun phrases and names, found by the graph plugin's
  offline extractor (stop-word-bounded phrases and capitalised names for
  alphabetic scripts, jieba noun tags for Chinese), so they are cut the way the
  graph's entities were. A query with no phrase (``"what is it?"``) falls back
  to its content words (core's language-aware analysis); CJK text the
  extractor misses (kana, hangul) to overlapping character pairs.
- high level: the entity and relation types of the graph (``person``,
  ``founded_by``) that share a word stem (or a CJK character pair) with the
  query. LightRAG matches high-level keywords against relations; a graph's
  type labels are the themes it has words for. When none matches, the query
  itself is the one high-level keyword, so global retrieval still searches the
  relations by what was asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from heta_framework.text.analysis import analyze, cjk_pairs, stop_words, words
from heta_framework.text.languages import CJK_RANGES, STEMMED_LANGUAGES, detect_language, has_cjk
from heta_plugin_graph.extraction.nlp import extract_entities

from heta_plugin_lightrag.keywords import Keywords, clean

_CJK_RUN = re.compile(f"[{CJK_RANGES}]+")
_HAN_ONLY = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
#: labels every nlp-built graph has: they say nothing about a question
GENERIC_LABELS = frozenset({"co_occurs_with", "concept", "named_entity", "related_to"})


def low_level_keywords(query: str) -> tuple[str, ...]:
    phrases = [entity["name"] for entity in extract_entities(query)]
    if has_cjk(query):
        for run in _CJK_RUN.findall(query):
            found = [phrase for phrase in phrases if phrase in run]
            if found and _HAN_ONLY.fullmatch(run):
                continue  # jieba segmented this Chinese run: its nouns are the keywords
            # kana or hangul (jieba knows neither), or a run jieba found nothing in: pairs of what no phrase covers
            for piece in re.split("|".join(map(re.escape, found)), run) if found else [run]:
                if len(piece) > 1:
                    phrases.extend(cjk_pairs(piece))
    if not phrases:
        language = detect_language(query)
        dropped = stop_words(language) if language in STEMMED_LANGUAGES else frozenset()
        phrases = [word for word in words(query) if word not in dropped and len(word) > 1 and not word.isdigit()]
    return clean(phrases)


def _terms(text: str, language: str) -> set[str]:
    return set(analyze(text.replace("_", " "), language if language in STEMMED_LANGUAGES else None))


def matching_labels(query: str, labels: Iterable[str]) -> list[str]:
    """The labels sharing a stem (or CJK pair) with the query, most specific (longest) first."""
    language = detect_language(query)
    query_terms = _terms(query, language)
    matched = [label for label in labels if label not in GENERIC_LABELS and _terms(label, language) & query_terms]
    return sorted(matched, key=lambda label: (-len(label), label))


def offline_keywords(query: str, fact_types: Mapping[str, Mapping[str, int]]) -> Keywords:
    labels = {*fact_types.get("relation", {}), *fact_types.get("entity", {})}
    high = [label.replace("_", " ") for label in matching_labels(query, labels)]
    if not high and query.strip():
        high = [query]
    return Keywords(clean(high), low_level_keywords(query), "offline")
