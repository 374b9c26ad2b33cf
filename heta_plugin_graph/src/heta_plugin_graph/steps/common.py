"""What several graph steps share: where chunks come from, optional artifacts, the LLM caller."""

from __future__ import annotations

from typing import Any

import attrs
from heta_framework.common.validators import positive_whole_number
from heta_framework.errors import HetaError
from heta_framework.kb.steps import ComponentRef, model_ref

from heta_plugin_graph.llm.asking import CallSettings
from heta_plugin_graph.llm.cache import STATE_CACHE_NAME, StateLlmCache
from heta_plugin_graph.llm.calls import JsonLlmCaller

#: the chunk lists MergeChunks/RechunkDocuments write; extraction prefers them over SplitDocuments' chunks
GRAPH_CHUNK_KEYS = "graph_chunk_keys"
EXTRACTION_KEYS = "graph_extraction_keys"
RELATIONS_EXTRACTED = "graph_relations_extracted"
ENTITY_DRAFT_KEY = "graph_entity_draft_key"
DRAFT_KEY = "graph_draft_key"

EXTRACTORS = ("llm", "nlp")


def check_extractor(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if value not in EXTRACTORS:
        raise ValueError(f"{attribute.name} must be 'llm' or 'nlp', got {value!r}")


#: the shared check (a bool or a float is refused, never read as 1 or truncated)
check_positive = positive_whole_number


def check_similarity(instance: Any, attribute: attrs.Attribute, value: float) -> None:
    if not -1.0 <= value <= 1.0:
        raise ValueError(f"{attribute.name} is a cosine similarity between -1 and 1, got {value}")


def language_ref(model: str | None) -> ComponentRef:
    return model_ref("language", model)


def optional_artifact(context: Any, key: str, default: Any = None) -> Any:
    try:
        return context.get_artifact(key)
    except HetaError:
        return default


def extraction_chunk_keys(context: Any) -> list[str]:
    keys = optional_artifact(context, GRAPH_CHUNK_KEYS)
    return list(keys) if keys is not None else list(context.get_artifact("chunk_keys"))


def all_chunk_keys(context: Any) -> list[str]:
    """Every chunk list of the run: SplitDocuments' and the graph's own (for evidence lookup)."""
    keys = list(optional_artifact(context, "chunk_keys", []) or [])
    keys += [k for k in optional_artifact(context, GRAPH_CHUNK_KEYS, []) or [] if k not in keys]
    return keys


def llm_cache(context: Any) -> StateLlmCache:
    """The knowledge base's ``graph_llm`` cache, wherever its state lives (the state keeps one connection)."""
    return StateLlmCache(context.cache(STATE_CACHE_NAME))


def make_caller(context: Any, model: str | None, *, prompt_version: str, concurrency: int, max_attempts: int, timeout: float) -> JsonLlmCaller:
    return JsonLlmCaller(
        context.language_model(model),
        counter=context.count,
        cache=llm_cache(context),
        prompt_version=prompt_version,
        concurrency=concurrency,
        max_attempts=max_attempts,
        timeout=timeout,
    )


def call_settings(model: str | None, prompt_version: str, concurrency: int, max_attempts: int, timeout: float) -> CallSettings:
    """How a step asks the language model ``model`` (``ask_json``), from its options."""
    return CallSettings(language_ref(model).key, prompt_version, concurrency, max_attempts, timeout)


def report_llm_failure(context: Any, outcome: Any, *, subject: tuple[str, str], what: str, action: str, outcome_text: str) -> None:
    """``invalid_llm_output`` (bad answers after every try) or ``llm_call_failed`` (the model was unreachable)."""
    if outcome.status == "invalid":
        context.report(
            "invalid_llm_output", f"{what}: the language model's answer stayed invalid: {outcome.error}",
            subject=subject, action=action, outcome=outcome_text, details={"attempt_count": outcome.attempts},
        )
    else:
        context.report(
            "llm_call_failed", f"{what}: the language model could not be reached after retries: {outcome.error}",
            subject=subject, action=action, outcome=outcome_text, details={"attempt_count": outcome.attempts},
        )
