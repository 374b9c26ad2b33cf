"""heta-plugin-example: the ``index_titles`` build step and the ``title_search`` query mode.

This module is the plugin: ``pyproject.toml`` names it under the ``heta``
entry-point group, and Heta calls the ``@hookimpl`` functions below with a
``register`` callback. See README.md for the walk-through.
"""

from __future__ import annotations

from heta_framework.plugins import hookimpl

from heta_plugin_example.engine import TitleSearchEngine
from heta_plugin_example.step import TITLE_INDEX_ASSET, IndexTitles

__version__ = "0.1.0"
__all__ = ["IndexTitles", "TITLE_INDEX_ASSET", "TitleSearchEngine"]


@hookimpl
def register_steps(register):
    # A step is registered as a class: recipes build it from `step = "index_titles"` plus its attrs fields.
    register(IndexTitles)


@hookimpl
def register_query_engines(register):
    # An engine is registered as an instance: one serves every knowledge base, so it keeps no state.
    register(TitleSearchEngine())
