"""Language-model extraction: one JSON-schema-constrained call per chunk and kind (entities, then relations).

The prompts are bilingual on purpose: the instructions are in English and in
Chinese, and the model is told to write names and descriptions in the language
of the text, so Chinese chunks yield Chinese entities ("上海市"), not
translations. Relation endpoints must be entities of the same chunk; the
validator enforces it and its message goes back to the model on a retry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from heta_framework.common.models import Message

from heta_plugin_graph.normalize import normalize_name

PROMPT_VERSION = "heta-graph-extract-v1"

_ATTRIBUTES_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
        "required": ["key", "value"],
        "additionalProperties": False,
    },
}

ENTITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string"},
                    "description": {"type": "string"},
                    "attributes": _ATTRIBUTES_SCHEMA,
                },
                "required": ["name", "type", "description", "attributes"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["entities"],
    "additionalProperties": False,
}

RELATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "relations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                    "type": {"type": "string"},
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                },
                "required": ["source", "target", "type", "name", "description"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["relations"],
    "additionalProperties": False,
}

_SYSTEM = (
    "You build a knowledge graph from text. Answer with JSON only, following the given schema. "
    "Write names and descriptions in the language of the text: Chinese text gets Chinese names and descriptions. "
    "你负责从文本中构建知识图谱。只输出符合 schema 的 JSON；名称和描述使用原文的语言。"
)


def entity_messages(text: str) -> list[Message]:
    return [
        Message("system", _SYSTEM),
        Message(
            "user",
            "Extract the important entities (people, organisations, places, concepts, events, objects) of the text.\n"
            "For each: name (as written in the text), type (one lower-case word such as person, organization, location, "
            "concept, event), description (one sentence, from the text only), attributes (key/value facts, may be empty).\n"
            "抽取文本中的重要实体：名称（与原文一致）、类型、一句话描述、属性。\n\n"
            f"Text / 文本:\n<<<\n{text}\n>>>",
        ),
    ]


def relation_messages(text: str, entity_names: Sequence[str]) -> list[Message]:
    listing = "\n".join(f"- {name}" for name in entity_names)
    return [
        Message("system", _SYSTEM),
        Message(
            "user",
            "List the relations the text states between these entities. source and target must be names from the list, "
            "exactly as written there. type: a short snake_case label (e.g. located_in, founded_by, part_of); name: a "
            "short phrase; description: one sentence from the text.\n"
            "列出文本中这些实体之间的关系；source 和 target 必须是下面列表中的名称。\n\n"
            f"Entities / 实体:\n{listing}\n\nText / 文本:\n<<<\n{text}\n>>>",
        ),
    ]


def _non_empty_string(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def attributes_dict(value: Any) -> dict[str, str]:
    """Attributes arrive as ``[{"key", "value"}]`` (strict-schema friendly) or as an object."""
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, list):
        return {str(item["key"]): str(item["value"]) for item in value if isinstance(item, Mapping) and "key" in item}
    return {}


def validate_entities(value: Any) -> str | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("entities"), list):
        return "the answer must be an object with an 'entities' list"
    for index, entity in enumerate(value["entities"]):
        where = f"entities[{index}]"
        if not isinstance(entity, Mapping):
            return f"{where} must be an object"
        for field in ("name", "type"):
            if not _non_empty_string(entity.get(field)) or not normalize_name(entity[field]):
                return f"{where}.{field} must be a non-empty string"
        if not isinstance(entity.get("description"), str):
            return f"{where}.description must be a string"
        if "attributes" in entity and not isinstance(entity["attributes"], (list, Mapping)):
            return f"{where}.attributes must be a list of key/value objects"
    return None


@attrs.frozen
class RelationValidator:
    """Checks a relations answer against the chunk's entity names (an object, so it pickles to a worker)."""

    known: frozenset[str]

    def __call__(self, value: Any) -> str | None:
        if not isinstance(value, Mapping) or not isinstance(value.get("relations"), list):
            return "the answer must be an object with a 'relations' list"
        for index, relation in enumerate(value["relations"]):
            where = f"relations[{index}]"
            if not isinstance(relation, Mapping):
                return f"{where} must be an object"
            for field in ("source", "target", "type"):
                if not _non_empty_string(relation.get(field)):
                    return f"{where}.{field} must be a non-empty string"
            for field in ("source", "target"):
                if normalize_name(relation[field]) not in self.known:
                    return f"{where}.{field} {relation[field]!r} is not one of the listed entities"
            if not isinstance(relation.get("description", ""), str):
                return f"{where}.description must be a string"
        return None


def relation_validator(entity_names: Iterable[str]) -> RelationValidator:
    return RelationValidator(frozenset(normalize_name(n) for n in entity_names))


def entities_from_answer(value: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": " ".join(e["name"].split()),
            "type": e["type"].strip(),
            "description": (e.get("description") or "").strip(),
            "attributes": attributes_dict(e.get("attributes")),
        }
        for e in value["entities"]
    ]


def relations_from_answer(value: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "source": r["source"],
            "target": r["target"],
            "type": r["type"].strip(),
            "name": (r.get("name") or r["type"]).strip(),
            "description": (r.get("description") or "").strip(),
        }
        for r in value["relations"]
        if normalize_name(r["source"]) != normalize_name(r["target"])
    ]
