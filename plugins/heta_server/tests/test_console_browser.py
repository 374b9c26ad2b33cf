"""The console in a real headless Chromium (Debian's ``chromium``; ``scripts/system_packages.sh`` installs it).

One browser and one server for the whole module: the pages are driven over the DevTools protocol
(``cdp.py``): typing, real mouse clicks (on the graph's canvas too), choosing a file to upload. Every view
is checked with axe-core (vendored under ``tests/vendor/axe-core``, run inside the same page) and at 400 px
wide, and screenshotted into the test's folder (and into ``$HETA_SCREENSHOTS`` when set, for review).

The knowledge base is the session's one (MiniLM vectors, Whoosh full text, an nlp-extracted graph) plus a
hostile document whose name and text hold ``<script>``, ``<img onerror>`` and a ``javascript:`` link.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
from pathlib import Path
from urllib.parse import urlencode

import pytest
from heta_framework.kb import KnowledgeBase, SourceDocument

HERE = Path(__file__).parent


def _load_driver():
    # a module beside this one (the tests are imported with --import-mode=importlib, which has no sibling imports)
    spec = importlib.util.spec_from_file_location("heta_server_tests_cdp", HERE / "cdp.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cdp = _load_driver()

pytestmark = pytest.mark.skipif(
    cdp.CHROMIUM is None, reason="the chromium binary is not installed (apt-get install chromium; scripts/system_packages.sh does it)"
)

AXE = HERE / "vendor" / "axe-core" / "axe.min.js"
#: each payload sets window.__pwned if it ever runs
HOSTILE_NAME = '<img src=x onerror="window.__pwned=1">report<script>window.__pwned=2</script>.md'
HOSTILE = SourceDocument(
    id="hostile", name=HOSTILE_NAME,
    text="# Zanzibar <script>window.__pwned=3</script> notes\n\n"
         "The zanzibar clove harvest <img src=x onerror=\"window.__pwned=4\"> is **large** and "
         "[described here](javascript:window.__pwned=5) with <b onmouseover=\"window.__pwned=6\">bold claims</b>.",
)


@pytest.fixture(scope="module")
def console_kb(built_kb, tmp_path_factory) -> Path:
    """The session's knowledge base plus the hostile document, with a `heta eval` summary and chart beside it."""
    path = tmp_path_factory.mktemp("console") / "kb"
    shutil.copytree(built_kb, path)
    kb = KnowledgeBase.load(path)
    kb.sync.build([HOSTILE])
    kb.close()
    write_evaluation(path.parent / "heta-eval")
    return path


def write_evaluation(out: Path) -> None:
    """What `heta --kb kb eval` writes (``summary.json`` by its own writer, ``chart.png`` by its own drawing)."""
    from heta_framework.evaluation.chart import draw_chart
    from heta_framework.evaluation.report import ModeSummary, report_dict, write_summary

    out.mkdir(parents=True)
    rows = [ModeSummary("kb", "full_text_search", 40, {"ndcg@10": 0.812, "recall@10": 0.95, "mrr@10": 0.77}, 3.1, 7.4),
            ModeSummary("kb", "vector_search", 40, {"ndcg@10": 0.744, "recall@10": 0.9, "mrr@10": 0.7}, 11.2, 19.8)]
    write_summary(out, report_dict("self", 10, rows, {}))
    draw_chart(rows, out / "chart.png", title="self: quality against latency")


@pytest.fixture(scope="module")
def console(console_kb, server_starter):
    running = server_starter(console_kb, warm=True)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    started = cdp.Browser(tmp_path_factory.mktemp("chromium"))
    yield started
    started.close()


@pytest.fixture
def page(browser, console):
    page = browser.page
    page.viewport(1100, 900)
    return page


@pytest.fixture
def shoot(tmp_path):
    """``shoot(page, name)``: a full-page PNG in the test's folder, and in ``$HETA_SCREENSHOTS`` when set."""
    def take(page, name: str) -> Path:
        shot = page.screenshot(tmp_path / f"{name}.png")
        assert shot.stat().st_size > 5_000  # a real rendering, not a blank file
        if os.environ.get("HETA_SCREENSHOTS"):
            folder = Path(os.environ["HETA_SCREENSHOTS"])
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, folder / shot.name)
        return shot

    return take


