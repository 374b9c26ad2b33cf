"""``AccessLeakageSuite``: no query mode tells a caller what a document they may not read says.

A knowledge base holds three public documents about penicillin production and restricted ones
(readable by ``group:finance`` only) on the same subject, whose unique names (a company, a plant,
a person) appear nowhere else; one names a public company too, so graph facts and summaries merge
public and restricted evidence. For every available mode (third-party modes included), every
query and every caller who may not read them, no field of the response (results, evidence, graph
facts, reports, answer, citations, metadata, trace) holds a restricted name or document id; a
reader does see them; and the public caller's top-k is full (filtered in the store, not after it).

Use it from a plugin's tests with a recipe that builds your modes::

    from heta_framework.testing.conformance import AccessLeakageSuite, build_leakage_kb

    class TestMyModes(AccessLeakageSuite):
        @pytest.fixture(scope="class")
        @classmethod
        def leak_kb(cls, tmp_path_factory):
            kb = build_leakage_kb(tmp_path_factory.mktemp("kb"), my_recipe())
            yield kb
            kb.close()
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from heta_framework.contracts.documents import SourceDocument

READER = "group:finance"
#: callers who may not read the restricted documents: nobody (public only) and another group
OUTSIDERS: tuple[tuple[str, ...] | None, ...] = (None, ("group:sales", "bob"))
#: names only the restricted documents hold, and the prefix of their ids
SECRETS = ("zephyrine", "qorvath", "ilsabet", "marrow")
RESTRICTED_IDS = ("acquisition-memo", "finance-note")
PUBLIC_IDS = ("aurora", "fleming", "hospitals")
#: restricted documents that match "penicillin production" better than the public ones do
FINANCE_NOTES = 12

PUBLIC_DOCUMENTS = (
    SourceDocument(id="aurora", name="aurora.txt", text=(
        "Aurora Labs makes penicillin in Leeds. The Leeds plant of Aurora Labs ships penicillin production "
        "batches to hospitals across Europe.")),
    SourceDocument(id="fleming", name="fleming.txt", text=(
        "Penicillin was discovered by Alexander Fleming in London. Penicillin production grew quickly during the war.")),
    SourceDocument(id="hospitals", name="hospitals.txt", text=(
        "Hospitals in Europe store penicillin in cold rooms. Penicillin production needs clean water and careful storage.")),
)


def restricted_documents() -> list[SourceDocument]:
    memo = SourceDocument(id="acquisition-memo", name="memo.txt", access=(READER,), text=(
        "Aurora Labs plans to buy Zephyrine Biotech. Zephyrine Biotech runs penicillin production at the Qorvath plant. "
        "Ilsabet Marrow manages the Qorvath plant for Aurora Labs."))
    notes = [
        SourceDocument(id=f"finance-note-{i:02d}", name=f"note{i}.txt", access=(READER,), text=(
            f"Finance note {i}: penicillin production at the Qorvath plant. Penicillin production targets for Qorvath "
            f"penicillin production rose {i} percent."))
        for i in range(FINANCE_NOTES)
    ]
    return [memo, *notes]


def leakage_documents() -> list[SourceDocument]:
    return [*PUBLIC_DOCUMENTS, *restricted_documents()]


def build_leakage_kb(path: Path, recipe: Any, *, registry: Any = None) -> Any:
    """A new knowledge base at ``path`` built from ``leakage_documents()`` with ``recipe`` (a ``Recipe`` or a dict)."""
    from heta_framework.kb import KnowledgeBase, Recipe
    from heta_framework.plugins.registry import PluginRegistry

    registry = registry or PluginRegistry.from_entry_points(strict=True)
    if not isinstance(recipe, Recipe):
        recipe = Recipe.from_dict(dict(recipe), registry)
    kb = KnowledgeBase.create(path, recipe, registry=registry)
    kb.sync.build(leakage_documents())
    return kb


#: what callers ask: the shared subject, the shared company, a question the restricted memo answers
QUERIES = ("penicillin production", "Aurora Labs", "Who manages the plant for Aurora Labs?", "plans to buy a biotech company")
#: a caller who names a restricted company learns nothing else: every other secret stays hidden
NAMING_QUERY = ("Zephyrine Biotech penicillin", "zephyrine")


def leaked(response: Any, allowed: Iterable[str] = ()) -> list[str]:
    """The secrets and restricted ids anywhere in ``response``'s JSON (``allowed``: words the caller said)."""
    text = json.dumps(response.to_dict(), ensure_ascii=False).casefold()
    return [s for s in (*SECRETS, *RESTRICTED_IDS) if s not in allowed and s in text]


