"""Matching new entities against the stored graph (``MergeGraphIntoStore``): prompt, schema, validation.

Each item is a new entity with the stored entities its vector is closest to;
the language model answers, per item, the number of the stored entity it is
the same as, or 0 for none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from heta_framework.common.models import Message

PROMPT_VERSION = "heta-graph-match-v1"

MATCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decisions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"item": {"type": "string"}, "match": {"type": "integer"}},
                "required": ["item", "match"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["decisions"],
    "additionalProperties": False,
}

#: (item id, new entity, stored candidates)
MatchItem = tuple[str, Any, Sequence[Any]]


def match_messages(items: Sequence[MatchItem]) -> list[Message]:
    lines = []
    for item_id, entity, candidates in items:
        lines.append(f"Item {item_id}: NEW {entity.name} [{entity.type}] {entity.description[:200]}")
        for number, stored in enumerate(candidates, start=1):
            lines.append(f"  {number}. {stored.name} [{stored.type}] {stored.description[:200]}")
    return [
        Message(
            "system",
            "You link new knowledge-graph records to existing ones. Answer with JSON only, following the schema. "
            "你负责把新实体与已有实体对齐，只输出 JSON。",
        ),
        Message(
            "user",
            "For each item, `match` is the number of the existing record that names the same real-world entity as "
            "the NEW record, or 0 if none does. Answer every item exactly once.\n"
            "对每一项，给出与新实体相同的已有记录编号；没有则为 0。\n\n" + "\n".join(lines),
        ),
    ]


def match_validator(items: Sequence[MatchItem]):
    sizes = {item_id: len(candidates) for item_id, _, candidates in items}

    def validate(value: Any) -> str | None:
        if not isinstance(value, Mapping) or not isinstance(value.get("decisions"), list):
            return "the answer must be an object with a 'decisions' list"
        seen = set()
        for index, decision in enumerate(value["decisions"]):
            if not isinstance(decision, Mapping) or str(decision.get("item")) not in sizes:
                return f"decisions[{index}].item must be one of {', '.join(sizes)}"
            item = str(decision["item"])
            match = decision.get("match")
            if not isinstance(match, int) or not 0 <= match <= sizes[item]:
                return f"item {item}: match must be 0 or a number between 1 and {sizes[item]}"
            seen.add(item)
        missing = [i for i in sizes if i not in seen]
        return f"items {', '.join(missing)} are missing from the answer" if missing else None

    return validate


def mapping_from_decisions(value: Mapping[str, Any], items: Sequence[MatchItem]) -> dict[str, str]:
    by_id = {item_id: (entity, candidates) for item_id, entity, candidates in items}
    mapping = {}
    for decision in value["decisions"]:
        entity, candidates = by_id[str(decision["item"])]
        if decision["match"]:
            mapping[entity.id] = candidates[decision["match"] - 1].id
    return mapping