def open_view(page, console, fragment: str, ready: str, timeout: float = 60) -> None:
    """Open the view and wait until ``ready`` (a CSS selector, or a JavaScript condition) holds."""
    page.goto(console.url + "/" + fragment)
    condition = ready if re.match(r"(document|window|location|!)", ready) else f"document.querySelector({json.dumps(ready)})"
    page.wait_for(condition, timeout=timeout)


def api(console, path: str, body: dict | None = None) -> dict:
    with console.client() as client:
        answer = client.get(path) if body is None else client.post(path, json=body)
    answer.raise_for_status()
    return answer.json()


def serious_violations(page) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))  # through DevTools, which the page's CSP does not govern
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']}).then((r) => r.violations.map((v) => "
                            "({id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3)})))",
                            await_promise=True, timeout=120)
    return [f"{v['id']} ({v['impact']}): {v['nodes']}" for v in results if v["impact"] in ("serious", "critical")]


def status(page) -> str:
    return page.text("#status")


# --- home ----------------------------------------------------------------------------------------------


def test_home_shows_the_size_the_last_build_and_why_modes_are_unavailable(page, console, shoot):
    summary = api(console, "/api/v1/console/summary")
    open_view(page, console, "#/", ".count")
    values = page.texts(".count-value")
    assert values == [str(summary["documents"]["total"]), str(summary["chunks"]), str(summary["entities"])]
    assert values[0] == "5" and int(values[2]) > 10
    assert page.text("h1") == "kb" and page.text("#kb-name") == "kb"
    assert "Build run 2: done" in page.text("main")
    rows = page.evaluate("[...document.querySelectorAll('main tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent))")
    by_mode = {row[0].replace("default", ""): row[1] for row in rows}
    assert by_mode["sql_text_search"].startswith("unavailable: asset chunk_text_index is not built")
    assert by_mode[summary["default_mode"]] == "available"
    assert page.text("main tbody .badge") == "default"
    assert page.problems == []
    shoot(page, "home")


# --- search --------------------------------------------------------------------------------------------


def test_search_runs_the_mode_the_api_runs_without_one(page, console, shoot):
    ran = api(console, "/api/v1/query", {"text": "Who discovered penicillin", "top_k": 10})["metadata"]["mode"]
    open_view(page, console, "#/search", "#q")
    assert page.evaluate("document.getElementById('mode').value") == ran
    options = page.evaluate("[...document.querySelectorAll('#mode option')].map((o) => [o.value, o.dataset.available])")
    assert options == [[row["mode"], "yes" if row["available"] else "no"] for row in api(console, "/api/v1/modes")["modes"]]
    page.type("#q", "Who discovered penicillin")
    page.click("#search button[type=submit]")
    page.wait_for("document.querySelector('#results .result')", timeout=90)
    assert re.match(rf"\d+ results? from {ran} in \d+ ms", status(page)), status(page)
    first = page.evaluate("(() => { const r = document.querySelector('#results .result'); return {title: r.querySelector('h3').textContent, "
                          "meta: r.querySelector('.meta').textContent, link: r.querySelector('a.doc-link').getAttribute('href'), "
                          "marks: [...r.querySelectorAll('mark')].map((m) => m.textContent.toLowerCase()), "
                          "heading: (r.querySelector('.md-h') || {}).textContent}; })()")
    assert first["title"] == "1. penicillin.md"
    assert first["meta"].startswith("penicillin.md · score ") and "found by " in first["meta"]  # a composed mode names its legs
    assert first["link"] == "#/documents/penicillin?chunk=penicillin-00000"
    assert "penicillin" in first["marks"] and "discovered" in first["marks"]
    assert first["heading"] == "Penicillin"  # "# Penicillin" rendered as a heading line, not shown raw
    assert "# Penicillin" not in page.text("#results")
    assert location_of_penicillin(console) in first["meta"]
    shoot(page, "search")


def location_of_penicillin(console) -> str:
    results = api(console, "/api/v1/query", {"text": "penicillin", "mode": "full_text_search", "top_k": 1})["results"]
    return results[0]["location"]


