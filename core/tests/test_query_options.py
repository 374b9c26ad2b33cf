"""Typed query options and request checks: one InvalidQueryError, raised before any engine runs."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import pytest
from heta_framework.builtin.engines.composed_options import HybridSearchOptions, MultihopSearchOptions
from heta_framework.common.validators import whole_number
from heta_framework.errors import InvalidQueryError
from heta_framework.kb import KnowledgeBase
from heta_framework.kb.query_options import parse_options
from heta_framework.kb.search import QueryRequest, QueryResponse, SearchAssetRef
from heta_framework.testing import inline_plugin, make_registry


def test_composed_options_keep_the_spec_names_and_defaults():
    options = parse_options(HybridSearchOptions, {}, mode="hybrid_search")
    assert (options.candidate_top_k, options.rrf_k) == (None, 60.0)
    assert options.candidates(8) == 24 and options.candidates(40) == 50  # min(top_k * 3, 50)
    assert options.weights() == {"vector_search": 1.0, "heta_graph_search": 1.0}
    weighted = parse_options(HybridSearchOptions, {"hybrid_weights": {"heta_graph_search": 1.2}}, mode="hybrid_search")
    assert weighted.weights() == {"vector_search": 1.0, "heta_graph_search": 1.2}
    assert parse_options(MultihopSearchOptions, {}, mode="heta_multihop_search").max_rounds == 3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rrf_k": -1}, "options.rrf_k must be a number of at least 0, got -1"),
        ({"rrf_k": "60"}, "options.rrf_k must be a number"),
        ({"rrf_k": True}, "options.rrf_k must be a number"),  # a boolean is not a number
        ({"rrf_k": float("nan")}, "options.rrf_k must be a number"),
        ({"candidate_top_k": 0}, "options.candidate_top_k must be a whole number between 1 and 1000, got 0"),
        ({"candidate_top_k": 10**8}, "options.candidate_top_k must be a whole number between 1 and 1000, got 100000000"),
        ({"candidate_top_k": 2.5}, "options.candidate_top_k must be a whole number"),  # never truncated to 2
        ({"hybrid_weights": {"vector": 1.0}}, "unknown mode(s) 'vector'"),
        ({"hybrid_weights": {"vector_search": -2}}, "must be a number of at least 0"),
        ({"hybrid_weights": [1, 2]}, "must map mode names to weights"),
        ({"rrk_k": 10}, "Unknown option 'rrk_k' (did you mean 'rrf_k'?) for query mode 'hybrid_search'"),
    ],
)
def test_bad_composed_options_name_the_option_and_what_it_accepts(options, message):
    with pytest.raises(InvalidQueryError) as raised:
        parse_options(HybridSearchOptions, options, mode="hybrid_search")
    assert message in str(raised.value)
    assert isinstance(raised.value, ValueError)  # callers catching ValueError keep working


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": "water\ud800ocean"}, "lone surrogate (U+D800) at position 5"),
        ({"text": b"bytes"}, "The query text must be text"),
        ({"top_k": 0}, "top_k must be a whole number from 1 to 1000, got 0"),
        ({"top_k": 1001}, "top_k must be a whole number from 1 to 1000, got 1001"),
        ({"top_k": 2**70}, "got 'a 71-bit number'"),
        ({"text": "fox\x00dog"}, "The query text contains a NUL character (\\x00) at position 3"),
        ({"top_k": True}, "top_k must be a whole number"),
        ({"top_k": 2.7}, "top_k must be a whole number"),
        ({"filters": {"na\x00me": "x"}}, "contains a NUL character"),
        ({"filters": {"": "x"}}, "Filter keys must be non-empty text"),
        ({"filters": {"name": {"$ne": "x"}}}, "a filter value must be text, a number or a boolean"),
        ({"filters": {"name": None}}, "a filter value must be text"),
        ({"filters": {"name": ["ok", {"a": 1}]}}, "(in its list)"),
        ({"filters": {"name": "bad\udfffvalue"}}, "lone surrogate (U+DFFF)"),
    ],
)
def test_hostile_requests_are_refused_when_built(kwargs, message):
    with pytest.raises(InvalidQueryError) as raised:
        QueryRequest(**{"text": "water", "mode": "any_mode", **kwargs})
    assert message in str(raised.value)


def test_good_requests_pass_unchanged():
    request = QueryRequest(text="fox dog ✓ 上海", mode="m", top_k=1000, filters={"name": ["a.md", "b.md"], "page": 2, "ok": True})
    assert request.filters["name"] == ["a.md", "b.md"] and request.top_k == 1000


@attrs.frozen
class _CallOptions:
    inner_top_k: int | None = attrs.field(default=None, validator=whole_number(0, optional=True))


class _CallsAnotherMode:
    """Calls sql_text_search with the ``top_k`` it is given in its options, so ``top_k=0`` reaches ``context.query``."""

    mode: ClassVar[str] = "calls_sql"
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset({SearchAssetRef(kind="chunk_text_index")})
    options_type: ClassVar[type] = _CallOptions

    async def query(self, request: Any, context: Any) -> QueryResponse:
        inner = await context.query(request.text, mode="sql_text_search", top_k=request.options.get("inner_top_k"))
        return QueryResponse(results=inner.results)


@pytest.fixture
async def built_kb(tmp_path, sql_recipe, docs_dir):
    registry = make_registry(inline_plugin("calls-sql", query_engines=[_CallsAnotherMode()]))
    kb = KnowledgeBase.create(tmp_path / "kb", sql_recipe, registry=registry)
    await kb.build([docs_dir])
    yield kb
    kb.close()


async def test_unknown_option_is_an_error_not_ignored(built_kb):
    with pytest.raises(InvalidQueryError, match=r"Unknown option 'top_k' .*sql_text_search' takes no options of its own"):
        await built_kb.query("fox", mode="sql_text_search", options={"top_k": 3})
    with pytest.raises(InvalidQueryError, match=r"options.answer must be true or false"):
        await built_kb.query("fox", mode="sql_text_search", options={"answer": "yes"})
    assert (await built_kb.query("fox", mode="sql_text_search")).results  # the same query without it works


async def test_context_query_top_k_zero_is_refused_not_inherited(built_kb):
    default = await built_kb.query("fox whales", mode="calls_sql", top_k=1)
    assert len(default.results) == 1  # top_k=None inherits the outer top_k
    with pytest.raises(InvalidQueryError, match="top_k must be a whole number from 1 to 1000, got 0"):
        await built_kb.query("fox whales", mode="calls_sql", top_k=5, options={"inner_top_k": 0})


async def test_hostile_filters_raise_the_same_error_in_sql_text_search(built_kb):
    for filters in ({"name\x00": "fox.txt"}, {"name": {"nested": 1}}):
        with pytest.raises(InvalidQueryError):
            await built_kb.query("fox", mode="sql_text_search", filters=filters)


# --- recipe defaults: [query.MODE] -----------------------------------------------------------


async def test_recipe_query_defaults_apply_under_the_request_options(tmp_path, sql_recipe, docs_dir):
    registry = make_registry(inline_plugin("calls-sql", query_engines=[_CallsAnotherMode()]))
    recipe = attrs.evolve(sql_recipe, query={"calls_sql": {"inner_top_k": 1}})
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    try:
        await kb.build([docs_dir])
        assert len((await kb.query("fox whales", mode="calls_sql", top_k=5)).results) == 1  # the recipe's default
        overridden = await kb.query("fox whales", mode="calls_sql", top_k=5, options={"inner_top_k": 2})
        assert len(overridden.results) == 2  # the request's own option wins
        traced = await kb.query("fox whales", mode="calls_sql", top_k=5, trace=True)
        assert traced.trace.options == {"inner_top_k": 1}  # the trace shows what actually ran
        # defaults belong to their mode only: sql_text_search, which calls_sql composes, takes no options
        assert len((await kb.query("fox whales", mode="sql_text_search", top_k=5)).results) == 2
    finally:
        kb.close()


def test_recipe_query_defaults_round_trip_and_are_checked_at_load():
    from heta_framework.errors import RecipeError
    from heta_framework.kb import Recipe

    registry = make_registry(inline_plugin("calls-sql", query_engines=[_CallsAnotherMode()]))
    text = '[[steps]]\nstep = "parse_documents"\n\n[query.calls_sql]\ninner_top_k = 3\nanswer = false\n'
    recipe = Recipe.from_toml(text, registry)
    assert recipe.query_defaults("calls_sql") == {"inner_top_k": 3, "answer": False}
    assert recipe.query_defaults("sql_text_search") == {}
    assert Recipe.from_toml(recipe.to_toml(), registry) == recipe

    for table, message in [
        ("[query.calls_sqll]\ninner_top_k = 3", "calls_sql"),  # unknown mode: the registry's did-you-mean
        ("[query.calls_sql]\ninner_topk = 3", "Unknown option 'inner_topk' (did you mean 'inner_top_k'?)"),
        ("[query.calls_sql]\ninner_top_k = -1", "inner_top_k must be a whole number of at least 0, got -1"),
        ("[query.calls_sql]\nanswer = 1", "answer must be true or false"),
        ("[query]\ncalls_sql = 3", "expected a table of calls_sql options"),
    ]:
        with pytest.raises(RecipeError) as raised:
            Recipe.from_toml('[[steps]]\nstep = "parse_documents"\n\n' + table + "\n", registry)
        assert message in str(raised.value), str(raised.value)
        assert "$.query." in str(raised.value)
