"""Heta: build knowledge bases from documents and answer retrieval queries over them.

The folder tree is the architecture:

- ``kb/``       recipes, steps, search protocols, the runner and ``KnowledgeBase``
- ``common/``   model configuration, secrets, retries: shared by every plugin
- ``plugins/``  hook specifications and the ``PluginRegistry``
- ``builtin/``  core's own plugin: parsing, splitting, SQLite chunks, composed query modes
- ``cli/``      the ``heta`` command
"""

__version__ = "0.1.0"
