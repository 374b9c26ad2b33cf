"""Both rerankers pass core's rerank-client conformance suite: Cohere against the scripted server, local on a real model folder."""

from __future__ import annotations

import re

import pytest
from heta_framework.common.models import RerankModel
from heta_framework.testing.conformance import RerankClientSuite
from heta_framework.testing.http import rerank_body
from heta_plugin_rerank.local_reranker import LocalCrossEncoderReranker

from heta_plugin_rerank import CohereRerankClient


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def answer_by_overlap(request):
    """Score every document by the query words it shares, like a (very) simple reranker would."""
    query, documents, top_n = request.json["query"], request.json["documents"], request.json["top_n"]
    scores = [(i, len(_words(query) & _words(d)) / (1 + len(_words(query)))) for i, d in enumerate(documents)]
    return rerank_body(sorted(scores, key=lambda s: (-s[1], s[0]))[:top_n])


class TestCohereReranker(RerankClientSuite):
    @pytest.fixture
    def rerank_client(self, scripted_server, api_key, fast_options):
        scripted_server.respond("/v2/rerank", answer_by_overlap)
        model = RerankModel(model_name="cohere/rerank-v3.5", base_url=scripted_server.url, api_key=api_key, options=fast_options)
        return CohereRerankClient(model)


class TestLocalCrossEncoder(RerankClientSuite):
    judges_relevance = False  # the tiny model's weights are random: only the shape of its answers is checked

    @pytest.fixture
    def rerank_client(self, tiny_cross_encoder):
        return LocalCrossEncoderReranker(RerankModel(model_name=f"local/{tiny_cross_encoder}"))