@pytest.mark.parametrize("mode", ["full_text_search", "vector_search", "heta_graph_search"])
def test_search_in_a_chosen_mode(page, console, mode):
    open_view(page, console, "#/search", "#q")
    page.type("#q", "penicillin Fleming")
    page.evaluate(f"document.getElementById('mode').value = {json.dumps(mode)}")
    page.click("#search button[type=submit]")
    page.wait_for("document.querySelector('#results .result')", timeout=90)
    assert f"from {mode} in" in status(page)
    assert f"mode={mode}" in page.evaluate("location.hash")
    expected = api(console, "/api/v1/query", {"text": "penicillin Fleming", "mode": mode, "top_k": 10})["results"]
    titles = page.texts("#results .result-title")
    assert len(titles) == len(expected)
    found_by = page.texts("#results .found-by")
    assert all(text == f"found by {mode}" or text.startswith(f"found by {mode} ") for text in found_by)
    if mode == "heta_graph_search":  # facts link into the graph explorer and to their evidence
        assert page.evaluate("document.querySelectorAll('#results a[href^=\"#/graph?entity=\"]').length") > 0
        assert page.evaluate("document.querySelectorAll('#results a[href^=\"#/documents/\"]').length") > 0


def test_memory_search_shows_its_three_scores_as_bars_and_the_related_memories(page, console, shoot):
    open_view(page, console, "#/search?q=Who+discovered+penicillin&mode=memory_search", "#results .result", timeout=90)
    assert "from memory_search" in status(page)
    data = api(console, "/api/v1/search", {"query": "Who discovered penicillin", "top_k": 10})
    meters = page.evaluate("Object.fromEntries([...document.querySelectorAll('#results .result')].map((r) => "
                           "[r.dataset.resultId, [...r.querySelectorAll('meter')].map((m) => m.value)]))")
    assert len(meters) == len(data["results"]) and all(len(three) == 3 for three in meters.values())
    # the API's search counts as an access (recency), so the order may move between the page's search and this one
    for result in data["results"]:
        assert meters[result["memory"]["id"]] == pytest.approx(
            [result["recency_score"], result["importance_score_normalized"], result["relevance_score"]], abs=0.02)
    labels = page.texts("#results .result:first-of-type .scores label")
    assert [label.split()[0] for label in labels] == ["recency", "importance", "relevance"]
    assert page.text("#related h2") == "Related"
    assert page.evaluate("document.querySelector('#results .result .meta').textContent.split(' · ')[0]") in {
        r["memory"]["location"] for r in data["results"]}
    shoot(page, "memory-search")


def test_a_page_view_strengthens_no_memory_unless_asked(page, console, console_kb):
    import sqlite3

    from heta_server.memory_access import ACCESS_FILE

    def accesses() -> set[tuple]:
        """Every (principal set, chunk, last access, count) row of the knowledge base's access log."""
        if not (console_kb / ACCESS_FILE).exists():
            return set()
        with sqlite3.connect(console_kb / ACCESS_FILE) as db:
            return set(db.execute("SELECT scope, chunk_id, accessed, count FROM scoped_access"))

    before = accesses()
    open_view(page, console, "#/search?q=clove+harvest&mode=memory_search", "#results .result", timeout=90)
    assert accesses() == before  # looked at, not recalled
    assert page.evaluate("document.getElementById('remember').checked") is False
    open_view(page, console, "#/search?q=clove+harvest&mode=memory_search&remember=yes", "#results .result", timeout=90)
    assert accesses() - before  # asked: the results' accesses are recorded


def test_an_unavailable_mode_says_why_and_runs_nothing(page, console):
    open_view(page, console, "#/search?q=penicillin&mode=sql_text_search", "document.getElementById('status').textContent")
    message = status(page)
    assert message.startswith("Mode sql_text_search is unavailable: ") and "chunk_text_index" in message
    assert page.evaluate("document.getElementById('status').className") == "error"
    assert page.evaluate("document.querySelectorAll('.result').length") == 0


def test_the_old_search_page_links_still_open_a_search(page, console):
    page.goto(console.url + "/?q=penicillin&mode=full_text_search")
    page.wait_for("document.querySelector('#results .result')", timeout=60)
    assert "from full_text_search" in status(page) and page.evaluate("location.hash").startswith("#/search?")


