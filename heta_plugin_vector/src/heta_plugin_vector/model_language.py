"""Whether the embedding model knows the language of the chunks it embeds (issue ``embedding_model_language``).

An English-only model over French text builds without an error and then ranks poorly: on 1,000 French
Wikipedia articles MiniLM's ``vector_search`` reached 0.54 MRR@10 against 0.85 for
multilingual-e5-small, and fusion calibration switched the vector leg off (bench_multilingual.py,
docs/benchmarks.md). A model that declares its languages (``client.languages``, ISO 639-1 codes, as
the local plugin's models do) is checked against a sample of the chunks, so such a knowledge base never
passes silently. A model that declares nothing is not checked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from heta_framework.text.languages import CJK_LANGUAGES, STEMMED_LANGUAGES, detect_language, main_script

#: chunks whose language is detected, spread over the run (~0.2 ms each)
SAMPLE = 200
#: the issue is reported when more than this share of the sample is in languages the model does not know: more
#: than a third of the knowledge base is a language of its own, while an English collection with some Chinese or
#: French documents among it (a quarter or a third, in the plugins' test sets) is an English knowledge base
FOREIGN_SHARE = 1 / 3

CODE = "embedding_model_language"
_CODES = {**STEMMED_LANGUAGES, **CJK_LANGUAGES}


def foreign_languages(texts: Sequence[str], known: frozenset[str]) -> tuple[float, list[str]]:
    """The share of a sample of ``texts`` written in languages outside ``known`` (ISO codes), and those
    languages by frequency (analyzer names such as ``french``)."""
    if not texts:
        return 0.0, []
    step = max(1, len(texts) // SAMPLE)
    sample = texts[::step][:SAMPLE]
    found = Counter(detect_language(main_script(text)) for text in sample)
    foreign = Counter({name: count for name, count in found.items() if _CODES.get(name) not in known})
    return sum(foreign.values()) / len(sample), [name for name, _ in foreign.most_common()]


def check_model_language(context: Any, client: Any, texts: Sequence[str]) -> None:
    """Report ``embedding_model_language`` when the model's declared languages miss a real share of ``texts``."""
    known = getattr(client, "languages", None)
    if not known:
        return
    share, languages = foreign_languages(texts, frozenset(known))
    if share <= FOREIGN_SHARE:
        return
    named = ", ".join(languages[:3])
    context.report(
        CODE,
        f"{share:.0%} of the chunks embedded in this build are in {named}, which {client.model_name} does not know "
        f"(it declares {', '.join(sorted(known))}): its vector search will rank them poorly (on French Wikipedia "
        "articles an English model reached 0.54 MRR@10 against 0.85 for local/multilingual-e5-small). For a new "
        "knowledge base run `heta init --multilingual`; for this one set model_name = \"local/multilingual-e5-small\" "
        "under [models.embedding] in recipe.toml and run `heta build PATH --rebuild`.",
        subject=("model", client.model_name),
        severity="warning",
        action="continued",
        outcome="The chunks are embedded with the configured model.",
        details={"foreign_share": round(share, 3), "languages": named, "model_languages": ",".join(sorted(known))},
    )
