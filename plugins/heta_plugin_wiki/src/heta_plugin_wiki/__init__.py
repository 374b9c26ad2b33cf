"""heta-plugin-wiki: a readable wiki page per document, searchable, and tool-calling search over a knowledge base.

Steps (recipe names) ``build_wiki_pages``, ``index_wiki_pages``; modes ``wiki_vector_search``, ``wiki_full_text_search``,
``wiki_hybrid_search`` (``wiki/``), and the tool-calling modes ``agent_search`` and ``wiki_agent_search``
(``agent/``), which need a language model with tool calling. The package itself is the plugin module the ``heta``
entry point names.
"""

from __future__ import annotations

from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_wiki.agent.engine import AgentSearchEngine
from heta_plugin_wiki.agent.options import AgentOptions

__all__ = ["AgentOptions", "AgentSearchEngine", "register_query_engines"]


@hookimpl
def register_query_engines(register):
    register(AgentSearchEngine())