def test_with_a_language_model_the_answer_streams_in_with_citations_that_lead_to_their_results(browser, assistant_served, scripted_model, shoot):
    from heta_framework.testing.http import chat_stream_reply

    running, _, raw = assistant_served
    scripted_model.enqueue("chat/completions", chat_stream_reply(["Alexander Fleming ", "discovered penicillin ", "in 1928 [1]."]))
    page = browser.page
    try:
        page.goto(running.url + "/#token=" + raw["outsider"])
        page.wait_for("document.querySelector('.count')")
        page.goto(running.url + "/#/search?q=Who+discovered+penicillin")
        page.wait_for("document.querySelector('.answer[aria-busy=false] .cite')", timeout=60)
        assert page.evaluate("document.getElementById('answer').checked")  # answers are on when a model is configured
        assert page.text(".answer-text") == "Alexander Fleming discovered penicillin in 1928 [1]."
        assert page.text("#results .result-title") == "1. penicillin.md"
        page.click(".answer .cite")
        assert page.evaluate("document.activeElement.id") == "result-1"
        assert not [p for p in page.problems if "lab" in p.lower()]
        assert "Peoria" not in page.text("main")  # the outsider's answer rests only on what it may read
        shoot(page, "answer")
        scripted_model.check()
    finally:
        page.evaluate("sessionStorage.clear()")


# --- documents -----------------------------------------------------------------------------------------


def test_the_catalog_lists_documents_with_state_size_dates_and_chunks(page, console, shoot):
    open_view(page, console, "#/documents", "main table")
    rows = page.evaluate("[...document.querySelectorAll('main tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent))")
    names = [row[0] for row in rows]
    assert sorted(names, key=str.lower) == names and "penicillin.md" in names and HOSTILE_NAME in names
    penicillin = rows[names.index("penicillin.md")]
    assert penicillin[1] == "built" and penicillin[2].endswith(" B") and penicillin[3] == "1"
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d$", penicillin[4])
    shoot(page, "documents")


def test_a_document_view_shows_its_chunks_with_provenance(page, console, shoot):
    open_view(page, console, "#/documents", "main table")
    page.click("main tbody a[href='#/documents/penicillin']")
    page.wait_for("document.querySelector('.chunk')")
    assert page.text("main h1") == "penicillin.md"
    facts = page.evaluate("Object.fromEntries([...document.querySelectorAll('.facts dt')].map((dt) => [dt.textContent, dt.nextElementSibling.textContent]))")
    assert facts["id"] == "penicillin" and facts["state"] == "built" and facts["chunks"] == "1" and facts["readers"] == "public"
    assert page.text(".chunk .meta").startswith("penicillin.md · characters 0–")
    assert page.text(".chunk .md-h") == "Penicillin"
    assert "Alexander Fleming" in page.texts(".entities a")
    shoot(page, "document")


# --- graph ---------------------------------------------------------------------------------------------


def entity(console, name: str) -> dict:
    found = api(console, "/api/v1/console/graph/entities?" + urlencode({"q": name, "limit": 20}))["entities"]
    return next(e for e in found if e["name"] == name)


def test_the_graph_explorer_draws_a_neighbourhood_and_a_click_expands_a_node(page, console, shoot):
    start = entity(console, "Howard Florey")
    around = api(console, f"/api/v1/console/graph/entity/{start['id']}")
    first_ring = {start["id"]} | {e["id"] for e in around["entities"]}
    # a neighbour whose own neighbourhood reaches entities the first ring does not hold
    grows = {}
    for neighbour in around["entities"]:
        reached = {e["id"] for e in api(console, f"/api/v1/console/graph/entity/{neighbour['id']}")["entities"]}
        if reached - first_ring:
            grows = {"id": neighbour["id"], "name": neighbour["name"], "nodes": len(first_ring | reached)}
            break
    assert grows, "the test graph has a node to expand"

    open_view(page, console, "#/graph?q=Howard+Florey", ".entity-choice")
    page.click(f".entity-choice[href='#/graph?entity={start['id']}']")
    page.wait_for(f"window.hetaGraph && hetaGraph.nodes().length === {len(first_ring)}")
    page.wait_for("document.querySelector('#details h2') && document.querySelector('#details h2').textContent === 'Howard Florey'")
    assert page.evaluate("document.querySelectorAll('#details .evidence li').length") >= 1
    shoot(page, "graph")
    # a real mouse click on the neighbour's node in the canvas
    x, y = page.evaluate(
        f"(() => {{ const p = hetaGraph.getElementById({json.dumps(grows['id'])}).renderedPosition();"
        " const box = hetaGraph.container().getBoundingClientRect(); return [box.left + p.x, box.top + p.y]; })()"
    )
    page.mouse_click(x, y)
    page.wait_for(f"hetaGraph.nodes().length === {grows['nodes']}")
    page.wait_for(f"document.querySelector('#details h2').textContent === {json.dumps(grows['name'])}")
    assert page.evaluate(f"hetaGraph.getElementById({json.dumps(grows['id'])}).hasClass('expanded')")
    # the relation list is the keyboard's way to the same facts; a relation's evidence opens from it
    page.click("#relations button[data-relation]")
    page.wait_for("document.querySelector('#details .meta').textContent.startsWith('relation')")
    assert page.problems == []
    shoot(page, "graph-expanded")


