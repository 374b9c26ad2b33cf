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

from heta_framework.common.models import EmbeddingModel, LanguageModel, RerankModel, _ModelConfig
from heta_framework.common.secrets import Secret
from heta_framework.errors import RecipeError, UnknownNameError

if TYPE_CHECKING:
    from heta_framework.plugins.registry import PluginRegistry

_MODEL_TYPES = {"embedding": EmbeddingModel, "language": LanguageModel, "reranker": RerankModel}


def _dict(value: Mapping[str, Any] | None) -> dict[str, Any]:
    return dict(value or {})


@attrs.frozen
class KnowledgeModels:
    """The recipe's models: one default per kind, plus named ones (``model_ref("language", "strong")``)."""

    language: LanguageModel | None = None
    embedding: EmbeddingModel | None = None
    reranker: RerankModel | None = None
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
    """``[parsers.documents]``: which registered parsers to use (all by default)."""

    only: tuple[str, ...] = ()


@attrs.frozen
class Recipe:
    """What a knowledge base is built from. Steps run in order; procedures expand in place."""

    models: KnowledgeModels = attrs.field(factory=KnowledgeModels)
    stores: Mapping[str, StoreConfig] = attrs.field(factory=dict, converter=_dict)
    parsers: Mapping[str, ParserConfig] = attrs.field(factory=dict, converter=_dict)
    steps: tuple[Any, ...] = attrs.field(default=(), converter=tuple)

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
        from heta_framework.kb.atomic import write_bytes_atomic

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
        raise RecipeError("Invalid recipe:\n" + "\n".join(f"  - {m}" for m in messages)) from None
    except (TypeError, ValueError) as exc:
        raise _error(path, str(exc)) from None


def _format_exception(exc: BaseException, type_: type | None) -> str:
    """cattrs' wording, plus the validator's own message (which says what is allowed)."""
    from cattrs.v import format_exception

    if isinstance(exc, ValueError) and type(exc) is ValueError and str(exc):
        return f"invalid value: {exc}"
    return format_exception(exc, type_)


def _error(path: str, message: str) -> RecipeError:
    return RecipeError(f"Invalid recipe:\n  - {message} @ {path}")


def structure_recipe(data: Mapping[str, Any], registry: PluginRegistry) -> Recipe:
    known = {"models", "stores", "parsers", "steps"}
    extra = sorted(set(data) - known)
    if extra:
        raise _error("$", f"unknown top-level key(s) {', '.join(extra)}; a recipe has {', '.join(sorted(known))}")

    models_data = dict(data.get("models", {}))
    named_data = models_data.pop("named", {})
    defaults = {kind: _structure_model(kind, value, f"$.models.{kind}") for kind, value in models_data.items()}
    named = {
        kind: {name: _structure_model(kind, value, f"$.models.named.{kind}.{name}") for name, value in entries.items()}
        for kind, entries in named_data.items()
    }
    models = KnowledgeModels(**defaults, named=named)

    stores = {}
    for slot, value in data.get("stores", {}).items():
        if not isinstance(value, Mapping) or "type" not in value:
            raise _error(f"$.stores.{slot}", "a store needs a 'type' (for example type = \"faiss\")")
        options = {k: v for k, v in value.items() if k != "type"}
        store = StoreConfig(type=value["type"], options=options)
        validate_store_options(slot, store, registry, f"$.stores.{slot}")
        stores[slot] = store

    parsers = {name: _structure(value, ParserConfig, f"$.parsers.{name}") for name, value in data.get("parsers", {}).items()}
    steps = tuple(structure_step(entry, registry, f"$.steps[{i}]") for i, entry in enumerate(data.get("steps", ())))
    return Recipe(models=models, stores=stores, parsers=parsers, steps=steps)


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
    return data


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
        data["parsers"] = {name: _converter.unstructure(p) for name, p in recipe.parsers.items()}
    data["steps"] = [unstructure_step(step) for step in recipe.steps]
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
