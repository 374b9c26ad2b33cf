"""The hooks a Heta plugin can implement. Each receives one typed registrar, ``register``.

A plugin is a module (usually a distribution's top-level package, listed under
the ``heta`` entry-point group) with functions decorated ``@hookimpl``::

    from heta_framework.plugins import hookimpl

    @hookimpl
    def register_query_engines(register):
        register(MyEngine())            # or register.add_query_engine(MyEngine())

Call ``register`` once per thing. A plugin's registrations take effect together,
after all its hooks returned: if one hook raises, or one name is already taken
by another plugin, that plugin registers nothing and is reported (``heta
plugins``); the others keep working. A ``@hookimpl`` whose name is not a hook
below (a misspelling) is reported the same way.

Adding a hook is one edit here: a ``register_<category>`` function whose
``register`` parameter is annotated with its ``Registrar`` subclass. The
registry, ``heta_framework.testing.inline_plugin`` and the docs test read
this module.
"""

from __future__ import annotations

import pluggy

from heta_framework.plugins.registrars import (
    ExecutorRegistrar,
    ModelProviderRegistrar,
    ParserRegistrar,
    ProcedureRegistrar,
    QueryEngineRegistrar,
    StepRegistrar,
    StoreRegistrar,
)

PROJECT_NAME = "heta"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def register_steps(register: StepRegistrar) -> None:
    """Register build step classes.

    ``register(StepClass)``: the class has a string class attribute ``name``
    (``"embed_chunks"``) used in recipe files as ``step = "embed_chunks"``, and
    its instances satisfy ``KnowledgeStepProtocol``. Make it an ``attrs`` class so
    its fields become the step's recipe options.
    """


@hookspec
def register_query_engines(register: QueryEngineRegistrar) -> None:
    """Register query engines.

    ``register(engine)``: ``engine`` satisfies ``QueryEngineProtocol``; its
    ``mode`` is the name users pass to ``kb.query(..., mode=...)``.
    """


@hookspec
def register_stores(register: StoreRegistrar) -> None:
    """Register store types.

    ``register(StoreType(name="faiss", slot="vector", factory=..., config_type=...))``:
    a recipe's ``[stores.vector] type = "faiss"`` then opens this store. The store
    satisfies its slot's contract in ``heta_framework.contracts.stores``.
    """


@hookspec
def register_model_providers(register: ModelProviderRegistrar) -> None:
    """Register model providers.

    ``register(ModelProvider(name="openai", kinds=frozenset({"language", "embedding"}), create=...))``:
    every model named ``openai/...`` in a recipe is built by ``create(config)``.
    """


@hookspec
def register_parsers(register: ParserRegistrar) -> None:
    """Register document parsers.

    ``register(DocumentParser(name="pdf", extensions=(".pdf",), parse=...))``:
    ``ParseDocuments`` picks a parser by file extension.
    """


@hookspec
def register_procedures(register: ProcedureRegistrar) -> None:
    """Register procedures: named bundles of steps that only expand (``HetaGraphProcedure``).

    ``register(ProcedureClass)``: the class has a string class attribute ``name``
    and an ``expand()`` method returning the steps (``ProcedureProtocol``).
    """


@hookspec
def register_executors(register: ExecutorRegistrar) -> None:
    """Register executors: where a build's fanned-out work runs.

    ``register(ExecutorType(name="ray", factory=..., config_type=...))``: a recipe's
    ``[executor] type = "ray"`` then runs every step's ``context.map_batches(...)``
    through ``factory(config, root)``, which satisfies ``ExecutorProtocol``
    (``heta_framework.contracts.executor``; ``ExecutorSuite`` in
    ``heta_framework.testing.conformance`` checks it). Core registers ``local``.
    """
