"""A rerank server that answers 200 with an HTML page, broken JSON or JSON of another shape: retried like a 5xx, then a clear ModelError."""

from __future__ import annotations

import pytest
from heta_framework.common.models import RerankHit, RerankModel
from heta_framework.errors import ModelError
from heta_framework.testing.http import Reply, rerank_body

from heta_plugin_rerank import CohereRerankClient

DOCUMENTS = ["cats purr", "whales sing", "the ocean is deep"]

MALFORMED = {
    "html page": (Reply(body="<html><body>Bad Gateway</body></html>", headers={"Content-Type": "text/html"}), "an HTML page"),
    "cut-off json": (Reply(body='{"results": [{"index": 1', headers={"Content-Type": "application/json"}), "text that is not JSON"),
    "a json list": (Reply(body=[1, 2]), "JSON of another shape"),
    "no results": (Reply(body={"id": "r"}), "JSON without a results list"),
    "a text index": (Reply(body={"results": [{"index": "one", "relevance_score": 0.5}]}), "are not numbers"),
}


def model(server, api_key, fast_options, **options) -> RerankModel:
    return RerankModel(model_name="cohere/rerank-v3.5", base_url=server.url, api_key=api_key, options={**fast_options, **options})


@pytest.mark.parametrize("case", MALFORMED)
async def test_malformed_rerank_answers_are_retried_then_a_clear_model_error(scripted_server, api_key, fast_options, case):
    reply, says = MALFORMED[case]
    scripted_server.enqueue("/v2/rerank", reply, times=3)
    client = CohereRerankClient(model(scripted_server, api_key, fast_options, max_attempts=3))
    with pytest.raises(ModelError) as raised:
        await client.rerank("whales", DOCUMENTS, top_n=2)
    message = str(raised.value)
    assert says in message and "after 3 attempt(s)" in message and "base_url" in message
    assert api_key not in message
    assert raised.value.__suppress_context__  # raised from None: no raw client exception chained
    assert len(scripted_server.requests) == 3
    scripted_server.check()


async def test_one_html_page_then_a_good_answer_succeeds(scripted_server, api_key, fast_options):
    scripted_server.enqueue("/v2/rerank", MALFORMED["html page"][0])
    scripted_server.enqueue("/v2/rerank", body=rerank_body([(1, 0.9), (2, 0.4)]))
    client = CohereRerankClient(model(scripted_server, api_key, fast_options))
    assert await client.rerank("whales", DOCUMENTS, top_n=2) == [RerankHit(index=1, score=0.9), RerankHit(index=2, score=0.4)]
    assert len(scripted_server.requests) == 2
