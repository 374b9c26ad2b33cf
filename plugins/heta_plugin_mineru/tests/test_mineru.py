"""The layout service client against a scripted server on 127.0.0.1 replaying recorded MinerU answers
(``recorded/``): the recipe turns it on, its blocks become pages and tables, and every failure (time-out,
5xx, malformed answers, a refused key) is a document issue with a stable code while the build goes on.
The API key never shows in an issue, the run record, the recipe or the logs."""

from __future__ import annotations

import io
import json
import logging
import time
import zipfile
from pathlib import Path

import heta_plugin_mineru
import pytest
from fpdf import FPDF
from heta_framework.errors import RecipeError
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.testing import make_registry
from heta_framework.testing.http import Reply, ScriptedServer
from heta_plugin_mineru import LayoutAnswer, layout_result

RECORDED = Path(__file__).parent / "recorded"
KEY_ENV = "HETA_TEST_MINERU_KEY"
SECRET = "sk-mineru-test-5f1e9c0b7a"
STEPS = [{"step": "parse_documents"}, {"step": "split_documents", "chunk_size": 60, "chunk_overlap": 0}, {"step": "persist_chunks"}]


def recorded(name: str) -> dict:
    return json.loads((RECORDED / name).read_text())


@pytest.fixture
def server():
    with ScriptedServer(prefix="") as scripted:
        yield scripted


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    return SECRET


def write_pdf(path: Path, text: str) -> Path:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 10, text)
    pdf.output(str(path))
    return path


def make_kb(tmp_path, server, **options):
    registry = make_registry(heta_plugin_mineru)
    settings = {"endpoint": server.url, "api_key_env": KEY_ENV, "retry_backoff_seconds": 0, **options}
    recipe = Recipe.from_dict({"parsers": {"documents": {"options": {"mineru": settings}}}, "steps": STEPS}, registry)
    return KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)


def docs_with(tmp_path, **files) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    for name, content in files.items():
        path = docs / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return docs


def everything_written(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file())


# --- the happy path -------------------------------------------------------------------------

async def test_a_pdf_read_by_the_service_keeps_titles_tables_figures_formulas_and_pages(tmp_path, server, key, caplog):
    server.enqueue("/file_parse", body=recorded("file_parse_report_pdf.json"))
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "report.pdf", "The local text layer, which the service's answer replaces.")
    (docs / "notes.txt").write_text("Notes stay with the local text parser.")
    kb = make_kb(tmp_path, server)
    with caplog.at_level(logging.DEBUG):
        report = await kb.build([docs])
    assert not report.issues
    server.check()

    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/file_parse")
    assert request.header("authorization") == f"Bearer {SECRET}"
    assert b'name="files"; filename="report.pdf"' in request.body and b"%PDF" in request.body
    for field in (b'name="return_content_list"\r\n\r\ntrue', b'name="return_md"\r\n\r\ntrue', b'name="table_enable"\r\n\r\ntrue', b'name="lang_list"\r\n\r\nen'):
        assert field in request.body

    [hit] = (await kb.query("Seaford Road pumping capacity", mode="sql_text_search", top_k=1)).results
    assert "[Table 2: Pumping stations row 3] Station: Seaford Road | Capacity (l/s): 1200 | Standby power: no" in hit.text
    assert hit.metadata["page"] == 12 and hit.metadata["layout_service"] == "mineru"
    assert hit.location == "report.pdf p.12 Table 2: Pumping stations rows 2-3"
    [gauge] = (await kb.query("North Pier peak level", mode="sql_text_search", top_k=1)).results
    start, end = gauge.metadata["row_start"], gauge.metadata["row_end"]
    assert gauge.metadata.get("page_end", gauge.metadata["page"]) == 5 and start <= 2 <= end  # the table is on p.5
    assert gauge.location.endswith(f"5 Table 1: Peak water levels by station rows {start}-{end}")
    assert [r.metadata["name"] for r in (await kb.query("local text parser", mode="sql_text_search")).results] == ["notes.txt"]
    # the key is in no file of the knowledge base (recipe, run record, parsed text) and in no log line
    assert SECRET.encode() not in everything_written(tmp_path / "kb")
    assert SECRET not in caplog.text


