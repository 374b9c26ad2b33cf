"""Finding the plugins imports no heavy library: every `heta` command, server start and test process pays for it.

Discovery imports each plugin's registration module. A plugin that imported torch,
an API client or a graph library at the top of those modules would add seconds to
``heta --help`` and ``heta documents``; those libraries load where a model, client
or store is created instead. A fresh interpreter per check, so nothing this test
process already imported hides an import.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: libraries that take a second or more to import here, each used by some plugin only once it works
HEAVY = ("torch", "transformers", "sentence_transformers", "openai", "igraph", "leidenalg", "matplotlib",
         "pandas", "pymilvus", "ray", "tantivy", "jieba", "mcp", "opentelemetry.sdk", "pptx", "pypdf", "httpx", "cohere", "bs4")

_PROBE = """
import json, sys
{setup}
print(json.dumps(sorted(name for name in {heavy!r} if name in sys.modules)))
"""


def _heavy_after(setup: str) -> list[str]:
    code = _PROBE.format(setup=setup, heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_discovering_every_plugin_imports_no_heavy_library():
    setup = ("from heta_framework.plugins.registry import PluginRegistry\n"
             "registry = PluginRegistry.from_entry_points(strict=True)\n"
             "assert registry.items[\"steps\"] and registry.items[\"query_engines\"]")
    assert _heavy_after(setup) == []


@pytest.mark.parametrize("argv", [["--help"], ["plugins", "--json"]])
def test_cli_commands_that_need_no_model_import_no_heavy_library(argv):
    setup = ("import contextlib, io\n"
             "from heta_framework.cli.main import cli\n"
             "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
             f"    cli({argv!r}, standalone_mode=False)")
    assert _heavy_after(setup) == []


def test_the_probe_sees_a_heavy_import():
    """The check itself works: a library imported in setup is reported."""
    assert _heavy_after("import leidenalg") == ["igraph", "leidenalg", "matplotlib"]  # igraph draws with matplotlib
