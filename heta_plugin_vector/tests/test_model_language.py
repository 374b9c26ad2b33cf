"""An English-only embedding model over documents in another language is a build issue, never silence."""

from __future__ import annotations

from heta_framework.kb import KnowledgeBase, SourceDocument
from heta_plugin_vector.model_language import foreign_languages

FRENCH = [
    "La Loire est le plus long fleuve de France ; elle prend sa source au mont Gerbier-de-Jonc et se jette dans l'Atlantique.",
    "Le camembert est un fromage à pâte molle fabriqué en Normandie à partir de lait de vache cru ou pasteurisé.",
    "Claude Monet est un peintre français, l'un des fondateurs de l'impressionnisme, célèbre pour ses nymphéas.",
]
ENGLISH = [
    "The red fox is the largest of the true foxes and lives across the Northern Hemisphere.",
    "Shanghai is a direct-administered municipality and the most populous urban area in China.",
]


def documents(texts: list[str], prefix: str) -> list[SourceDocument]:
    return [SourceDocument(id=f"{prefix}{i}", name=f"{prefix}{i}.txt", text=text) for i, text in enumerate(texts)]


def language_issues(report) -> list:
    embed = next(s for s in report.steps if s.name == "embed_chunks")
    return [i for i in embed.issues if i.code == "embedding_model_language"]


def test_french_documents_under_an_english_model_are_reported_with_the_fix(tmp_path, registry, vector_recipe):
    with KnowledgeBase.create(tmp_path / "fr", vector_recipe(), registry=registry) as kb:
        [issue] = language_issues(kb.sync.build(documents(FRENCH + ENGLISH[:1], "d")))
        assert issue.severity == "warning" and issue.subject.id == "local/all-MiniLM-L6-v2"
        assert "french" in issue.message and "heta init --multilingual" in issue.message and "--rebuild" in issue.message
        assert issue.details["foreign_share"] == "0.75" and issue.details["model_languages"] == "en"
        assert kb.sync.query("fromage de Normandie", mode="vector_search", top_k=1).results  # the build went on


def test_english_documents_and_a_few_foreign_ones_pass(tmp_path, registry, vector_recipe):
    with KnowledgeBase.create(tmp_path / "en", vector_recipe(), registry=registry) as kb:
        assert language_issues(kb.sync.build(documents(ENGLISH * 3, "e"))) == []


def test_the_share_counts_languages_the_model_does_not_declare():
    share, languages = foreign_languages(FRENCH + ENGLISH, frozenset({"en"}))
    assert (round(share, 2), languages) == (0.6, ["french"])
    assert foreign_languages(FRENCH, frozenset({"en", "fr"})) == (0.0, [])
    assert foreign_languages(["大熊猫生活在四川的竹林里。"], frozenset({"en"})) == (1.0, ["chinese"])
    assert foreign_languages([], frozenset({"en"})) == (0.0, [])
