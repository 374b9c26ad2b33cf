"""Heta plugin: rerankers for ``models.reranker``.

- ``cohere/<model>``: the Cohere v2 rerank API (or a compatible server via ``base_url``),
  through the official ``cohere`` client with Heta's retries, time-outs and concurrency bound.
- ``local/<folder>``: a sentence-transformers ``CrossEncoder`` saved in a local folder,
  never downloaded. An absolute folder is written ``local//abs/path``.

Options, defaults and errors: docs/plugins/rerank.md.
"""

from __future__ import annotations

from typing import Any

from heta_framework.common.lazy import lazy_attributes
from heta_framework.common.models import ModelProvider
from heta_framework.plugins import hookimpl

from heta_plugin_rerank.local_reranker import LocalCrossEncoderReranker
from heta_plugin_rerank.options import CohereOptions, LocalCrossEncoderOptions

__all__ = [
    "COHERE_PROVIDER",
    "CohereOptions",
    "CohereRerankClient",
    "LOCAL_PROVIDER",
    "LocalCrossEncoderOptions",
    "LocalCrossEncoderReranker",
]


# the Cohere client is imported when first named, not when plugins are found (every `heta` command): the
# cohere SDK and httpx took 0.25 s of that
__getattr__ = lazy_attributes(__name__, {"CohereRerankClient": "heta_plugin_rerank.cohere_reranker"})


def create_cohere_client(config: Any) -> Any:
    """The ``CohereRerankClient`` for ``config`` (imported here, on first use)."""
    from heta_plugin_rerank.cohere_reranker import CohereRerankClient

    return CohereRerankClient(config)


COHERE_PROVIDER = ModelProvider(
    name="cohere",
    kinds=frozenset({"reranker"}),
    create=create_cohere_client,
    description="Cohere rerank API (v2), or a Cohere-compatible server via base_url",
)

LOCAL_PROVIDER = ModelProvider(
    name="local",
    kinds=frozenset({"reranker"}),
    create=LocalCrossEncoderReranker,
    description="a sentence-transformers CrossEncoder from a local folder: local//abs/path/to/model",
)


@hookimpl
def register_model_providers(register):
    register(COHERE_PROVIDER)
    register(LOCAL_PROVIDER)
