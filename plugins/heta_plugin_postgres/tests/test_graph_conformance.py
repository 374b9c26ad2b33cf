"""The postgres graph store passes core's graph-store suite on a real server, and its lookups use indexes."""

from __future__ import annotations

import psycopg
import pytest
from heta_framework.testing.conformance import GraphStoreSuite
from heta_framework.testing.conformance.graph import Draft, Entity, Relation, evidence
from heta_plugin_postgres.graph_store import PostgresGraphConfig, PostgresGraphStore


class TestPostgresGraphStore(GraphStoreSuite):
    server_backed = True

    @pytest.fixture
    def store_factory(self, postgres_namespace):
        config = PostgresGraphConfig(namespace=postgres_namespace)
        return lambda root: PostgresGraphStore.open(config, root)


def _plan(dsn: str, statement: str, *params) -> str:
    with psycopg.connect(dsn) as conn:
        # a small table is cheaper to scan than to probe: forbid sequential scans to ask "is there an index for this"
        conn.execute("SET enable_seqscan = off")
        return "\n".join(row[0] for row in conn.execute("EXPLAIN " + statement, params))


def test_entity_and_relation_lookups_use_indexes(postgres_env, postgres_namespace, tmp_path):
    store = PostgresGraphStore.open(PostgresGraphConfig(namespace=postgres_namespace), tmp_path / "kb")
    entities = tuple(Entity(f"e{i}", f"E{i}", evidence=evidence(f"d{i % 5}:{i}")) for i in range(200))
    relations = tuple(Relation(f"r{i}", f"e{i}", f"e{i + 1}", evidence=evidence(f"d{i % 5}:{i}")) for i in range(199))
    store.write_draft(Draft(entities, relations), [])
    with psycopg.connect(postgres_env) as conn:
        conn.execute(f'ANALYZE "{postgres_namespace}".graph_entities')
    schema = f'"{postgres_namespace}"'
    lookups = {
        f"SELECT * FROM {schema}.graph_entities WHERE id = ANY(%s)": (["e1", "e2"],),
        f"SELECT * FROM {schema}.graph_relations WHERE source_id = ANY(%s)": (["e1"],),
        f"SELECT * FROM {schema}.graph_relations WHERE target_id = ANY(%s)": (["e1"],),
        f"SELECT * FROM {schema}.graph_evidence WHERE fact_kind = 'entity' AND fact_id = ANY(%s)": (["e1"],),
        f"SELECT * FROM {schema}.graph_evidence WHERE document_id = ANY(%s)": (["d1"],),
        f"SELECT * FROM {schema}.graph_chunks WHERE id = ANY(%s)": (["d1:1"],),
    }
    for statement, params in lookups.items():
        plan = _plan(postgres_env, statement, *params)
        assert "Seq Scan" not in plan, f"{statement} scans:\n{plan}"
    assert [r.id for r in store.relations_touching(["e1"])] == ["r0", "r1"]


def test_registered_for_the_graph_slot():
    from heta_framework.plugins.registry import PluginRegistry

    registry = PluginRegistry.from_entry_points(strict=True)
    assert registry.store_type("graph", "postgres").factory == PostgresGraphStore.open
