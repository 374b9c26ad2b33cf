"""The typed registrars each ``register_*`` hook receives (tox 4's ``ToxEnvRegister`` is the model).

A registrar is callable, so plugins keep writing ``register(thing)``; the named
method (``register.add_store_type(...)``) says what the hook takes, and both
check the item's shape at once, so a wrong item fails its plugin's registration
with a message instead of breaking a build later. A registrar only *collects*:
the registry applies a plugin's registrations after all its hooks returned,
all or nothing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from heta_framework.errors import PluginError

if TYPE_CHECKING:
    from heta_framework.common.models import ModelProvider
    from heta_framework.contracts.documents import DocumentParser
    from heta_framework.contracts.executor import ExecutorType
    from heta_framework.contracts.search import QueryEngineProtocol
    from heta_framework.contracts.steps import KnowledgeStepProtocol, ProcedureProtocol
    from heta_framework.contracts.stores import StoreType

T = TypeVar("T")


class Registrar(Generic[T]):
    """Collects one hook's registrations. ``category`` is the registry's name for them (``"stores"``)."""

    category: ClassVar[str] = ""
    expects: ClassVar[str] = ""

    def __init__(self, collect: Callable[[str, Any], None]):
        self._collect = collect

    def __call__(self, item: T) -> None:
        self.add(item)

    def add(self, item: T) -> None:
        problem = self.problem(item)
        if problem:
            raise PluginError(f"register_{self.category} expects {self.expects}; got {item!r}: {problem}.")
        self._collect(self.category, item)

    def problem(self, item: Any) -> str | None:
        """Why ``item`` cannot be registered here, or ``None``."""
        return None


def _named_class_problem(item: Any) -> str | None:
    if not inspect.isclass(item):
        return "register the class itself, not an instance"
    name = getattr(item, "name", None)
    if not isinstance(name, str) or not name:
        return "the class needs a string class attribute `name`"
    return None


class StepRegistrar(Registrar["type[KnowledgeStepProtocol]"]):
    category = "steps"
    expects = "a step class (a string class attribute `name`; instances satisfy KnowledgeStepProtocol)"

    def add_step(self, step_class: type[KnowledgeStepProtocol]) -> None:
        self.add(step_class)

    def problem(self, item: Any) -> str | None:
        return _named_class_problem(item) or (None if callable(getattr(item, "run", None)) else "the class has no run(context) method")


class QueryEngineRegistrar(Registrar["QueryEngineProtocol"]):
    category = "query_engines"
    expects = "a query engine instance (mode, required_assets, async query(request, context))"

    def add_query_engine(self, engine: QueryEngineProtocol) -> None:
        self.add(engine)

    def problem(self, item: Any) -> str | None:
        if inspect.isclass(item):
            return "register an instance, not the class"
        if not isinstance(getattr(item, "mode", None), str) or not item.mode:
            return "it has no string `mode`"
        if not isinstance(getattr(item, "required_assets", None), frozenset):
            return "`required_assets` must be a frozenset of SearchAssetRef"
        if not inspect.iscoroutinefunction(getattr(item, "query", None)):
            return "`query` must be an async method"
        return None


class StoreRegistrar(Registrar["StoreType"]):
    category = "stores"
    expects = "a StoreType (heta_framework.contracts.stores)"

    def add_store_type(self, store_type: StoreType) -> None:
        self.add(store_type)

    def problem(self, item: Any) -> str | None:
        from heta_framework.contracts.stores import StoreType

        return None if isinstance(item, StoreType) else "wrap the factory in StoreType(name, slot, factory, config_type)"


class ModelProviderRegistrar(Registrar["ModelProvider"]):
    category = "model_providers"
    expects = "a ModelProvider (heta_framework.common.models)"

    def add_model_provider(self, provider: ModelProvider) -> None:
        self.add(provider)

    def problem(self, item: Any) -> str | None:
        from heta_framework.common.models import ModelProvider

        return None if isinstance(item, ModelProvider) else "wrap the factory in ModelProvider(name, kinds, create)"


class ParserRegistrar(Registrar["DocumentParser"]):
    category = "parsers"
    expects = "a DocumentParser (heta_framework.contracts.documents)"

    def add_parser(self, parser: DocumentParser) -> None:
        self.add(parser)

    def problem(self, item: Any) -> str | None:
        from heta_framework.contracts.documents import DocumentParser

        return None if isinstance(item, DocumentParser) else "wrap the function in DocumentParser(name, extensions, parse)"


class ProcedureRegistrar(Registrar["type[ProcedureProtocol]"]):
    category = "procedures"
    expects = "a procedure class (a string class attribute `name` and an expand() method)"

    def add_procedure(self, procedure_class: type[ProcedureProtocol]) -> None:
        self.add(procedure_class)

    def problem(self, item: Any) -> str | None:
        return _named_class_problem(item) or (None if callable(getattr(item, "expand", None)) else "the class has no expand() method")


class ExecutorRegistrar(Registrar["ExecutorType"]):
    category = "executors"
    expects = "an ExecutorType (heta_framework.contracts.executor)"

    def add_executor(self, executor_type: ExecutorType) -> None:
        self.add(executor_type)

    def problem(self, item: Any) -> str | None:
        from heta_framework.contracts.executor import ExecutorType

        return None if isinstance(item, ExecutorType) else "wrap the factory in ExecutorType(name, factory, config_type)"
