"""Recipes: components (models, stores, parsers) and build steps, as Python objects or TOML.

One private cattrs converter turns TOML/JSON data into these frozen objects and
back. Unknown keys are rejected and every failure names the field path::

    recipe.steps[2].batchsize: extra field — did you mean batch_size?

Secrets never leave: ``to_dict()`` writes no API key values (only
``api_key_env`` names), and ``summary()`` masks them.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
import tomli_w

from heta_framework.common.models import EmbeddingModel, LanguageModel, RerankModel, VisionModel, _ModelConfig
from heta_framework.common.secrets import Secret
from heta_framework.common.validators import OptionValueError, is_number, is_whole_number
from heta_framework.contracts.access import PUBLIC, AccessPolicy, AccessRule, check_principals
from heta_framework.errors import InvalidAccessError, RecipeError, UnknownNameError
from heta_framework.plugins.known import known_distribution

if TYPE_CHECKING:
    from heta_framework.plugins.registry import PluginRegistry

_MODEL_TYPES = {"embedding": EmbeddingModel, "language": LanguageModel, "reranker": RerankModel, "vision": VisionModel}


def _dict(value: Mapping[str, Any] | None) -> dict[str, Any]:
    return dict(value or {})


@attrs.frozen
class KnowledgeModels:
    """The recipe's models: one default per kind, plus named ones (``model_ref("language", "strong")``)."""

    language: LanguageModel | None = None
    embedding: EmbeddingModel | None = None
    reranker: RerankModel | None = None
    #: reads images and scanned PDF pages (ParseDocuments); see docs/concepts.md
    vision: VisionModel | None = None
    named: Mapping[str, Mapping[str, _ModelConfig]] = attrs.field(factory=dict, converter=_dict)

    def components(self) -> dict[str, _ModelConfig]:
        """``{"models.language": ..., "models.language.strong": ...}`` for every model present."""
        found: dict[str, _ModelConfig] = {}
        for kind in _MODEL_TYPES:
            model = getattr(self, kind)
            if model is not None:
                found[f"models.{kind}"] = model
        for kind, models in self.named.items():
            for name, model in models.items():
                found[f"models.{kind}.{name}"] = model
        return found


@attrs.frozen
class StoreConfig:
    """``[stores.vector] type = "faiss"`` plus that store type's own options."""

    type: str
    options: Mapping[str, Any] = attrs.field(factory=dict, converter=_dict)


@attrs.frozen
class ParserConfig:
    """``[parsers.documents]``: which registered parsers to use (all by default), and the settings of those
    that take some (``[parsers.documents.options.mineru] endpoint = "http://..."``), by parser name."""

    only: tuple[str, ...] = ()
    options: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict, converter=_dict)


@attrs.frozen
class ExecutorConfig:
    """``[executor] type = "ray"`` plus that executor's own options; no table: core's ``local`` executor."""

    type: str
    options: Mapping[str, Any] = attrs.field(factory=dict, converter=_dict)


@attrs.frozen
class Recipe:
    """What a knowledge base is built from. Steps run in order; procedures expand in place."""

    models: KnowledgeModels = attrs.field(factory=KnowledgeModels)
    stores: Mapping[str, StoreConfig] = attrs.field(factory=dict, converter=_dict)
    parsers: Mapping[str, ParserConfig] = attrs.field(factory=dict, converter=_dict)
    steps: tuple[Any, ...] = attrs.field(default=(), converter=tuple)
    #: default options per query mode (``[query.memory_search] weight_recency = 0.5``); a request's own
    #: options override them, and they apply to the mode asked for, not to the modes it composes
    query: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict, converter=_dict)
    #: where fanned-out work runs (``heta_framework.contracts.executor``); ``None``: in this process
    executor: ExecutorConfig | None = None
    #: who reads documents without an access list of their own, and access lists by path (``[access]``)
    access: AccessPolicy = attrs.field(factory=AccessPolicy)

    def query_defaults(self, mode: str) -> dict[str, Any]:
        """The recipe's default options for ``mode`` (empty when it sets none)."""
        return dict(self.query.get(mode, {}))

    # --- serialisation -------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain data for TOML/JSON. API key *values* are never included."""
        return _unstructure_recipe(self, include_secrets=False)

    def summary(self) -> dict[str, Any]:
        """A readable description for reports and logs; secrets show as ``***``."""
        return _unstructure_recipe(self, include_secrets=False, mask=True)

    def to_toml(self) -> str:
        return tomli_w.dumps(_drop_none(self.to_dict()))

    def save(self, path: Path | str) -> None:
        from heta_framework.common.atomic import write_bytes_atomic

        write_bytes_atomic(Path(path), self.to_toml().encode("utf-8"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], registry: PluginRegistry) -> Recipe:
        return structure_recipe(data, registry)

    @classmethod
    def from_toml(cls, text: str, registry: PluginRegistry) -> Recipe:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise RecipeError(f"The recipe is not valid TOML: {exc}") from exc
        return structure_recipe(data, registry)

    @classmethod
    def load(cls, path: Path | str, registry: PluginRegistry) -> Recipe:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RecipeError(f"No recipe file at {path}. Create one with `heta init`.") from None
        return cls.from_toml(text, registry)


