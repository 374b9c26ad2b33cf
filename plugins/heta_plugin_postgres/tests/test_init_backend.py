"""`heta init --backend postgres` writes a recipe whose every store is on the server, and it builds and answers."""

from __future__ import annotations

import asyncio
import uuid

from click.testing import CliRunner
from heta_framework.cli.main import cli
from heta_framework.kb import KnowledgeBase, SourceDocument
from heta_plugin_postgres.connection import namespace_for
from heta_plugin_postgres.testing import drop_schema


def test_init_backend_postgres_puts_every_store_on_the_server(tmp_path, postgres_env):
    folder = tmp_path / f"kb_{uuid.uuid4().hex[:8]}"
    result = CliRunner().invoke(cli, ["--kb", str(folder), "init", "--backend", "postgres"])
    assert result.exit_code == 0, result.output
    recipe = (folder / "recipe.toml").read_text()
    assert postgres_env not in recipe  # the recipe names the variable, never the connection string
    kb = KnowledgeBase.load(folder)
    try:
        assert {slot: store.type for slot, store in kb.recipe.stores.items()} == dict.fromkeys(
            ("graph", "objects", "sql", "state", "text", "vector"), "postgres")
        assert all(store.options["dsn_env"] == "HETA_POSTGRES_DSN" for store in kb.recipe.stores.values())
        asyncio.run(kb.build([SourceDocument(id="whales", name="whales.txt", text="Whales breathe air through a blowhole."),
                              SourceDocument(id="tea", name="tea.txt", text="White tea is withered and dried.")]))
        assert asyncio.run(kb.query("blowhole", mode="full_text_search")).results[0].document_id == "whales"
        assert not (folder / "chunks.sqlite").exists() and not (folder / "vectors").exists()  # nothing of it on disk
        # the state too: the catalog, run record and caches are rows of the KB's schema, the folder holds the recipe
        assert sorted(path.name for path in folder.iterdir()) == ["recipe.toml"]
        assert set(kb.documents) == {"whales", "tea"} and kb.state.read_run_record() is not None
    finally:
        kb.close()
        drop_schema(postgres_env, namespace_for(folder))


def test_init_refuses_backend_options_with_a_recipe_file(tmp_path):
    recipe = tmp_path / "recipe.toml"
    recipe.write_text('[[steps]]\nstep = "parse_documents"\n')
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path / "kb"), "init", "--recipe", str(recipe), "--backend", "postgres"])
    assert result.exit_code != 0 and "--backend" in result.output