def test_blocks_become_our_sections():
    answer = recorded("file_parse_report_pdf.json")["results"]["report"]
    result = layout_result(LayoutAnswer(answer["md_content"], answer["content_list"], "pipeline"))
    assert [span.page for span in result.pages] == [1, 2, 5, 12]
    assert result.metadata == {"layout_service": "mineru", "layout_backend": "pipeline", "page_count": 12, "tables": 2, "figures": 1, "formulas": 1}
    page = {span.page: result.text[span.start:span.end] for span in result.pages}
    assert page[1].startswith("# Coastal Flood Risk Report 2025\n\nThis report sets out")
    assert "Harbour Authority of Eastmouth" not in result.text  # a page header
    assert page[2].endswith("[Figure 1] Figure 1: Flood extent on 14 January 2025, from drone survey")
    assert page[5].split("\n\n") == [
        "## 2 Tide gauges",
        "[Table 1: Peak water levels by station row 2] Station: North Pier | Peak level (m): 6.9 | Date: 2025-01-14\n"
        "[Table 1: Peak water levels by station row 3] Station: Fish Market | Peak level (m): 6.4 | Date: 2025-01-14\n"
        "[Table 1: Peak water levels by station row 4] Station: Lifeboat Slip | Peak level (m): 6.1 | Date: 2024-12-21",
        "Levels above chart datum.",
        "$$\nQ = C_d \\, b \\sqrt{2 g} \\, h^{3/2}\n$$",
        "Overtopping discharge Q follows the weir equation above, with crest width b and head h over the wall.",
    ]
    assert page[12].startswith("## 6 Proposed works\n\nRaise the sea wall by 0.6 m along the fish market.\nFit flap valves")
    assert "[Figure 2]" not in result.text  # a figure without a caption has no text to find


async def test_an_older_service_sends_the_block_list_as_text_and_a_doc_is_read_with_pages(tmp_path, server, key):
    server.enqueue("/file_parse", body=recorded("file_parse_minutes_doc_v2_0.json"))
    docs = docs_with(tmp_path, **{"minutes.doc": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a binary Word 97 file"})
    kb = make_kb(tmp_path, server)
    report = await kb.build([docs])
    assert not report.issues
    [hit] = (await kb.query("launch tractor", mode="sql_text_search", top_k=1)).results
    assert (hit.metadata["page"], hit.metadata["page_end"]) == (1, 2) and hit.location == "minutes.doc pp.1-2"
    assert b'filename="minutes.doc"' in server.requests[0].body


async def test_markdown_without_blocks_is_read_with_its_tables_as_rows(tmp_path, server, key):
    server.enqueue("/file_parse", body=recorded("file_parse_markdown_only.json"))
    docs = docs_with(tmp_path, **{"berths.docx": b"PK\x03\x04 a Word file the service reads"})
    kb = make_kb(tmp_path, server)
    assert not (await kb.build([docs])).issues
    [hit] = (await kb.query("Curlew", mode="sql_text_search", top_k=1)).results
    assert "[Table 1 row 3] Berth: B4 | Vessel: MV Curlew" in hit.text
    assert hit.location == "berths.docx Table 1 rows 2-3"  # no page numbers in Markdown alone


async def test_installed_but_not_configured_the_plugin_changes_nothing(tmp_path, server):
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "report.pdf", "Read by pypdf as always.")
    recipe = Recipe.from_dict({"steps": STEPS}, make_registry(heta_plugin_mineru))
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=make_registry(heta_plugin_mineru))
    assert not (await kb.build([docs])).issues
    assert (await kb.query("pypdf", mode="sql_text_search")).results
    assert server.requests == []


# --- MinerU's asynchronous API and zipped answers ------------------------------------------

