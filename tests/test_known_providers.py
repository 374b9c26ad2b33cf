"""``heta validate`` and ``heta modes`` name the distribution that provides a missing step, store or mode.

The table they read (``heta_framework.plugins.known``) is written by hand, so this checks it
against what every installed first-party plugin really registers.
"""

from __future__ import annotations

import pytest
from heta_framework.errors import RecipeError
from heta_framework.kb import Recipe
from heta_framework.plugins.known import KNOWN_MODES, KNOWN_PROVIDERS, known_distribution
from heta_framework.plugins.registry import PluginRegistry

#: distributions whose names need no install hint: core itself, and the example plugin for plugin authors
NOT_LISTED = {"heta-core", "heta-plugin-example", ""}


def test_every_first_party_step_store_and_mode_names_its_distribution():
    registry = PluginRegistry.from_entry_points(strict=True)
    missing, wrong = [], []
    for category in ("steps", "procedures", "query_engines", "stores", "executors"):
        for name in registry.items[category]:
            owner = registry.owner(category, name)
            if owner in NOT_LISTED:
                continue
            base = name.split(":")[-1]  # a store is registered as "slot:type"
            if base not in KNOWN_PROVIDERS:
                missing.append(f"{category} {name} ({owner})")
            elif owner not in KNOWN_PROVIDERS[base]:
                wrong.append(f"{category} {name}: {KNOWN_PROVIDERS[base]} but {owner} registers it")
    assert not missing and not wrong
    modes = {name for name, engine in registry.items["query_engines"].items() if registry.owner("query_engines", name) not in NOT_LISTED}
    assert modes <= set(KNOWN_MODES)
    assert all(known_distribution(mode) for mode in KNOWN_MODES)


def test_a_recipe_naming_what_is_not_installed_says_what_to_install():
    core_only = PluginRegistry.from_plugins()
    recipe = """
[stores.vector]
type = "milvus"

[[steps]]
step = "parse_documents"

[[steps]]
step = "detect_communities"
"""
    with pytest.raises(RecipeError) as raised:
        Recipe.from_toml(recipe, core_only)
    problems = "\n".join(raised.value.problems)
    assert "'vector:milvus'" in problems and "heta-plugin-milvus" in problems
    assert "'detect_communities'" in problems and "heta-plugin-graphrag" in problems
