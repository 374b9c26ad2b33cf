"""Where the store opens, how it logs in (the token never shows), names and filter expressions."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

import numpy as np
import pytest
from heta_framework.errors import RecipeError, StoreConnectionError
from heta_framework.kb import Recipe
from heta_framework.kb.starter import starter_recipe_toml
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.testing.conformance.samples import HOSTILE_STRINGS
from heta_plugin_milvus.config import MilvusVectorConfig
from heta_plugin_milvus.connection import lite_path, open_client, redact_uri
from heta_plugin_milvus.expressions import filter_expression
from heta_plugin_milvus.vector_store import MilvusVectorStore, milvus_name, prefix_for

SECRET = "root:s3cret-Pa55word"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_relative_lite_uri_is_a_file_inside_the_knowledge_base(tmp_path):
    root = tmp_path / "kb"
    path = lite_path(MilvusVectorConfig(uri="deep/er/vectors.db"), root)
    assert path == root / "deep" / "er" / "vectors.db" and path.parent.is_dir()
    absolute = tmp_path / "elsewhere" / "v.db"
    assert lite_path(MilvusVectorConfig(uri=str(absolute)), root) == absolute
    with pytest.raises(RecipeError, match=r"must end in \.db"):
        lite_path(MilvusVectorConfig(uri="vectors.sqlite"), root)


def test_the_store_writes_its_lite_file_where_the_uri_says(tmp_path):
    store = MilvusVectorStore.open(MilvusVectorConfig(uri="mv/x.db"), tmp_path / "kb")
    try:
        store.collection("chunks", dimension=4).upsert(["a"], np.eye(4, dtype=np.float32)[:1], [{}])
        store.flush()
    finally:
        store.close()
    assert (tmp_path / "kb" / "mv" / "x.db").exists()


def test_options_are_checked():
    with pytest.raises(ValueError, match="index must be one of"):
        MilvusVectorConfig(index="DISKANN")
    with pytest.raises(ValueError, match="collection_prefix"):
        MilvusVectorConfig(collection_prefix="bad-prefix; drop")
    with pytest.raises(ValueError, match="token_env"):
        MilvusVectorConfig(token_env="$TOKEN")
    assert MilvusVectorConfig(uri="https://milvus.example:443").is_server
    assert not MilvusVectorConfig(uri="/srv/kb/vectors.db").is_server


def test_a_recipe_names_the_milvus_store_and_rejects_unknown_options():
    registry = PluginRegistry.from_entry_points(strict=True)
    base = starter_recipe_toml(registry)
    recipe = Recipe.from_toml(base + '\n[stores.vector]\ntype = "milvus"\nindex = "HNSW"\nef_search = 64\n', registry)
    assert recipe is not None
    with pytest.raises(RecipeError, match="ef_serch"):
        Recipe.from_toml(base + '\n[stores.vector]\ntype = "milvus"\nef_serch = 64\n', registry)


def test_collection_names_are_validated_and_kept_apart():
    assert milvus_name("heta_kb", "chunks") == "heta_kb_chunks"
    dashed, dotted = milvus_name("p", "a-b"), milvus_name("p", "a.b")
    assert dashed != dotted and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", dashed) and re.fullmatch(r"[A-Za-z_]\w*", dotted)
    for bad in ("../up", "", "a b", "-x", "x" * 200):
        with pytest.raises(Exception, match="Invalid vector collection name"):
            milvus_name("p", bad)
    assert prefix_for(Path("/x/My KB-2")) == "heta_My_KB_2"
    assert len(prefix_for(Path("/x") / ("n" * 90))) <= 60 and prefix_for(Path("/x") / ("n" * 90)) != prefix_for(Path("/x") / ("n" * 91))


def test_two_prefixes_share_one_file_without_seeing_each_other(tmp_path):
    uri = str(tmp_path / "shared.db")
    first = MilvusVectorStore.open(MilvusVectorConfig(uri=uri, collection_prefix="kb_one"), tmp_path / "one")
    try:
        first.collection("chunks", dimension=4).upsert(["a"], np.eye(4, dtype=np.float32)[:1], [{}])
        second = MilvusVectorStore(first._client, MilvusVectorConfig(uri=uri, collection_prefix="kb_two"), "kb_two",
                                   tmp_path / "two")
        assert first.has_collection("chunks") and not second.has_collection("chunks")
    finally:
        first.close()


def test_filter_expressions_hold_no_user_text():
    for text in HOSTILE_STRINGS:
        for filters in ({"document_id": text}, {text: text}, {"id": [text, "x"]}, {"k": [text, 1, True]}):
            expression = filter_expression(filters)
            assert expression and text not in expression
            # digests, field names and operators only: nothing a parser could misread
            assert re.fullmatch(r'[\w\s"(),\[\]]+', expression), expression
    assert filter_expression({"document_id": []}) is None
    assert filter_expression({}) == ""
    assert filter_expression({"n": 1}) == filter_expression({"n": 1.0}) != filter_expression({"n": "1"})
    assert filter_expression({"n": 1}) != filter_expression({"n": True})


def test_a_missing_token_variable_is_named_not_guessed(tmp_path, monkeypatch):
    monkeypatch.delenv("HETA_TEST_MILVUS_TOKEN", raising=False)
    config = MilvusVectorConfig(uri="http://127.0.0.1:1", token_env="HETA_TEST_MILVUS_TOKEN")
    with pytest.raises(StoreConnectionError, match=r"\$HETA_TEST_MILVUS_TOKEN, which is not set"):
        open_client(config, tmp_path)


def test_an_unreachable_server_names_host_and_port_never_the_token(tmp_path, monkeypatch, caplog):
    port = free_port()
    monkeypatch.setenv("HETA_TEST_MILVUS_TOKEN", SECRET)
    config = MilvusVectorConfig(uri=f"http://user:{SECRET}@127.0.0.1:{port}", token_env="HETA_TEST_MILVUS_TOKEN",
                                timeout=2.0)
    started = time.monotonic()
    with pytest.raises(StoreConnectionError) as caught:
        MilvusVectorStore.open(config, tmp_path / "kb")
    message = str(caught.value)
    assert f"http://127.0.0.1:{port}" in message and "is running and reachable" in message
    assert SECRET not in message and "s3cret" not in caplog.text and caught.value.__cause__ is None
    assert time.monotonic() - started < 30
    assert redact_uri(f"https://u:{SECRET}@h.example:19530/db?x=1") == "https://h.example:19530"


def test_a_lite_file_open_in_another_process_is_a_clear_error(tmp_path):
    import subprocess
    import sys

    uri = tmp_path / "held.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", f"from pymilvus import MilvusClient; c = MilvusClient({str(uri)!r}); print('open', flush=True); "
                               "import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(StoreConnectionError, match="one process at a time"):
            MilvusVectorStore.open(MilvusVectorConfig(uri=str(uri)), tmp_path / "kb")
    finally:
        holder.communicate("")
    MilvusVectorStore.open(MilvusVectorConfig(uri=str(uri)), tmp_path / "kb").close()
