"""Tool-calling search: a bounded loop in which a language model calls tools, then a synthesis grounded in what the
tools returned. ``loop`` runs any set of tools; ``kb_tools`` and ``heta_plugin_wiki.wiki_tools`` are the two sets;
``engine`` turns them into the ``agent_search`` and ``wiki_agent_search`` modes."""
