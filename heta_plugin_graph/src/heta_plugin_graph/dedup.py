"""Semantic entity dedup: cosine-similar candidates, confirmed by the language model in batches.

Exact dedup (same normalised name and type) happens when a draft is built.
Here, entities whose name embeddings have cosine similarity >= the threshold
become candidate groups (connected components); the language model splits each
group into clusters of records that name the same thing. Each cluster keeps
one record (the best supported) and the others map to it; relation endpoints
are rewritten through that mapping (``draft.merge_entities``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from heta_framework.common.models import Message

from heta_plugin_graph.draft import DraftEntity

PROMPT_VERSION = "heta-graph-dedup-v1"
MAX_GROUP_SIZE = 12

DEDUP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "groups": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "group": {"type": "string"},
                    "clusters": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
                },
                "required": ["group", "clusters"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["groups"],
    "additionalProperties": False,
}


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1, so a dot product *is* the cosine similarity."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def similar_groups(vectors: np.ndarray, threshold: float, block: int = 1024) -> list[list[int]]:
    """Connected components of the graph "cosine(i, j) >= threshold", singletons left out."""
    unit = unit_rows(vectors)
    parent = list(range(len(unit)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for start in range(0, len(unit), block):
        sims = unit[start : start + block] @ unit.T
        rows, cols = np.nonzero(sims >= threshold)
        for row, col in zip(rows.tolist(), cols.tolist()):
            i = start + row
            if col > i:
                a, b = find(i), find(col)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(unit)):
        groups.setdefault(find(i), []).append(i)
    return [members for members in groups.values() if len(members) > 1]


def split_large(group: Sequence[int], size: int = MAX_GROUP_SIZE) -> list[list[int]]:
    return [list(group[i : i + size]) for i in range(0, len(group), size) if len(group[i : i + size]) > 1]


def dedup_messages(groups: Sequence[tuple[str, Sequence[DraftEntity]]]) -> list[Message]:
    lines = []
    for group_id, members in groups:
        lines.append(f"Group {group_id}:")
        for number, entity in enumerate(members, start=1):
            description = entity.description[:200]
            lines.append(f"  {number}. {entity.name} [{entity.type}] {description}")
    return [
        Message(
            "system",
            "You merge duplicate records in a knowledge graph. Answer with JSON only, following the schema. "
            "你负责合并知识图谱中的重复实体，只输出 JSON。",
        ),
        Message(
            "user",
            "Each group lists records that might name the same real-world entity. For every group, answer "
            "`clusters`: lists of record numbers that name the same entity (records that are distinct go in "
            "clusters of their own). Use every group id exactly once.\n"
            "对每个组，给出指向同一实体的记录编号列表。\n\n" + "\n".join(lines),
        ),
    ]


def dedup_validator(groups: Sequence[tuple[str, Sequence[DraftEntity]]]):
    sizes = {group_id: len(members) for group_id, members in groups}

    def validate(value: Any) -> str | None:
        if not isinstance(value, Mapping) or not isinstance(value.get("groups"), list):
            return "the answer must be an object with a 'groups' list"
        seen = set()
        for index, answer in enumerate(value["groups"]):
            if not isinstance(answer, Mapping) or str(answer.get("group")) not in sizes:
                return f"groups[{index}].group must be one of the group ids {', '.join(sizes)}"
            group_id = str(answer["group"])
            seen.add(group_id)
            clusters = answer.get("clusters")
            if not isinstance(clusters, list) or not all(isinstance(c, list) for c in clusters):
                return f"group {group_id}: clusters must be a list of lists of record numbers"
            used: set[int] = set()
            for cluster in clusters:
                for number in cluster:
                    if not isinstance(number, int) or not 1 <= number <= sizes[group_id]:
                        return f"group {group_id}: record number {number!r} is not between 1 and {sizes[group_id]}"
                    if number in used:
                        return f"group {group_id}: record {number} appears in two clusters"
                    used.add(number)
        missing = [g for g in sizes if g not in seen]
        if missing:
            return f"groups {', '.join(missing)} are missing from the answer"
        return None

    return validate


def _evidence_rank(entity: DraftEntity) -> tuple:
    return (-len(entity.evidence), -len(entity.description), entity.id)


def mapping_from_answer(value: Mapping[str, Any], groups: Sequence[tuple[str, Sequence[DraftEntity]]]) -> dict[str, str]:
    """merged id -> kept id, from a validated answer."""
    members_of = {group_id: members for group_id, members in groups}
    mapping: dict[str, str] = {}
    for answer in value["groups"]:
        members = members_of[str(answer["group"])]
        for cluster in answer["clusters"]:
            entities = [members[n - 1] for n in dict.fromkeys(cluster)]
            if len(entities) < 2:
                continue
            kept = min(entities, key=_evidence_rank)
            for entity in entities:
                if entity.id != kept.id:
                    mapping[entity.id] = kept.id
    return mapping


def name_text(entity: DraftEntity) -> str:
    """What is embedded to find duplicate candidates: the name and type, not the (chunk-specific) description."""
    # NFKC: embedding models tokenise full-width "ＯｐｅｎＡＩ" into noise
    return unicodedata.normalize("NFKC", f"{entity.name} ({entity.type})")