# --- evaluation ----------------------------------------------------------------------------------------


def test_the_evaluation_view_shows_the_latest_results_and_the_chart(page, console, shoot):
    open_view(page, console, "#/eval", "main table")
    rows = page.evaluate("[...document.querySelectorAll('main tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent))")
    headers = page.texts("main thead th")
    assert headers[:2] == ["mode", "queries"] and "ndcg@10" in headers and "p50 ms" in headers
    assert rows[0][0] == "full_text_search" and rows[0][headers.index("ndcg@10")] == "0.812"
    assert rows[1][0] == "vector_search" and rows[1][headers.index("p95 ms")] == "19.8"
    page.wait_for("document.querySelector('figure img').complete && document.querySelector('figure img').naturalWidth > 100")
    shoot(page, "evaluation")


# --- safety and access ---------------------------------------------------------------------------------


def assert_nothing_ran(page) -> None:
    assert page.evaluate("window.__pwned === undefined")
    assert page.evaluate("document.querySelectorAll('main script, main img, main b, main [onerror], main [onmouseover]').length") == 0
    assert page.evaluate("document.querySelectorAll('a[href^=\"javascript\"]').length") == 0
    assert not [p for p in page.problems if "Content Security Policy" in p]  # nothing even tried to run inline


def test_a_hostile_document_is_shown_as_text_and_runs_nothing(page, console, shoot):
    open_view(page, console, "#/documents", "main table")
    assert HOSTILE_NAME in page.texts("main tbody a")
    assert_nothing_ran(page)
    page.click("main tbody a[href='#/documents/hostile']")
    page.wait_for("document.querySelector('.chunk')")
    assert page.text("main h1") == HOSTILE_NAME
    assert "<script>window.__pwned=3</script>" in page.text(".chunk .md-h")
    assert '<img src=x onerror="window.__pwned=4">' in page.text(".chunk .md")
    assert page.text(".chunk .md strong") == "large"  # the safe subset still renders
    assert_nothing_ran(page)
    shoot(page, "hostile-document")
    open_view(page, console, "#/search?q=zanzibar+clove&mode=full_text_search", "#results .result")
    assert page.text("#results .result-title") == "1. " + HOSTILE_NAME
    assert page.evaluate("[...document.querySelectorAll('#results mark')].map((m) => m.textContent.toLowerCase()).includes('zanzibar')")
    assert_nothing_ran(page)
    shoot(page, "hostile-search")


@pytest.mark.parametrize("fragment, ready", [
    ("#/", ".count"),
    ("#/search?q=Who+discovered+penicillin", "#results .result"),
    ("#/search?q=Who+discovered+penicillin&mode=memory_search", "#results .result"),
    ("#/documents", "main table"),
    ("#/documents/penicillin", ".chunk"),
    ("#/graph?q=penicillin", ".entity-choice"),
    ("#/eval", "main table"),
])
def test_each_view_passes_axe_and_reads_at_400_px(page, console, shoot, fragment, ready):
    open_view(page, console, fragment, ready, timeout=90)
    assert serious_violations(page) == []
    page.viewport(400, 800)
    page.wait_for("window.innerWidth === 400")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{fragment} scrolls sideways by {overflow} px at 400 px"
    # nothing sticks out past the right edge either (a wide table scrolls inside its own box instead)
    outside = page.evaluate("[...document.querySelectorAll('body *')].filter((n) => !n.closest('.table-wrap, .graph')"
                            " && n.getBoundingClientRect().right > document.documentElement.clientWidth + 1)"
                            ".map((n) => n.tagName + '.' + n.className + ' ' + (n.textContent || '').slice(0, 30))")
    assert outside == [], f"{fragment}: {outside}"
    assert serious_violations(page) == []
    shoot(page, "narrow-" + (re.sub(r"\W+", "-", fragment).strip("-") or "home"))


