"""The hooks a Heta plugin can implement. Each receives one typed ``register`` callback.

A plugin is a module (usually a distribution's top-level package, listed under
the ``heta`` entry-point group) with functions decorated ``@hookimpl``::

    from heta_framework.plugins import hookimpl

    @hookimpl
    def register_query_engines(register):
        register(MyEngine())

Call ``register`` once per thing. Names must be unique across all plugins; a
duplicate is an error that names both distributions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

PROJECT_NAME = "heta"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def register_steps(register: Callable[[type], None]) -> None:
    """Register build step classes.

    ``register(StepClass)``: the class has a string class attribute ``name``
    (``"embed_chunks"``) used in recipe files as ``step = "embed_chunks"``, and
    its instances satisfy ``KnowledgeStepProtocol``. Make it an ``attrs`` class so
    its fields become the step's recipe options.
    """


@hookspec
def register_query_engines(register: Callable[[Any], None]) -> None:
    """Register query engines.

    ``register(engine)``: ``engine`` satisfies ``QueryEngineProtocol``; its
    ``mode`` is the name users pass to ``kb.query(..., mode=...)``.
    """


@hookspec
def register_stores(register: Callable[[Any], None]) -> None:
    """Register store types.

    ``register(StoreType(name="faiss", slot="vector", factory=..., config_type=...))``:
    a recipe's ``[stores.vector] type = "faiss"`` then opens this store.
    """


@hookspec
def register_model_providers(register: Callable[[Any], None]) -> None:
    """Register model providers.

    ``register(ModelProvider(name="openai", kinds=frozenset({"language", "embedding"}), create=...))``:
    every model named ``openai/...`` in a recipe is built by ``create(config)``.
    """


@hookspec
def register_parsers(register: Callable[[Any], None]) -> None:
    """Register document parsers.

    ``register(DocumentParser(name="pdf", extensions=(".pdf",), parse=...))``:
    ``ParseDocuments`` picks a parser by file extension.
    """


@hookspec
def register_procedures(register: Callable[[type], None]) -> None:
    """Register procedures: named bundles of steps that only expand (``HetaGraphProcedure``).

    ``register(ProcedureClass)``: the class has a string class attribute ``name``
    and an ``expand()`` method returning the steps.
    """