def output_zip(stem: str = "report") -> bytes:
    """MinerU's output folder for the recorded report, zipped as its API sends it (images and the v2 list included)."""
    answer = recorded("file_parse_report_pdf.json")["results"]["report"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{stem}/auto/{stem}.md", answer["md_content"])
        archive.writestr(f"{stem}/auto/{stem}_content_list.json", json.dumps(answer["content_list"]))
        archive.writestr(f"{stem}/auto/{stem}_content_list_v2.json", json.dumps([[{"type": "paragraph", "content": {}}]]))
        archive.writestr(f"{stem}/auto/{stem}_middle.json", "{}")
        archive.writestr(f"{stem}/auto/images/3f1c0d9a.jpg", b"\xff\xd8\xff")
    return buffer.getvalue()


async def test_the_tasks_api_is_submitted_polled_and_read_from_its_zip(tmp_path, server, key):
    server.enqueue("/tasks", body={"task_id": "7c1e9f0a-2b3d-4e5f-8a9b-0c1d2e3f4a5b", "status": "pending"})
    status = "/tasks/7c1e9f0a-2b3d-4e5f-8a9b-0c1d2e3f4a5b"
    server.enqueue(status, body={"task_id": "7c1e9f0a-2b3d-4e5f-8a9b-0c1d2e3f4a5b", "status": "pending"})
    server.enqueue(status, body={"data": {"status": "processing"}})  # some services wrap their answers in "data"
    server.enqueue(status, body={"status": "completed"})
    server.enqueue(status + "/result", Reply(body=output_zip(), headers={"Content-Type": "application/zip"}))
    docs = docs_with(tmp_path, **{"report.pdf": b"%PDF-1.7 sent to the service"})
    kb = make_kb(tmp_path, server, api="tasks", poll_interval_seconds=0.01, fallback=False)
    assert not (await kb.build([docs])).issues
    server.check()
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/tasks"), *[("GET", status)] * 3, ("GET", status + "/result")]
    assert all(r.header("authorization") == f"Bearer {SECRET}" for r in server.requests)
    [hit] = (await kb.query("Seaford Road pumping capacity", mode="sql_text_search", top_k=1)).results
    assert hit.location == "report.pdf p.12 Table 2: Pumping stations rows 2-3"


async def test_file_parse_may_answer_with_a_zip(tmp_path, server, key):
    server.enqueue("/file_parse", Reply(body=output_zip()))
    kb = make_kb(tmp_path, server, fallback=False)
    assert not (await kb.build([docs_with(tmp_path, **{"report.pdf": b"%PDF-1.7"})])).issues
    assert (await kb.query("Lifeboat Slip", mode="sql_text_search", top_k=1)).results[0].metadata["page"] == 5


async def test_a_failed_task_and_a_task_that_never_ends_are_issues(tmp_path, server, key):
    # a.pdf's task fails, b.pdf's never ends, whichever document the build sends first
    server.respond("/tasks", lambda request: {"task_id": "t-1" if b'filename="a.pdf"' in request.body else "t-2"})
    server.enqueue("/tasks/t-1", body={"status": "failed", "error": f"cannot open file (token {SECRET})"})
    server.respond("/tasks/t-2", lambda request: {"status": "processing"})
    docs = docs_with(tmp_path, **{"a.pdf": b"%PDF-1.7 one", "b.pdf": b"%PDF-1.7 two"})
    kb = make_kb(tmp_path, server, api="tasks", poll_interval_seconds=0.05, timeout_seconds=0.5, fallback=False)
    started = time.monotonic()
    report = await kb.build([docs])
    assert time.monotonic() - started < 5
    issues = {kb.document(i.subject.id).name: i for i in report.issues}
    assert (issues["a.pdf"].code, issues["a.pdf"].resolution.action) == ("layout_service_task_failed", "skipped_document")
    assert "cannot open file (token ***)" in issues["a.pdf"].message and SECRET not in issues["a.pdf"].message
    assert (issues["b.pdf"].code, issues["b.pdf"].resolution.action) == ("layout_service_timeout", "retry_document")
    assert "was not done within 0.5 s (last status 'processing')" in issues["b.pdf"].message


async def test_a_task_answer_without_an_id_is_a_bad_answer(tmp_path, server, key):
    server.enqueue("/tasks", body={"status": "queued"})
    kb = make_kb(tmp_path, server, api="tasks", fallback=False)
    [issue] = (await kb.build([docs_with(tmp_path, **{"a.pdf": b"%PDF-1.7"})])).issues
    assert issue.code == "layout_service_bad_answer" and "no task_id" in issue.message


# --- MinerU's hosted service (api = "cloud") ------------------------------------------------

def script_cloud(server, *, final: dict) -> None:
    """mineru.net's batch API as its answers are shaped (code/msg/data), the pre-signed storage on the same server."""
    server.enqueue("/api/v4/file-urls/batch", body={"code": 0, "msg": "ok", "trace_id": "c8a1", "data": {
        "batch_id": "2bb2f0ec-a336-4a0a-b61a-4afd8ae5e1a9",
        "file_urls": [f"{server.url}/oss/upload/report.pdf?Expires=1796600000&OSSAccessKeyId=LTAI&Signature=c2lnbg%3D%3D"]}})
    server.enqueue("/oss/upload/report.pdf", body="")
    status = "/api/v4/extract-results/batch/2bb2f0ec-a336-4a0a-b61a-4afd8ae5e1a9"
    server.enqueue(status, body={"code": 0, "msg": "ok", "data": {"batch_id": "2bb2f0ec-a336-4a0a-b61a-4afd8ae5e1a9", "extract_result": [
        {"file_name": "report.pdf", "state": "running", "err_msg": "", "extract_progress": {"extracted_pages": 3, "total_pages": 12}}]}})
    server.enqueue(status, body={"code": 0, "msg": "ok", "data": {"batch_id": "2bb2f0ec-a336-4a0a-b61a-4afd8ae5e1a9", "extract_result": [
        {"file_name": "report.pdf", **final}]}})


async def test_the_cloud_api_uploads_polls_and_reads_the_zip_and_its_storage_never_sees_the_key(tmp_path, server, key):
    script_cloud(server, final={"state": "done", "err_msg": "", "full_zip_url": f"{server.url}/oss/result/2bb2f0ec.zip"})
    server.enqueue("/oss/result/2bb2f0ec.zip", Reply(body=output_zip("0a1b2c3d-full")))
    pdf = b"%PDF-1.7 the report, uploaded as it is"
    kb = make_kb(tmp_path, server, endpoint=f"{server.url}/api/v4", api="cloud", poll_interval_seconds=0.01, fallback=False)
    assert not (await kb.build([docs_with(tmp_path, **{"report.pdf": pdf})])).issues
    server.check()
    create, upload, *polls, download = server.requests
    assert (create.method, create.json["files"], create.json["enable_table"]) == ("POST", [{"name": "report.pdf", "data_id": "report.pdf"}], True)
    assert (upload.method, upload.body) == ("PUT", pdf) and len(polls) == 2
    assert all(r.header("authorization") == f"Bearer {SECRET}" for r in (create, *polls))
    assert upload.header("authorization") is None and download.header("authorization") is None  # pre-signed storage
    [hit] = (await kb.query("Seaford Road pumping capacity", mode="sql_text_search", top_k=1)).results
    assert hit.location == "report.pdf p.12 Table 2: Pumping stations rows 2-3"


async def test_the_cloud_refusing_or_failing_a_file_is_an_issue(tmp_path, server, key):
    server.enqueue("/api/v4/file-urls/batch", body={"code": -60005, "msg": f"file size exceeds limit for token {SECRET}", "data": None})
    kb = make_kb(tmp_path, server, endpoint=f"{server.url}/api/v4", api="cloud", poll_interval_seconds=0.01, fallback=False)
    [refused] = (await kb.build([docs_with(tmp_path, **{"report.pdf": b"%PDF-1.7 big"})])).issues
    assert refused.code == "layout_service_rejected" and "file size exceeds limit for token ***" in refused.message
    assert SECRET not in refused.message

    script_cloud(server, final={"state": "failed", "err_msg": "failed to read file, please check if the file is corrupted"})
    [failed] = (await kb.build(rebuild=True)).issues
    assert failed.code == "layout_service_task_failed" and "please check if the file is corrupted" in failed.message


# --- failures become issues, the build goes on ----------------------------------------------

async def test_a_time_out_is_an_issue_and_the_build_goes_on(tmp_path, server, key):
    server.enqueue("/file_parse", Reply(body=recorded("file_parse_report_pdf.json"), delay=5))
    docs = docs_with(tmp_path, **{"report.pdf": b"%PDF-1.7 whatever", "notes.txt": "Notes are indexed all the same."})
    kb = make_kb(tmp_path, server, timeout_seconds=0.5, fallback=False)
    started = time.monotonic()
    report = await kb.build([docs])
    assert time.monotonic() - started < 4
    [issue] = report.issues
    assert (issue.code, issue.resolution.action) == ("layout_service_timeout", "retry_document")
    assert "did not answer within 0.5 s" in issue.message and "next heta build sends it" in issue.resolution.outcome
    assert len(server.requests) == 1  # a time-out is not retried at once: the next attempt would wait as long
    assert [r.metadata["name"] for r in (await kb.query("notes indexed", mode="sql_text_search")).results] == ["notes.txt"]

    # the document stayed pending: a plain build (no --rebuild) sends it again, and now the service answers
    server.enqueue("/file_parse", body=recorded("file_parse_report_pdf.json"))
    again = await kb.build([docs])
    assert not again.issues and len(server.requests) == 2
    assert (await kb.query("Seaford Road", mode="sql_text_search", top_k=1)).results[0].metadata["name"] == "report.pdf"


async def test_when_the_service_fails_the_local_parser_reads_the_document_with_a_warning(tmp_path, server, key):
    server.enqueue("/file_parse", Reply(body=recorded("file_parse_report_pdf.json"), delay=5))
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "report.pdf", "Sandbags were stacked along Quay Street before the January surge.")
    kb = make_kb(tmp_path, server, timeout_seconds=0.5)
    report = await kb.build([docs])
    [issue] = report.issues
    assert (issue.code, issue.severity, issue.resolution.action) == ("layout_service_timeout", "warning", "kept_document")
    assert "read with the local parser 'pdf' instead" in issue.message
    [hit] = (await kb.query("sandbags Quay Street", mode="sql_text_search", top_k=1)).results
    assert hit.location == "report.pdf p.1" and "layout_service" not in hit.metadata


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_5xx_answers_are_retried_then_an_issue(tmp_path, server, key, status):
    for _ in range(3):
        server.enqueue("/file_parse", status=status, body={"detail": "inference worker crashed"})
    docs = docs_with(tmp_path, **{"report.pdf": b"%PDF-1.7 not read locally"})
    kb = make_kb(tmp_path, server, retries=2, fallback=False)
    [issue] = (await kb.build([docs])).issues
    assert (issue.code, issue.resolution.action) == ("layout_service_error", "retry_document")
    assert f"HTTP {status}: inference worker crashed (3 attempts)" in issue.message
    assert len(server.requests) == 3
    server.check()


