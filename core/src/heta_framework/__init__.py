"""Heta: build knowledge bases from documents and answer retrieval queries over them.

The folder tree is the architecture:

- ``kb/``       recipes, steps, search protocols, the runner and ``KnowledgeBase``
- ``common/``   model configuration, secrets, retries: shared by every plugin
- ``plugins/``  hook specifications and the ``PluginRegistry``
- ``builtin/``  core's own plugin: parsing, splitting, SQLite chunks, composed query modes
- ``cli/``      the ``heta`` command
"""

__version__ = "0.1.0"

# before anything imports sqlite3: lets reader threads' SQLite statements run in parallel (see the module)
from heta_framework.common.sqlite_threads import turn_off_memory_statistics as _turn_off_sqlite_memory_statistics

_turn_off_sqlite_memory_statistics()
