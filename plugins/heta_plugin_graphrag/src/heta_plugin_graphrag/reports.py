"""Community reports in GraphRAG's shape: title, summary, findings[{summary, explanation}], rating, rating_explanation.

``community_material`` gathers what a report is written from (the top entities
by degree inside the community, its relations, and evidence sentences from the
chunks that support them). ``extractive_report`` writes the report from that
material alone (no model: the modes work offline); ``report_messages`` asks the
language model for the JSON GraphRAG asks for, ``report_problem`` validates it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

import attrs
from heta_framework.common.models import Message

from heta_plugin_graphrag.communities import Community

PROMPT_VERSION = "graphrag-report-v1"
MAX_ENTITIES = 10
MAX_RELATIONS = 12
MAX_EVIDENCE = 8

REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "findings": {
            "type": "array",
            "items": {"type": "object", "properties": {"summary": {"type": "string"}, "explanation": {"type": "string"}},
                      "required": ["summary", "explanation"]},
        },
        "rating": {"type": "number"},
        "rating_explanation": {"type": "string"},
    },
    "required": ["title", "summary", "findings", "rating", "rating_explanation"],
}


@attrs.frozen
class Material:
    entities: tuple[tuple[str, str, str, int], ...]  # (name, type, description, degree), best first
    relations: tuple[str, ...]  # "A —name→ B: description"
    evidence: tuple[tuple[str, str], ...]  # (chunk_id, sentence)
    chunk_ids: tuple[str, ...]  # every chunk supporting a member, most supporting first


_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")


def community_material(graph: Any, community: Community) -> Material:
    members = list(community.entity_ids)
    entities = graph.get_entities(members)
    relations = graph.get_relations(list(community.relation_ids))
    degree = Counter(e for r in relations.values() for e in (r.source_id, r.target_id))
    top = sorted(entities.values(), key=lambda e: (-degree[e.id], e.name, e.id))[:MAX_ENTITIES]
    top_ids = {e.id for e in top}
    names = {i: e.name for i, e in entities.items()}
    ranked_relations = sorted(
        relations.values(), key=lambda r: (-(degree[r.source_id] + degree[r.target_id]), r.id)
    )[:MAX_RELATIONS]
    relation_lines = tuple(
        f"{names.get(r.source_id, r.source_id)} —{r.name or r.type}→ {names.get(r.target_id, r.target_id)}"
        + (f": {r.description}" if r.description else "")
        for r in ranked_relations
    )
    rows = graph.evidence("entity", members)
    support = Counter(row[0] for rows_ in rows.values() for row in rows_)
    chunk_ids = tuple(sorted(support, key=lambda c: (-support[c], c)))
    top_chunks = graph.get_chunks([c for c in chunk_ids if any(row[0] == c for e in top_ids for row in rows.get(e, []))][: MAX_EVIDENCE * 2])
    evidence: list[tuple[str, str]] = []
    top_names = [e.name for e in top]
    for chunk_id in chunk_ids:
        chunk = top_chunks.get(chunk_id)
        if chunk is None:
            continue
        for sentence in _SENTENCE.split(chunk.text):
            sentence = sentence.strip()
            if sentence and any(name.casefold() in sentence.casefold() for name in top_names):
                evidence.append((chunk_id, sentence))
                break  # one sentence per chunk: more chunks, more of the community covered
        if len(evidence) >= MAX_EVIDENCE:
            break
    return Material(
        tuple((e.name, e.type, e.description, degree[e.id]) for e in top), relation_lines, tuple(evidence), chunk_ids
    )


def extractive_report(community: Community, material: Material) -> dict[str, Any]:
    """A report from the graph itself: the names of the best-connected entities, their relations, evidence sentences."""
    names = [name for name, _, _, _ in material.entities]
    title = ", ".join(names[:3]) + (" and others" if len(names) > 3 else "")
    sentences = [sentence for _, sentence in material.evidence]
    summary = " ".join(sentences[:3]) or "; ".join(material.relations[:3])
    findings = [{"summary": line.split(": ", 1)[0], "explanation": line} for line in material.relations[:5]]
    findings += [{"summary": f"Evidence from {chunk_id}", "explanation": sentence} for chunk_id, sentence in material.evidence[:5]]
    size = len(community.entity_ids)
    # GraphRAG's rating is an importance score 0-10; offline, importance is how big and connected the community is
    rating = round(min(10.0, 1.0 + size / 2 + len(community.relation_ids) / 4), 1)
    return {
        "title": title or community.id,
        "summary": summary,
        "findings": findings,
        "rating": rating,
        "rating_explanation": f"{size} entities and {len(community.relation_ids)} relations (extractive: size and connectedness).",
    }


def report_subject(material: Material) -> str:
    """The text a report is about; with the community's content hash it keys the language-model cache."""
    lines = ["Entities:"]
    lines += [f"- {name} ({type_}, degree {degree}): {description}" for name, type_, description, degree in material.entities]
    lines += ["Relations:"] + [f"- {line}" for line in material.relations]
    lines += ["Evidence:"] + [f"- [{chunk_id}] {sentence}" for chunk_id, sentence in material.evidence]
    return "\n".join(lines)


def report_messages(material: Material) -> list[Message]:
    system = (
        "You write a report about a community of entities in a knowledge graph, as Microsoft GraphRAG does. "
        "Answer with JSON only: {\"title\": str, \"summary\": str, \"findings\": [{\"summary\": str, \"explanation\": str}], "
        "\"rating\": number 0-10 (how important the community is), \"rating_explanation\": str}. "
        "Use only the facts given; 1 to 5 findings."
    )
    return [Message("system", system), Message("user", report_subject(material))]


def report_problem(value: Any) -> str | None:
    """None when ``value`` is a GraphRAG report, else what is wrong (told to the model on the retry)."""
    if not isinstance(value, Mapping):
        return "the answer must be a JSON object"
    for key in ("title", "summary", "rating_explanation"):
        if not isinstance(value.get(key), str) or not value[key].strip():
            return f"{key!r} must be a non-empty string"
    rating = value.get("rating")
    if isinstance(rating, bool) or not isinstance(rating, (int, float)) or not 0 <= rating <= 10:
        return "'rating' must be a number from 0 to 10"
    findings = value.get("findings")
    if not isinstance(findings, list) or not findings:
        return "'findings' must be a non-empty list"
    for finding in findings:
        if not isinstance(finding, Mapping) or not all(isinstance(finding.get(k), str) for k in ("summary", "explanation")):
            return "each finding must be an object with string 'summary' and 'explanation'"
    return None


def report_text(report: Mapping[str, Any]) -> str:
    """What a report says, as one text (embedded, matched and counted for budgets)."""
    findings = " ".join(f"{f.get('summary', '')}. {f.get('explanation', '')}" for f in report.get("findings", []))
    return f"{report.get('title', '')}. {report.get('summary', '')} {findings}".strip()
