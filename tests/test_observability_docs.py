"""docs/observability.md names every metric /metrics exposes, and every span name Heta's code makes."""

from __future__ import annotations

import re
from pathlib import Path

from heta_server.metrics import ServerMetrics
from heta_server.tenants import Tenants

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "observability.md").read_text(encoding="utf-8")


def test_every_metric_is_documented():
    names = {family.name for family in ServerMetrics(Tenants({})).registry.collect()}
    assert names >= {"heta_http_requests", "heta_query_duration_seconds", "heta_model_calls", "heta_build_running"}
    # counters are exposed with _total; the page names them as a scrape shows them
    missing = [n for n in sorted(names) if f"`{n}_total`" not in PAGE and f"`{n}`" not in PAGE]
    assert not missing, f"docs/observability.md does not name {missing}"


def test_every_span_name_in_the_code_is_documented():
    sources = [*(ROOT / "core" / "src").rglob("*.py"), *(ROOT / "plugins" / "heta_server" / "src").rglob("*.py")]
    made = set()
    for path in sources:
        text = path.read_text(encoding="utf-8")
        made |= set(re.findall(r"""span\(\s*f?["'](heta\.[a-z_.]+)""", text))
        made |= {f"heta.store {operation}" for operation in re.findall(r"""store_span\(\s*["']([a-z_.]+)["']""", text)}
    for path in [*(ROOT.glob("heta_plugin_*/src/**/*.py")), *(ROOT / "plugins" / "heta_plugin_fulltext" / "src").rglob("*.py")]:
        made |= {f"heta.store {op}" for op in re.findall(r"""store_span\(\s*["']([a-z_.]+)["']""", path.read_text(encoding="utf-8"))}
    assert {"heta.build", "heta.step", "heta.batch", "heta.query", "heta.query.mode", "heta.store vector.search"} <= made
    for name in made - {"heta.store"}:  # store_span's own f-string: its operations are checked one by one
        documented = name.split(" ")[1] if name.startswith("heta.store ") else name  # operations are listed by name
        assert f"`{documented}" in PAGE, f"span {name!r} is not in docs/observability.md"