# --- the one converter -----------------------------------------------------------------

_converter = cattrs.Converter(forbid_extra_keys=True)
_converter.register_structure_hook(
    Secret, lambda value, _: value if isinstance(value, Secret) else Secret(value=str(value))
)


# cattrs' own hooks call int()/float()/str(): `chunk_size = true` would become 1 and
# `150.9` would become 150. A recipe value must already have the field's type.
def _strict_int(value: Any, _: Any) -> int:
    if not is_whole_number(value):
        raise ValueError(f"expected a whole number, got {value!r}")
    return int(value)


def _strict_float(value: Any, _: Any) -> float:
    if not is_number(value):
        raise ValueError(f"expected a number, got {value!r}")
    return float(value)


def _strict_str(value: Any, _: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {value!r}")  # noqa: TRY004  cattrs shows a ValueError's own text
    return value


def _strict_bool(value: Any, _: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")  # noqa: TRY004
    return value


for _type, _hook in ((int, _strict_int), (float, _strict_float), (str, _strict_str), (bool, _strict_bool)):
    _converter.register_structure_hook(_type, _hook)


def _structure_model(kind: str, data: Any, path: str) -> _ModelConfig:
    model_type = _MODEL_TYPES.get(kind)
    if model_type is None:
        raise _error(path, f"unknown model kind {kind!r}; use one of {', '.join(_MODEL_TYPES)}")
    if not isinstance(data, Mapping):
        raise _error(path, f"expected a table with model_name, got {type(data).__name__}")
    return _structure(data, model_type, path)


def _structure(data: Any, cls: type, path: str) -> Any:
    try:
        return _converter.structure(data, cls)
    except cattrs.BaseValidationError as exc:
        messages = cattrs.transform_error(exc, path=path, format_exception=_format_exception)
        raise _recipe_error(_with_field_paths(messages)) from None
    except OptionValueError as exc:  # a range check of the class's own validators: name the field
        raise _error(f"{path}.{exc.field}", f"invalid value: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise _error(path, str(exc)) from None


def _format_exception(exc: BaseException, type_: type | None) -> str:
    """cattrs' wording, plus the validator's own message (which says what is allowed)."""
    from cattrs.v import format_exception

    if isinstance(exc, OptionValueError):
        # raised by the class's own validator, so cattrs only knows the class's path: mark the field
        return f"invalid value: {exc}{_FIELD_MARK}{exc.field}"
    if isinstance(exc, ValueError) and type(exc) is ValueError and str(exc):
        return f"invalid value: {exc}"
    if isinstance(exc, cattrs.ForbiddenExtraKeysError) and attrs.has(exc.cl):
        return f"{format_exception(exc, type_)}{_closest_fields(exc.extra_fields, exc.cl)}"
    return format_exception(exc, type_)


_FIELD_MARK = "\x00field="


def _with_field_paths(messages: Iterable[str]) -> list[str]:
    """``"msg<mark>batch_size @ $.steps[2]"`` -> ``"msg @ $.steps[2].batch_size"``."""
    fixed = []
    for message in messages:
        text, mark, rest = message.partition(_FIELD_MARK)
        if mark:
            field, _, path = rest.partition(" @ ")
            message = f"{text} @ {path}.{field}"
        fixed.append(message)
    return fixed


def _closest_fields(extra: Iterable[str], cls: type) -> str:
    import difflib

    names = [field.name for field in attrs.fields(cls) if field.init]
    hints = [f"{key} -> {close[0]}" for key in sorted(extra) if (close := difflib.get_close_matches(key, names, n=1))]
    listing = ", ".join(names) or "(none)"
    return (f"; did you mean {', '.join(hints)}?" if hints else "") + f" (options: {listing})"


def _error(path: str, message: str) -> RecipeError:
    return _recipe_error([f"{message} @ {path}"])


def _recipe_error(problems: Iterable[str]) -> RecipeError:
    """One ``RecipeError`` listing every problem; ``.problems`` keeps them one per item."""
    problems = list(problems)
    error = RecipeError("Invalid recipe:\n" + "\n".join(f"  - {p}" for p in problems))
    error.problems = tuple(problems)  # type: ignore[attr-defined]
    return error


class _Problems:
    """Collects the problems of every part of a recipe, so all are reported at once."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def attempt(self, function: Any, *args: Any) -> Any:
        """``function(*args)``, or ``None`` after noting the ``RecipeError`` it raised."""
        try:
            return function(*args)
        except RecipeError as exc:
            self.found.extend(getattr(exc, "problems", None) or [str(exc)])
            return None

    def raise_if_any(self) -> None:
        if self.found:
            raise _recipe_error(self.found)


def _table(data: Mapping[str, Any], key: str, problems: _Problems, *, array: bool = False) -> Any:
    value = data.get(key, [] if array else {})
    wanted = (list, tuple) if array else Mapping
    if not isinstance(value, wanted):
        problems.found.append(f"expected {'an array of tables' if array else 'a table'}, got {type(value).__name__} @ $.{key}")
        return [] if array else {}
    return value


def structure_recipe(data: Mapping[str, Any], registry: PluginRegistry) -> Recipe:
    """The ``Recipe`` for ``data``; a ``RecipeError`` listing *every* structural problem, each with its field path."""
    problems = _Problems()
    known = {"models", "stores", "parsers", "steps", "query", "executor", "access"}
    extra = sorted(set(data) - known)
    if extra:
        problems.found.append(f"unknown top-level key(s) {', '.join(extra)}; a recipe has {', '.join(sorted(known))} @ $")

    models_data = dict(_table(data, "models", problems))
    named_data = models_data.pop("named", {})
    defaults = {kind: problems.attempt(_structure_model, kind, value, f"$.models.{kind}") for kind, value in models_data.items()}
    named: dict[str, dict[str, Any]] = {}
    for kind, entries in named_data.items():
        if not isinstance(entries, Mapping):
            problems.found.append(f"expected a table of named models @ $.models.named.{kind}")
            continue
        named[kind] = {
            name: problems.attempt(_structure_model, kind, value, f"$.models.named.{kind}.{name}") for name, value in entries.items()
        }

    stores = {}
    for slot, value in _table(data, "stores", problems).items():
        if not isinstance(value, Mapping) or "type" not in value:
            problems.found.append(f"a store needs a 'type' (for example type = \"faiss\") @ $.stores.{slot}")
            continue
        options = {k: v for k, v in value.items() if k != "type"}
        store = StoreConfig(type=value["type"], options=options)
        problems.attempt(validate_store_options, slot, store, registry, f"$.stores.{slot}")
        stores[slot] = store

    parsers = {
        name: problems.attempt(_structure, value, ParserConfig, f"$.parsers.{name}")
        for name, value in _table(data, "parsers", problems).items()
    }
    for name, parsers_config in parsers.items():
        for parser_name, options in (parsers_config.options if isinstance(parsers_config, ParserConfig) else {}).items():
            problems.attempt(parser_config, parser_name, options, registry, f"$.parsers.{name}.options.{parser_name}")
    steps = tuple(
        problems.attempt(structure_step, entry, registry, f"$.steps[{i}]")
        for i, entry in enumerate(_table(data, "steps", problems, array=True))
    )
    query = {
        mode: problems.attempt(validate_query_defaults, mode, value, registry, f"$.query.{mode}")
        for mode, value in _table(data, "query", problems).items()
    }
    executor = None
    if "executor" in data:
        value = _table(data, "executor", problems)
        if value and "type" not in value:
            problems.found.append('the executor needs a \'type\' (for example type = "ray") @ $.executor')
        elif value:
            executor = ExecutorConfig(type=value["type"], options={k: v for k, v in value.items() if k != "type"})
            problems.attempt(validate_executor_options, executor, registry, "$.executor")
    access = problems.attempt(structure_access, _table(data, "access", problems), "$.access") or AccessPolicy()
    problems.raise_if_any()
    return Recipe(
        models=KnowledgeModels(**defaults, named=named), stores=stores, parsers=parsers, steps=steps, query=query, executor=executor,
        access=access,
    )


def structure_access(data: Mapping[str, Any], path: str) -> AccessPolicy:
    """``[access] default = [...]`` and ``[[access.rules]] glob = "..." principals = [...]``."""
    extra = sorted(set(data) - {"default", "rules"})
    if extra:
        raise _error(path, f"unknown key(s) {', '.join(extra)}; [access] has default and rules")
    try:
        default = check_principals(_principal_list(data.get("default", [PUBLIC]), f"{path}.default"), what="[access] default")
    except InvalidAccessError as exc:
        raise _error(f"{path}.default", str(exc)) from None
    rules = []
    for i, rule in enumerate(data.get("rules", [])):
        where = f"{path}.rules[{i}]"
        if not isinstance(rule, Mapping) or set(rule) != {"glob", "principals"} or not isinstance(rule["glob"], str) or not rule["glob"]:
            raise _error(where, 'a rule is a table with a glob and its principals, e.g. { glob = "hr/**", principals = ["group:hr"] }')
        try:
            rules.append(AccessRule(glob=rule["glob"], principals=_principal_list(rule["principals"], f"{where}.principals")))
        except InvalidAccessError as exc:
            raise _error(f"{where}.principals", str(exc)) from None
    return AccessPolicy(default=default, rules=rules)


def _principal_list(value: Any, path: str) -> list[str]:
    if not isinstance(value, list):
        raise _error(path, f'expected a list of principals such as ["public"] or ["group:hr"], got {type(value).__name__}')
    return value


def structure_step(entry: Mapping[str, Any], registry: PluginRegistry, path: str) -> Any:
    """``{"step": "embed_chunks", "batch_size": 64}`` -> ``EmbedChunks(batch_size=64)`` (or a procedure)."""
    if not isinstance(entry, Mapping) or "step" not in entry:
        raise _error(path, "each [[steps]] entry needs a 'step' name (for example step = \"parse_documents\")")
    name = entry["step"]
    options = {k: v for k, v in entry.items() if k != "step"}
    try:
        cls = registry.items["procedures"].get(name) or registry.step_class(name)
    except UnknownNameError as exc:
        raise _error(path, str(exc)) from None
    if not attrs.has(cls):
        if options:
            raise _error(path, f"step {name!r} takes no options")
        return cls()
    return _structure(options, cls, path)


def unstructure_step(step: Any) -> dict[str, Any]:
    if not attrs.has(type(step)):
        return {"step": step.name}
    values = {
        field.name: getattr(step, field.name)
        for field in attrs.fields(type(step))
        if field.init and getattr(step, field.name) != field.default
    }
    return {"step": step.name, **_converter.unstructure(values)}


def validate_store_options(slot: str, store: StoreConfig, registry: PluginRegistry, path: str) -> Any:
    """Build the store type's config object from the recipe's options; unknown options are errors."""
    try:
        store_type = registry.store_type(slot.split(".")[0], store.type)
    except UnknownNameError as exc:
        raise _error(path, str(exc)) from None
    if store_type.config_type is None:
        if store.options:
            raise _error(path, f"store type {store.type!r} takes no options")
        return None
    return _structure(dict(store.options), store_type.config_type, path)


def validate_executor_options(executor: ExecutorConfig | None, registry: PluginRegistry, path: str = "$.executor") -> Any:
    """The executor type's config object from the recipe's ``[executor]`` options; unknown options are errors."""
    try:
        executor_type = registry.executor_type(None if executor is None else executor.type)
    except UnknownNameError as exc:
        raise _error(path, str(exc)) from None
    options = dict(executor.options) if executor is not None else {}
    if executor_type.config_type is None:
        if options:
            raise _error(path, f"executor {executor_type.name!r} takes no options")
        return None
    return _structure(options, executor_type.config_type, path)


def validate_query_defaults(mode: str, options: Any, registry: PluginRegistry, path: str) -> dict[str, Any]:
    """A ``[query.MODE]`` table checked as that mode would check a request's options (so a typo fails at load)."""
    from heta_framework.contracts.query_options import COMMON_OPTIONS, CommonQueryOptions, options_type_of, parse_options
    from heta_framework.errors import InvalidQueryError

    if not isinstance(options, Mapping):
        raise _error(path, f"expected a table of {mode} options, got {type(options).__name__}")
    try:
        engine = registry.query_engine(mode)
    except UnknownNameError as exc:
        raise _error(path, str(exc)) from None
    options = dict(options)
    try:
        CommonQueryOptions(**{key: value for key, value in options.items() if key in COMMON_OPTIONS})
        parse_options(options_type_of(engine), options, mode=mode)
    except OptionValueError as exc:
        raise _error(f"{path}.{exc.field}", f"invalid value: {exc}") from None
    except InvalidQueryError as exc:
        raise _error(path, str(exc)) from None
    return options


def _unstructure_model(model: _ModelConfig, *, include_secrets: bool, mask: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"model_name": model.model_name}
    if model.api_key is not None:
        if mask:
            data["api_key"] = "***"
        elif include_secrets:
            data["api_key"] = model.api_key.reveal()
    for field in ("api_key_env", "base_url"):
        if getattr(model, field):
            data[field] = getattr(model, field)
    if model.options:
        data["options"] = dict(model.options)
    if model.prices is not None:
        data["prices"] = {"input": model.prices.input, "output": model.prices.output}
    return data


def parser_config(parser_name: str, options: Any, registry: PluginRegistry, path: str) -> Any:
    """The settings of a parser from the recipe's ``[parsers.documents.options.<name>]``: an installed
    parser that takes settings, and only the ones its ``config_type`` declares (nothing is contacted)."""
    found = {parser.name: parser for parser in registry.parsers}
    parser = found.get(parser_name)
    if parser is None:
        hint = f"; pip install {dist}" if (dist := known_distribution(parser_name)) else ""
        raise _error(path, f"no parser named {parser_name!r} is installed (installed: {', '.join(sorted(found)) or 'none'}){hint}")
    if parser.config_type is None or parser.configure is None:
        raise _error(path, f"the parser {parser_name!r} takes no options")
    if not isinstance(options, Mapping):
        raise _error(path, f"the options of the parser {parser_name!r} must be a table")
    return _structure(dict(options), parser.config_type, path)


def _unstructure_recipe(recipe: Recipe, *, include_secrets: bool, mask: bool = False) -> dict[str, Any]:
    models: dict[str, Any] = {}
    for kind in _MODEL_TYPES:
        model = getattr(recipe.models, kind)
        if model is not None:
            models[kind] = _unstructure_model(model, include_secrets=include_secrets, mask=mask)
    if recipe.models.named:
        models["named"] = {
            kind: {name: _unstructure_model(m, include_secrets=include_secrets, mask=mask) for name, m in entries.items()}
            for kind, entries in recipe.models.named.items()
        }
    data: dict[str, Any] = {}
    if models:
        data["models"] = models
    if recipe.stores:
        data["stores"] = {slot: {"type": s.type, **dict(s.options)} for slot, s in recipe.stores.items()}
    if recipe.parsers:
        # an empty options table is left out, so recipes written before parsers took options read the same
        data["parsers"] = {name: {k: v for k, v in _converter.unstructure(p).items() if k != "options" or v} for name, p in recipe.parsers.items()}
    data["steps"] = [unstructure_step(step) for step in recipe.steps]
    if recipe.query:
        data["query"] = {mode: dict(options) for mode, options in recipe.query.items()}
    if recipe.executor is not None:
        data["executor"] = {"type": recipe.executor.type, **dict(recipe.executor.options)}
    if recipe.access != AccessPolicy():
        data["access"] = recipe.access.to_dict()
    return data


def _drop_none(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_drop_none(v) for v in value]
    return value


def expand_steps(steps: Iterable[Any]) -> list[Any]:
    """Replace each procedure by the steps it expands to (procedures never run anything)."""
    expanded: list[Any] = []
    for step in steps:
        if hasattr(step, "expand") and not hasattr(step, "run"):
            expanded.extend(expand_steps(step.expand()))
        else:
            expanded.append(step)
    return expanded