class AccessLeakageSuite:
    """Subclass with a class-scoped ``leak_kb`` fixture (``build_leakage_kb``). Every available mode is checked."""

    #: modes not to check (say why in the subclass)
    skip_modes: ClassVar[Sequence[str]] = ()
    #: query options per mode (e.g. an answer from a scripted language model)
    mode_options: ClassVar[dict[str, dict[str, Any]]] = {}
    #: modes whose results are chunks ranked by the mode itself: the public caller's top-k must be full
    chunk_modes: ClassVar[Sequence[str]] = ("vector_search", "full_text_search", "sql_text_search")

    def modes(self, kb: Any) -> list[str]:
        return [mode for mode in sorted(kb.available_queries) if mode not in self.skip_modes]

    def ask(self, kb: Any, text: str, mode: str, principals: Sequence[str] | None, top_k: int = 10) -> Any:
        return kb.sync.query(text, mode=mode, top_k=top_k, trace=True, principals=principals, options=self.mode_options.get(mode))

    def test_no_mode_shows_restricted_documents_to_others(self, leak_kb):
        modes = self.modes(leak_kb)
        assert modes, "the knowledge base has no available mode to check"
        found = {}
        for mode in modes:
            for principals in OUTSIDERS:
                for text in QUERIES:
                    if secrets := leaked(self.ask(leak_kb, text, mode, principals)):
                        found[(mode, principals, text)] = secrets
        assert not found, f"restricted content reached callers who may not read it: {found}"

    def test_naming_a_restricted_thing_reveals_nothing_else(self, leak_kb):
        text, named = NAMING_QUERY
        found = {mode: secrets for mode in self.modes(leak_kb) if (secrets := leaked(self.ask(leak_kb, text, mode, None), allowed=(named,)))}
        assert not found, f"a query naming a restricted company drew out more: {found}"

    def test_a_reader_sees_the_restricted_documents(self, leak_kb):
        missing = [mode for mode in self.modes(leak_kb)
                   if not leaked(self.ask(leak_kb, "Who manages the Qorvath plant for Aurora Labs?", mode, (READER, "alice")), allowed=("qorvath",))]
        assert not missing, f"these modes hid what the reader may read: {missing}"

    def test_the_public_callers_top_k_is_full(self, leak_kb):
        # the restricted notes match "penicillin production" best: a mode that filtered after ranking would return few
        available = [mode for mode in self.chunk_modes if mode in self.modes(leak_kb)]
        for mode in available:
            response = self.ask(leak_kb, "penicillin production", mode, None, top_k=len(PUBLIC_IDS))
            assert {r.document_id for r in response.results} == set(PUBLIC_IDS), (mode, [r.document_id for r in response.results])
            reader = self.ask(leak_kb, "penicillin production", mode, (READER,), top_k=len(PUBLIC_IDS))
            assert any(r.document_id not in PUBLIC_IDS for r in reader.results), mode  # the notes do rank first for a reader

    def test_an_access_change_needs_no_rebuild(self, leak_kb):
        before = leak_kb.run_record.runs[-1]["id"]
        leak_kb.set_access(["acquisition-memo"], ["public"])
        try:
            modes = [m for m in self.chunk_modes if m in self.modes(leak_kb)]
            for mode in modes:
                assert "acquisition-memo" in {r.document_id for r in self.ask(leak_kb, "Zephyrine Biotech", mode, None).results}, mode
        finally:
            leak_kb.set_access(["acquisition-memo"], [READER])
        assert leak_kb.run_record.runs[-1]["id"] == before  # no build ran
        for mode in self.modes(leak_kb):
            assert not leaked(self.ask(leak_kb, "Aurora Labs", mode, None)), mode