def test_the_graph_explorer_passes_axe(page, console):
    fleming = entity(console, "Alexander Fleming")
    open_view(page, console, f"#/graph?entity={fleming['id']}", "window.hetaGraph && document.querySelector('#details .evidence')")
    assert serious_violations(page) == []


def test_a_token_server_asks_for_the_token_and_a_link_can_carry_it(browser, console_kb, server_starter):
    from heta_server.config import ServerConfig

    token = "console-t0ken-0123456789abcdef"
    running = server_starter(console_kb, ServerConfig(token=token))
    page = browser.page
    try:
        page.goto(running.url + "/#/documents")
        page.wait_for("!document.getElementById('auth').hidden")
        assert "Unauthorized" in status(page) and page.evaluate("document.querySelectorAll('main table').length") == 0
        page.type("#token", token)
        page.click("#save-token")
        page.wait_for("document.querySelector('main table')")
        assert page.evaluate("document.getElementById('auth').hidden")
        page.evaluate("sessionStorage.clear()")
        # the token in the link's fragment (never sent to the server) goes to the tab's session storage
        page.goto(running.url + "/?q=penicillin&mode=full_text_search#token=" + token)
        page.wait_for("document.querySelector('#results .result')")
        assert "token" not in page.evaluate("location.href")
    finally:
        page.evaluate("sessionStorage.clear()")
        running.stop()


def test_a_server_of_several_knowledge_bases_offers_a_switch(browser, console_kb, built_kb, server_starter):
    running = server_starter(console_kb, kbs={"notes": built_kb})
    page = browser.page
    try:
        page.goto(running.url + "/#/")
        page.wait_for("document.getElementById('kb-switch')")
        assert page.texts("#kb-switch option") == ["default (--kb)", "notes"]
        assert page.texts(".count-value")[0] == "5"
        page.evaluate("(() => { const s = document.getElementById('kb-switch'); s.value = 'notes'; s.dispatchEvent(new Event('change')); })()")
        page.wait_for("location.search === '?kb=notes' && document.querySelector('.count')")
        assert page.text("main h1") == "notes" and page.texts(".count-value")[0] == "4"
        assert page.evaluate("document.getElementById('kb-switch').value") == "notes"
    finally:
        running.stop()


# --- writes (last: they change the knowledge base the tests above read) --------------------------------


def test_upload_a_document_then_remove_it(page, console, shoot, tmp_path):
    upload = tmp_path / "comet-notes.md"
    upload.write_text("# Comet notes\n\nHalley's comet returns every 76 years; Edmond Halley predicted its return.\n", encoding="utf-8")
    open_view(page, console, "#/documents", "#upload")
    page.set_files("#upload-file", [upload])
    page.click("#upload button[type=submit]")
    page.wait_for("[...document.querySelectorAll('main tbody a')].some((a) => a.textContent === 'comet-notes.md')", timeout=120)
    assert status(page) == "Added comet-notes.md."
    assert api(console, "/api/v1/console/summary")["documents"]["total"] == 6
    open_view(page, console, "#/search?q=Halley+comet&mode=full_text_search", "#results .result")
    assert page.text("#results .result-title") == "1. comet-notes.md"
    shoot(page, "uploaded")
    page.click("#results a.doc-link")
    page.wait_for("document.querySelector('#remove')")
    page.click("#remove")
    page.wait_for("document.querySelector('#remove-confirm')")
    page.click("#remove-confirm")
    page.wait_for("location.hash.startsWith('#/documents?removed=') && document.querySelector('main table')", timeout=120)
    assert "comet-notes.md" not in page.texts("main tbody a")
    removed = page.evaluate("[...document.querySelectorAll('main tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent))"
                            ".filter((cells) => cells[0] === 'comet-notes.md')")
    assert len(removed) == 1 and removed[0][1] == "removed"  # listed as removed, no longer a link
    assert api(console, "/api/v1/console/summary")["documents"]["total"] == 5