async def test_a_5xx_then_an_answer_succeeds(tmp_path, server, key):
    server.enqueue("/file_parse", status=503, body="<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>")
    server.enqueue("/file_parse", body=recorded("file_parse_minutes_doc_v2_0.json"))
    docs = docs_with(tmp_path, **{"minutes.doc": b"\xd0\xcf\x11\xe0 word 97"})
    kb = make_kb(tmp_path, server)
    assert not (await kb.build([docs])).issues
    assert len(server.requests) == 2


@pytest.mark.parametrize(("reply", "says"), [
    (Reply(body="<html><title>Sign in to the proxy</title></html>"), "not JSON"),
    (Reply(body={"error": "no such task"}), "no 'results' for one file"),
    (Reply(body={"results": {"report": {"md_content": "x", "content_list": "[{\"type\": \"text\", "}}}), "content_list is not valid JSON"),
    (Reply(body={"results": {"report": {"content_list": [["not", "an", "object"]]}}}), "entries that are not objects"),
    (Reply(body={"results": {"report": {"md_content": "", "content_list": []}}}), "neither blocks"),
    (Reply(body=b"PK\x03\x04 a broken zip"), "zip that cannot be read"),
    (Reply(body=b"", headers={"Content-Type": "application/zip"}), "zip that cannot be read"),
])
async def test_malformed_answers_are_an_issue(tmp_path, server, key, reply, says):
    server.enqueue("/file_parse", reply)
    docs = docs_with(tmp_path, **{"report.pdf": b"%PDF-1.7 not read locally", "notes.txt": "Still indexed."})
    kb = make_kb(tmp_path, server, fallback=False)
    report = await kb.build([docs])
    [issue] = report.issues
    assert issue.code == "layout_service_bad_answer" and says in issue.message
    assert (await kb.query("indexed", mode="sql_text_search")).results


