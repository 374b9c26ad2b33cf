"""heta-plugin-wiki: a readable wiki page per document, searchable, and tool-calling search over a knowledge base.

Steps (recipe names) ``build_wiki_pages``, ``split_wiki_pages``, ``index_wiki_pages`` (``wiki/steps.py``); modes
``wiki_vector_search``, ``wiki_full_text_search``, ``wiki_hybrid_search`` (``wiki/engines.py``), and the tool-calling
modes ``agent_search`` and ``wiki_agent_search`` (``agent/``), which need a language model with tool calling. The
package itself is the plugin module the ``heta`` entry point names.
"""

from __future__ import annotations

from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_wiki.agent.engine import AgentSearchEngine, WikiAgentSearchEngine
from heta_plugin_wiki.agent.options import AgentOptions
from heta_plugin_wiki.wiki.engines import WikiFullTextSearchEngine, WikiHybridSearchEngine, WikiVectorSearchEngine
from heta_plugin_wiki.wiki.steps import BuildWikiPages, IndexWikiPages, SplitWikiPages

__all__ = ["AgentOptions", "AgentSearchEngine", "BuildWikiPages", "IndexWikiPages", "SplitWikiPages", "WikiAgentSearchEngine",
           "WikiFullTextSearchEngine", "WikiHybridSearchEngine", "WikiVectorSearchEngine", "register_query_engines",
           "register_steps"]


@hookimpl
def register_steps(register):
    for step in (BuildWikiPages, SplitWikiPages, IndexWikiPages):
        register(step)


@hookimpl
def register_query_engines(register):
    for engine in (AgentSearchEngine(), WikiAgentSearchEngine(), WikiVectorSearchEngine(), WikiFullTextSearchEngine(),
                   WikiHybridSearchEngine()):
        register(engine)
