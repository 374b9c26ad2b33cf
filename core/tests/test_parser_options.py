"""A parser that takes settings (``config_type`` + ``configure``) is configured by the recipe's
``[parsers.documents.options.<name>]``; installed but not configured it changes nothing; a
``DocumentParseError`` with its own code becomes an issue with that code, and the build goes on."""

from __future__ import annotations

import attrs
import pytest
from heta_framework.builtin.steps.parse import ParseDocuments
from heta_framework.builtin.steps.persist import PersistChunks
from heta_framework.builtin.steps.split import SplitDocuments
from heta_framework.contracts.documents import DocumentParseError, DocumentParser, ParseResult, ParserSet
from heta_framework.errors import RecipeError
from heta_framework.kb import KnowledgeBase, ParserConfig, Recipe
from heta_framework.testing import inline_plugin, make_registry


@attrs.frozen
class ShoutConfig:
    prefix: str
    extensions: tuple[str, ...] = (".txt",)


def _unconfigured(data: bytes, name: str) -> ParseResult:
    raise AssertionError("an unconfigured parser must never be asked")


def _configure(config: ShoutConfig, fallbacks: ParserSet) -> DocumentParser:
    def parse(data: bytes, name: str) -> ParseResult:
        if b"refuse" in data:
            raise DocumentParseError("the service said no", code="shout_refused", outcome="Not indexed; try later.")
        fallback = fallbacks.for_name(name)  # the parser it stands in front of reads the text
        assert fallback is not None and fallback.name in ("text", "local_txt")
        return ParseResult(text=config.prefix + fallback.parse(data, name).text.upper())

    return DocumentParser("shout", config.extensions, parse)


SHOUT = DocumentParser("shout", (), _unconfigured, "test parser with settings", config_type=ShoutConfig, configure=_configure)


@pytest.fixture
def registry():
    return make_registry(inline_plugin(parsers=[SHOUT]))


def _recipe(registry, options=None):
    data = {"steps": [{"step": "parse_documents"}, {"step": "split_documents"}, {"step": "persist_chunks"}]}
    if options is not None:
        data["parsers"] = {"documents": {"options": options}}
    return Recipe.from_dict(data, registry)


async def _texts(tmp_path, registry, recipe):
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "a.txt").write_text("quiet words")
    (docs / "b.txt").write_text("please refuse this one")
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    report = await kb.build([docs])
    results = (await kb.query("words", mode="sql_text_search")).results
    return report, [r.text for r in results]


async def test_installed_but_not_configured_changes_nothing(tmp_path, registry):
    report, texts = await _texts(tmp_path, registry, _recipe(registry))
    assert texts == ["quiet words"]
    assert not report.issues


async def test_configured_parser_wins_its_extensions_and_falls_back_on_the_others(tmp_path, registry):
    recipe = _recipe(registry, {"shout": {"prefix": "> "}})
    report, texts = await _texts(tmp_path, registry, recipe)
    assert texts == ["> QUIET WORDS"]
    [issue] = report.issues
    assert (issue.code, issue.resolution.action, issue.resolution.outcome) == ("shout_refused", "skipped_document", "Not indexed; try later.")
    # the options survive the recipe file
    assert Recipe.from_toml(recipe.to_toml(), registry).parsers["documents"].options == {"shout": {"prefix": "> "}}


def test_bad_options_are_recipe_errors_that_name_the_field(registry):
    with pytest.raises(RecipeError) as caught:
        _recipe(registry, {"shout": {"prefix": "x", "loud": True}, "nope": {}})
    message = str(caught.value)
    assert "$.parsers.documents.options.shout" in message and "loud" in message
    assert "no parser named 'nope'" in message
    with pytest.raises(RecipeError, match="takes no options"):
        _recipe(registry, {"text": {}})


def test_a_recipe_without_parser_options_writes_none():
    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(), PersistChunks()], parsers={"documents": ParserConfig(only=("text",))})
    assert recipe.to_dict()["parsers"] == {"documents": {"only": ["text"]}}


async def test_file_types_and_parsers_of_first_party_plugins_say_what_to_install(tmp_path):
    core_only = make_registry()
    with pytest.raises(RecipeError, match=r"no parser named 'mineru' is installed .*; pip install heta-plugin-mineru"):
        Recipe.from_dict({"parsers": {"documents": {"options": {"mineru": {"endpoint": "http://127.0.0.1:1"}}}}, "steps": []}, core_only)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deck.pptx").write_bytes(b"PK\x03\x04")
    (docs / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0")
    kb = KnowledgeBase.create(tmp_path / "kb", _recipe(core_only), registry=core_only)
    messages = {kb.document(i.subject.id).name: i.message for i in (await kb.build([docs])).issues if i.code == "unsupported_document_type"}
    assert ".pptx files are read by heta-plugin-office." in messages["deck.pptx"]
    assert ".doc files are read by heta-plugin-office (with LibreOffice installed) or heta-plugin-mineru" in messages["old.doc"]


@attrs.frozen
class PrefixConfig:
    prefix: str


def _configure_local(config: PrefixConfig, fallbacks: ParserSet) -> DocumentParser:
    text = fallbacks.for_name("x.txt")
    assert text is not None
    return DocumentParser("local_txt", (".txt",), lambda data, name: ParseResult(text=config.prefix + text.parse(data, name).text))


LOCAL_TXT = DocumentParser("local_txt", (".txt",), _unconfigured, config_type=PrefixConfig, configure=_configure_local)


async def test_a_parser_in_front_falls_back_on_configured_local_parsers(tmp_path):
    # shout (no file types of its own) stands in front of local_txt (its own .txt, configured in place)
    registry = make_registry(inline_plugin(parsers=[SHOUT, LOCAL_TXT]))
    recipe = _recipe(registry, {"shout": {"prefix": "> "}, "local_txt": {"prefix": "local: "}})
    report, texts = await _texts(tmp_path, registry, recipe)
    [issue] = report.issues
    assert issue.code == "shout_refused"
    assert texts == ["> LOCAL: QUIET WORDS"]