async def test_the_key_never_shows_even_when_the_service_echoes_it(tmp_path, server, key, caplog):
    def echo(request):
        return Reply(status=500, body={"detail": f"upstream refused authorization={request.header('authorization')}"})

    server.respond("/file_parse", echo)
    server.enqueue("/file_parse", status=401, body=f"invalid token Bearer {SECRET}")
    docs = docs_with(tmp_path, **{"a.pdf": b"%PDF-1.7 one", "b.pdf": b"%PDF-1.7 two"})
    kb = make_kb(tmp_path, server, retries=1, fallback=False)
    with caplog.at_level(logging.DEBUG):
        report = await kb.build([docs])
    codes = sorted(issue.code for issue in report.issues)
    assert codes == ["layout_service_error", "layout_service_rejected"]
    for issue in report.issues:
        assert SECRET not in issue.message and SECRET not in str(issue.details) and SECRET not in issue.resolution.outcome
        assert "***" in issue.message  # the echo was there, and was cut out
    assert SECRET not in caplog.text
    assert SECRET.encode() not in everything_written(tmp_path / "kb")
    assert SECRET not in json.dumps(kb.recipe.summary()) and SECRET not in kb.recipe.to_toml()


async def test_an_unset_key_variable_is_an_issue_naming_it(tmp_path, server, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    docs = docs_with(tmp_path, **{"report.pdf": b"%PDF-1.7"})
    kb = make_kb(tmp_path, server, fallback=False)
    [issue] = (await kb.build([docs])).issues
    assert issue.code == "layout_service_key_missing" and KEY_ENV in issue.message and KEY_ENV in issue.resolution.outcome
    assert server.requests == []


async def test_an_unreachable_service_is_an_issue(tmp_path, key):
    with ScriptedServer(prefix="") as gone:
        address = gone.url  # a port that was just closed: nothing listens there now
    registry = make_registry(heta_plugin_mineru)
    recipe = Recipe.from_dict({"parsers": {"documents": {"options": {"mineru": {
        "endpoint": address, "retries": 1, "retry_backoff_seconds": 0, "fallback": False}}}}, "steps": STEPS}, registry)
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    [issue] = (await kb.build([docs_with(tmp_path, **{"report.pdf": b"%PDF-1.7"})])).issues
    assert issue.code == "layout_service_error" and "could not be reached" in issue.message and "(2 attempts)" in issue.message


# --- the recipe -----------------------------------------------------------------------------

def test_bad_settings_are_recipe_errors_naming_the_field():
    registry = make_registry(heta_plugin_mineru)

    def problems(settings):
        with pytest.raises(RecipeError) as caught:
            Recipe.from_dict({"parsers": {"documents": {"options": {"mineru": settings}}}, "steps": STEPS}, registry)
        return str(caught.value)

    assert "$.parsers.documents.options.mineru" in problems({})  # endpoint is required
    assert "endpoint" in problems({"endpoint": "127.0.0.1:8000"})
    assert "timeout_seconds" in problems({"endpoint": "http://127.0.0.1:8000", "timeout_seconds": 0})
    # a key in the recipe is refused, and the refusal does not repeat it
    message = problems({"endpoint": "http://127.0.0.1:8000", "api_key": SECRET})
    assert "api_key" in message and SECRET not in message
    message = problems({"endpoint": f"http://user:{SECRET}@127.0.0.1:8000"})
    assert "api_key_env" in message and SECRET not in message
    assert "environment variable" in problems({"endpoint": "http://127.0.0.1:8000", "api_key_env": SECRET})
