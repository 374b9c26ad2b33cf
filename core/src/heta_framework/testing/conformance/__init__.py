"""Conformance suites: one reusable pytest test class per contract.

A backend author subclasses the suite in their own tests and provides its
factory fixture; every test of the suite then runs against their backend
(haystack's document-store test mixins work the same way)::

    import pytest
    from heta_framework.testing.conformance import VectorStoreSuite

    class TestMyVectorStore(VectorStoreSuite):
        @pytest.fixture
        def store_factory(self):
            return lambda root: MyVectorStore.open(None, root)   # root: the knowledge-base folder

==========================  ==========================  =============================================
suite                       contract                    fixture to provide
==========================  ==========================  =============================================
``ObjectStoreSuite``        ``ObjectStoreProtocol``     ``store_factory(root) -> store``
``SQLStoreSuite``           ``SQLStore``                ``store_factory(root) -> store``
``TextIndexStoreSuite``     ``TextIndexStore``          ``store_factory(root) -> store``
``VectorStoreSuite``        ``VectorStoreProtocol``     ``store_factory(root) -> store``
``GraphStoreSuite``         ``GraphStore``              ``store_factory(root) -> store``
``KnowledgeBaseStateSuite`` ``KnowledgeBaseState``      ``store_factory(root) -> state`` (+ ``subprocess_factory``)
``EmbeddingClientSuite``    ``EmbeddingClient``         ``embedding_client``
``LanguageClientSuite``     ``LanguageClient``          ``language_client`` (+ ``scripted_reply``)
``RerankClientSuite``       ``RerankClient``            ``rerank_client``
``QueryEngineSuite``        ``QueryEngineProtocol``     ``knowledge_base``, ``mode``, ``known_query``
``ExecutorSuite``           ``ExecutorProtocol``        ``executor``
``AccessLeakageSuite``      every available mode        ``leak_kb`` (``build_leakage_kb(path, recipe)``)
==========================  ==========================  =============================================

``store_factory(root)`` must open the *same* store again when called again with
the same folder (after ``close()``): that is how persistence is checked.

The suites need pytest (core's ``test`` extra: ``pip install 'heta-core[test]'``);
nothing else in heta_framework imports this package.
"""

from __future__ import annotations

import importlib
from typing import Any

_SUITES = {
    "ObjectStoreSuite": "objects",
    "SQLStoreSuite": "sql",
    "TextIndexStoreSuite": "text_index",
    "VectorStoreSuite": "vector",
    "GraphStoreSuite": "graph",
    "KnowledgeBaseStateSuite": "state",
    "EmbeddingClientSuite": "clients",
    "LanguageClientSuite": "clients",
    "RerankClientSuite": "clients",
    "QueryEngineSuite": "query_engine",
    "ExecutorSuite": "executor",
    "AccessLeakageSuite": "access",
    "build_leakage_kb": "access",
}

__all__ = [
    "AccessLeakageSuite",
    "EmbeddingClientSuite",
    "ExecutorSuite",
    "GraphStoreSuite",
    "KnowledgeBaseStateSuite",
    "LanguageClientSuite",
    "ObjectStoreSuite",
    "QueryEngineSuite",
    "RerankClientSuite",
    "SQLStoreSuite",
    "TextIndexStoreSuite",
    "VectorStoreSuite",
    "build_leakage_kb",
]


def __getattr__(name: str) -> Any:
    # import a suite (and pytest) only when asked for, so a missing pytest names the extra to install
    module_name = _SUITES.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name == "pytest":
            raise ImportError(
                "The conformance suites need pytest: install heta-core's test extra (pip install 'heta-core[test]')."
            ) from exc
        raise
    return getattr(module, name)
