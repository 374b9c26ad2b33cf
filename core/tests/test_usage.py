"""Usage accounting: the metered model clients, the meters, prices, and what concurrent work counts apart."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from heta_framework.common.metered_models import MeteredModel, metered
from heta_framework.common.model_streaming import CompletionDelta, stream_completion
from heta_framework.common.models import Completion, EmbeddingModel, LanguageModel, Message, ModelPrices, RerankHit, RerankModel
from heta_framework.common.usage import add_usage, metering, report_tokens
from heta_framework.errors import RecipeError
from heta_framework.kb.recipe import Recipe
from heta_framework.plugins.registry import PluginRegistry


class Embedder:
    model_name = "fake/embedder"
    dimension = 4

    async def embed(self, texts):
        await asyncio.sleep(0)
        report_tokens(input_tokens=sum(len(t.split()) for t in texts))  # as an embeddings API would
        return np.ones((len(texts), 4), dtype=np.float32)


class Talker:
    model_name = "fake/talker"

    async def complete(self, messages, *, json_schema=None, temperature=0.0, max_tokens=None):
        return Completion("ok", prompt_tokens=100, completion_tokens=20)

    async def stream(self, messages, *, temperature=0.0, max_tokens=None):
        yield CompletionDelta("o")
        yield CompletionDelta("k")
        yield CompletionDelta("", prompt_tokens=30, completion_tokens=2)


class Ranker:
    model_name = "fake/ranker"

    async def rerank(self, query, documents, top_n):
        return [RerankHit(i, 1.0) for i in range(top_n)]


EMBEDDING = EmbeddingModel(model_name="fake/embedder", prices=ModelPrices(input=0.1))
LANGUAGE = LanguageModel(model_name="fake/talker", prices=ModelPrices(input=1.0, output=4.0))


async def test_calls_are_counted_by_model_with_tokens_and_cost():
    embedder, talker = metered(Embedder(), EMBEDDING), metered(Talker(), LANGUAGE)
    ranker = metered(Ranker(), RerankModel(model_name="fake/ranker"))
    with metering() as meter:
        await embedder.embed(["two words", "and three more"])
        await talker.complete([Message("user", "hi")])
        await ranker.rerank("q", ["a", "b", "c"], 2)
    usage = meter.to_dict()
    assert usage["models"] == {
        "fake/embedder": {"kind": "embedding", "calls": 1, "texts": 2, "tokens": 5, "cost": pytest.approx(5 * 0.1 / 1e6)},
        "fake/talker": {"kind": "language", "calls": 1, "prompt_tokens": 100, "completion_tokens": 20,
                        "cost": pytest.approx((100 * 1.0 + 20 * 4.0) / 1e6)},
        "fake/ranker": {"kind": "reranker", "calls": 1, "documents": 3},
    }
    assert usage["totals"] == {
        "model_calls": 3, "llm_calls": 1, "prompt_tokens": 100, "completion_tokens": 20, "embedded_texts": 2, "embedding_tokens": 5,
        "cost": pytest.approx(5 * 0.1 / 1e6 + 180 / 1e6),
    }


async def test_an_embedding_model_that_reports_no_tokens_has_texts_but_no_tokens_and_no_cost():
    class Silent(Embedder):
        async def embed(self, texts):
            return np.ones((len(texts), 4), dtype=np.float32)

    with metering() as meter:
        await metered(Silent(), EMBEDDING).embed(["a b c"])
    assert meter.to_dict()["models"]["fake/embedder"] == {"kind": "embedding", "calls": 1, "texts": 1}


async def test_a_streamed_answer_is_counted_once_it_is_read():
    talker = metered(Talker(), LANGUAGE)
    with metering() as meter:
        pieces = [delta.text async for delta in stream_completion(talker, [Message("user", "hi")])]
    assert "".join(pieces) == "ok"
    assert meter.to_dict()["models"]["fake/talker"]["prompt_tokens"] == 30
    assert meter.to_dict()["models"]["fake/talker"]["completion_tokens"] == 2


async def test_concurrent_queries_count_apart_and_nested_meters_both_count():
    embedder = metered(Embedder(), EMBEDDING)

    async def query(texts: list[str]) -> dict:
        with metering() as meter:
            await asyncio.gather(*(embedder.embed([t]) for t in texts))  # tasks copy the context: they count here
            return meter.to_dict()

    with metering() as outer:
        first, second = await asyncio.gather(query(["a", "b", "c"]), query(["d"]))
    assert first["models"]["fake/embedder"]["calls"] == 3 and second["models"]["fake/embedder"]["calls"] == 1
    assert outer.to_dict()["models"]["fake/embedder"]["calls"] == 4


async def test_the_wrapper_is_the_client_for_everyone_else():
    talker = metered(Talker(), LANGUAGE)
    assert isinstance(talker, Talker) and type(talker) is MeteredModel and talker.wrapped.__class__ is Talker
    assert talker.model_name == "fake/talker"
    assert getattr(talker, "embed_queries", None) is None  # what the client lacks, the wrapper lacks
    assert getattr(metered(Embedder(), EMBEDDING), "stream", None) is None
    assert metered(talker, LANGUAGE) is talker  # never wrapped twice
    # a caller may still replace a method (heta eval counts calls so), and its calls stay metered
    original, calls = talker.complete, []

    async def counting(*args, **kwargs):
        calls.append(1)
        return await original(*args, **kwargs)

    talker.complete = counting
    with metering() as meter:
        await talker.complete([Message("user", "hi")])
    assert calls == [1] and meter.to_dict()["totals"]["llm_calls"] == 1


async def test_a_failed_call_is_not_counted_and_raises_as_before():
    class Broken(Talker):
        async def complete(self, messages, **kwargs):
            raise RuntimeError("server said no")

    with metering() as meter, pytest.raises(RuntimeError, match="server said no"):
        await metered(Broken(), LANGUAGE).complete([Message("user", "hi")])
    assert meter.to_dict()["models"] == {}


def test_usages_add_up_across_queries():
    one = {"models": {"m": {"kind": "language", "calls": 1, "prompt_tokens": 10, "completion_tokens": 1, "cost": 0.5}}}
    two = {"models": {"m": {"kind": "language", "calls": 2, "prompt_tokens": 5, "completion_tokens": 2, "cost": 0.25}}}
    total = add_usage(one, two)
    assert total["models"]["m"] == {"kind": "language", "calls": 3, "prompt_tokens": 15, "completion_tokens": 3, "cost": 0.75}
    assert total["totals"]["llm_calls"] == 3 and total["totals"]["cost"] == 0.75
    assert add_usage()["totals"]["model_calls"] == 0 and "cost" not in add_usage()["totals"]


@pytest.mark.parametrize(("prices", "problem"), [
    ("{input = -1.0}", "at least 0"),
    ("{input = true}", "prices"),
    ("{input = 1.0, outptu = 2.0}", "outptu"),
    ("{output = 2.0}", "required field missing @ $.models.language.prices.input"),
])
def test_prices_are_checked_with_the_field_path(prices, problem):
    toml = f'[models.language]\nmodel_name = "fake/talker"\nprices = {prices}\n\n[[steps]]\nstep = "parse_documents"\n'
    with pytest.raises(RecipeError) as raised:
        Recipe.from_toml(toml, PluginRegistry.from_entry_points())
    assert problem in str(raised.value) and "$.models.language.prices" in str(raised.value)


def test_prices_are_kept_in_the_saved_recipe():
    toml = '[models.language]\nmodel_name = "openai/gpt-4o-mini"\nprices = {input = 0.15, output = 0.6}\n\n[[steps]]\nstep = "parse_documents"\n'
    recipe = Recipe.from_toml(toml, PluginRegistry.from_entry_points())
    assert recipe.models.language.prices == ModelPrices(input=0.15, output=0.6)
    assert recipe.to_dict()["models"]["language"]["prices"] == {"input": 0.15, "output": 0.6}
