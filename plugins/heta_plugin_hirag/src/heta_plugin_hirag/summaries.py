"""A cluster's summary entity: by the language model (HiRAG's ``summary_clusters`` question, as JSON), or extractive.

The model is shown the cluster's members, most central first, within ``max_tokens``,
and answers with one higher-level entity: a name (not one of the members'), a type and
a description. Offline, the summary is extractive: named after the most central
members, described by their own descriptions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from heta_framework.builtin.text_split import count_tokens
from heta_framework.common.models import Message

from heta_plugin_hirag.hierarchy import Node

PROMPT_VERSION = "hirag-summary-v1"
#: members named in an extractive summary's name, and described in its description
EXTRACTIVE_NAMES = 3
EXTRACTIVE_DESCRIBED = 5
DESCRIPTION_WORDS = 40
SUMMARY_TYPE = "summary"

SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "type": {"type": "string"}, "description": {"type": "string"}},
    "required": ["name", "type", "description"],
}

SYSTEM = (
    "You are given entities of a knowledge graph that belong together. As HiRAG does, name one higher-level "
    "attribute entity they share (an organisation, person, location, event or concept) that is not one of them. "
    "Answer with JSON only: {\"name\": str, \"type\": str, \"description\": str}. The description says what the "
    "entity is and how the given entities relate to it, using only the facts given."
)


def subject(members: Sequence[Node], max_tokens: int) -> str:
    """The members the model is shown (most central first), within ``max_tokens``; with the content hash it keys the cache."""
    lines, used = [], 0
    for node in members:
        line = f"- {node.name} ({node.type}): {node.description}" if node.description else f"- {node.name} ({node.type})"
        tokens = count_tokens(line)
        if lines and used + tokens > max_tokens:
            break
        lines.append(line)
        used += tokens
    return "Entities:\n" + "\n".join(lines)


def messages(subject_text: str) -> list[Message]:
    return [Message("system", SYSTEM), Message("user", subject_text)]


@attrs.frozen
class SummaryCheck:
    """None when an answer is a summary entity for these members, else what is wrong (told to the model on the retry).

    A picklable object, not a closure: ``ask_json`` may send it to another process.
    """

    member_names: frozenset[str]

    def __call__(self, value: Any) -> str | None:
        if not isinstance(value, Mapping):
            return "the answer must be a JSON object"
        for key in ("name", "type", "description"):
            if not isinstance(value.get(key), str) or not value[key].strip():
                return f"{key!r} must be a non-empty string"
        if len(value["name"]) > 200:
            return "'name' must be at most 200 characters"
        if value["name"].strip().casefold() in self.member_names:
            return "'name' must be a new higher-level entity, not one of the given entities"
        return None


def checker(members: Sequence[Node]) -> SummaryCheck:
    return SummaryCheck(frozenset(n.name.strip().casefold() for n in members))


def cleaned(value: Mapping[str, Any]) -> dict[str, str]:
    return {"name": value["name"].strip(), "type": value["type"].strip().lower(), "description": value["description"].strip()}


def _words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words[:limit]) + (" ..." if len(words) > limit else "")


def extractive(members: Sequence[Node]) -> dict[str, str]:
    """A summary from the members themselves (most central first): their names, their commonest type, their descriptions."""
    # a summary member is named after its own first member: "A, B and 3 more" is A's group
    names = [n.name.split(", ")[0] if n.layer else n.name for n in members[:EXTRACTIVE_NAMES]]
    more = len(members) - len(names)
    name = ", ".join(names) + (f" and {more} more" if more > 0 else "")
    types = Counter(n.type for n in members if n.type)
    described = [f"{n.name}: {_words(n.description, DESCRIPTION_WORDS)}" if n.description else n.name
                 for n in members[:EXTRACTIVE_DESCRIBED]]
    description = f"A group of {len(members)} related entities. " + " ".join(d.rstrip(".") + "." for d in described)
    return {"name": name, "type": types.most_common(1)[0][0] if types else SUMMARY_TYPE, "description": description}
