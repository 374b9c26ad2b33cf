"""Heta: build knowledge bases from documents and answer retrieval queries over them.

The folder tree is the architecture, in layers; each imports only from those below it
(docs/architecture.md, checked by tests/test_architecture.py):

- ``common/``, ``text/``, ``errors``  utilities with no idea of a knowledge base
- ``contracts/``   value types and protocols: documents, steps, search requests and results, stores, state
- ``plugins/``     hook specifications, the ``PluginRegistry``, the query-engine registry
- ``builtin/``     core's own plugin: parsing, splitting, SQLite chunks, composed query modes
- ``runtime/``     recipes, the step runner and its context, source walking, compaction
- ``kb/``          ``KnowledgeBase`` (its parts in ``kb/parts/``) and the public import paths
- ``evaluation/``, ``testing/``, ``cli/``  ``heta eval``, tools for plugin authors, the ``heta`` command
"""

__version__ = "0.1.0"

# before anything imports sqlite3: lets reader threads' SQLite statements run in parallel (see the module)
from heta_framework.common.sqlite_threads import turn_off_memory_statistics as _turn_off_sqlite_memory_statistics

_turn_off_sqlite_memory_statistics()
