"""What an aggregate and a relation between aggregates say: extractive (offline) or asked of the language model.

An aggregate entity has LeanRAG's shape: ``name``, ``description`` and ``findings``
[``{summary, explanation}``]. Extractive, it is written from its most central members (names and
descriptions, most central first), so it says only what they say; the same function rebuilds an
aggregate at query time from the members a caller may read. With a language model, the model names
and describes the cluster from its members and the relations among them (LeanRAG's aggregation
prompt, JSON); ``AggregateCheck`` validates the answer, and a bad one is asked again with the error.

A relation between two aggregates rests on the relations between their members. Extractive, its
description is what those relations say; with a model (when there are enough of them) one sentence
says how the two groups relate (LeanRAG's inter-aggregation prompt).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from heta_framework.common.models import Message

PROMPT_VERSION = "leanrag-aggregate-v1"
#: members (most central first) and relations shown to the model per aggregate
PROMPT_MEMBERS = 20
PROMPT_RELATIONS = 12
#: members an extractive aggregate is written from
EXTRACTIVE_MEMBERS = 5
EXTRACTIVE_NAMES = 3
#: relation texts an extractive relation description joins
EXTRACTIVE_RELATIONS = 5
MAX_DESCRIPTION = 1200
MAX_NAME = 160

AGGREGATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "findings": {
            "type": "array",
            "items": {"type": "object", "properties": {"summary": {"type": "string"}, "explanation": {"type": "string"}},
                      "required": ["summary", "explanation"]},
        },
    },
    "required": ["name", "description", "findings"],
}
RELATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"description": {"type": "string"}},
    "required": ["description"],
}


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def extractive_aggregate(members: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """An aggregate from ``(headline, description)`` of its members, most central first (a member's headline is its
    name, or for an aggregate the name it is best known by: its model-given name or its most central member's headline)."""
    members = list(members)
    names = list(dict.fromkeys(name for name, _ in members if name))
    name = ", ".join(names[:EXTRACTIVE_NAMES]) + (" and others" if len(names) > EXTRACTIVE_NAMES else "")
    top = members[:EXTRACTIVE_MEMBERS]
    descriptions = list(dict.fromkeys(d.strip() for _, d in top if d and d.strip()))
    description = " ".join(descriptions) or "; ".join(names[: EXTRACTIVE_MEMBERS * 2])
    findings = [{"summary": n, "explanation": d or n} for n, d in top if n]
    return {"name": _clip(name, MAX_NAME), "description": _clip(description, MAX_DESCRIPTION), "findings": findings}


def extractive_relation(texts: Iterable[str]) -> str:
    """A relation between two aggregates: what the relations between their members say (each once)."""
    unique = list(dict.fromkeys(t.strip() for t in texts if t and t.strip()))
    return _clip(" ".join(unique[:EXTRACTIVE_RELATIONS]), MAX_DESCRIPTION)


def aggregate_text(name: str, description: str) -> str:
    """What an aggregate's vector embeds."""
    return f"{name}: {description}" if description else name


# --- the language model ----------------------------------------------------------------------


def aggregate_subject(members: Sequence[tuple[str, str]], relations: Sequence[str]) -> str:
    """What the model is shown of a cluster (with its content hash, the cache key's subject)."""
    lines = ["Entities:"] + [f"- {name}: {description}" if description else f"- {name}" for name, description in members[:PROMPT_MEMBERS]]
    lines += ["Relations:"] + [f"- {line}" for line in relations[:PROMPT_RELATIONS]]
    return "\n".join(lines)


def aggregate_messages(subject: str) -> list[Message]:
    system = (
        "You derive one aggregate entity from a set of related entities of a knowledge graph, as LeanRAG does. "
        "Answer with JSON only: {\"name\": str, \"description\": str, \"findings\": [{\"summary\": str, \"explanation\": str}]}. "
        "The name stands for the whole set and must not be the name of any single entity in it; the description "
        "says what the entities share; 1 to 5 findings. Use only the facts given."
    )
    return [Message("system", system), Message("user", subject)]


@attrs.frozen
class AggregateCheck:
    """None when the value is an aggregate entity for a cluster with ``member_names``, else what is wrong.

    A module-level class (not a closure): ``ask_json`` may send it to another process's workers.
    """

    member_names: frozenset[str] = attrs.field(converter=lambda names: frozenset(n.casefold() for n in names))

    def __call__(self, value: Any) -> str | None:
        if not isinstance(value, Mapping):
            return "the answer must be a JSON object"
        for key in ("name", "description"):
            if not isinstance(value.get(key), str) or not value[key].strip():
                return f"{key!r} must be a non-empty string"
        if len(value["name"]) > MAX_NAME:
            return f"'name' must be at most {MAX_NAME} characters"
        if value["name"].strip().casefold() in self.member_names:
            return "'name' must name the whole set, not one of its entities"
        findings = value.get("findings")
        if not isinstance(findings, list):
            return "'findings' must be a list"
        for finding in findings:
            if not isinstance(finding, Mapping) or not all(isinstance(finding.get(k), str) for k in ("summary", "explanation")):
                return "each finding must be an object with string 'summary' and 'explanation'"
        return None


def model_aggregate(value: Mapping[str, Any]) -> dict[str, Any]:
    findings = [{"summary": str(f["summary"]), "explanation": str(f["explanation"])} for f in value.get("findings", [])]
    return {"name": value["name"].strip(), "description": _clip(value["description"].strip(), MAX_DESCRIPTION * 2), "findings": findings}


def relation_subject(a: tuple[str, str], b: tuple[str, str], edges: Sequence[str]) -> str:
    return "\n".join([
        f"Aggregation A: {a[0]}", f"Description of A: {a[1]}", f"Aggregation B: {b[0]}", f"Description of B: {b[1]}",
        "Relations between their members:", *(f"- {line}" for line in edges[:PROMPT_RELATIONS]),
    ])


def relation_messages(subject: str) -> list[Message]:
    system = (
        "You state how two aggregations of a knowledge graph relate, from the relations between their members, as LeanRAG "
        "does. Answer with JSON only: {\"description\": str}: one sentence at group level, using only the facts given."
    )
    return [Message("system", system), Message("user", subject)]


def relation_problem(value: Any) -> str | None:
    if not isinstance(value, Mapping):
        return "the answer must be a JSON object"
    if not isinstance(value.get("description"), str) or not value["description"].strip():
        return "'description' must be a non-empty string"
    return None
