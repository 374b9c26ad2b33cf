"""``heta build``, ``heta documents``, ``heta remove`` and ``heta delete``: what the knowledge base holds."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import attrs
import click

from heta_framework.cli.common import open_kb
from heta_framework.cli.output import UserError, emit_json, print_plain, table

WAIT_HELP = "If another process is writing to the knowledge base, wait up to this many seconds (default: fail at once)."


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--rebuild", is_flag=True, help="Run every document through every step again.")
@click.option("--prune", is_flag=True, help="Remove the documents whose file disappeared from the given folders.")
@click.option("--force", is_flag=True, help="Add back documents removed with `heta remove` even if their file did not change.")
@click.option("--wait", type=click.FloatRange(min=0), default=None, help=WAIT_HELP)
@click.option("--meta", "meta", multiple=True, help="KEY=VALUE metadata for the documents given, e.g. importance=8 or tags=a,b (cli/meta.py).")
@click.option("--access", "access", multiple=True, metavar="PRINCIPAL",
              help="Who may read the documents given (repeat for more; 'public' for everyone). Default: their .access files, "
                   "the recipe's [access] rules, or what they had.")
@click.option("--json", "as_json", is_flag=True, help="Print the build report as JSON (no progress bar).")
@click.pass_obj
def build(obj: dict, paths: tuple[str, ...], rebuild: bool, prune: bool, force: bool, wait: float | None, meta: tuple[str, ...],
          access: tuple[str, ...], as_json: bool) -> None:
    """Add documents (files or folders) and build; an interrupted build resumes."""
    from heta_framework.cli.progress import RichProgress, make_progress
    from heta_framework.runtime.step_context import no_progress

    if prune and not paths:
        raise click.UsageError("--prune needs the folders to compare with: heta build FOLDER --prune")
    if access and not paths:
        raise click.UsageError("--access gives the documents of this build an access list: name them, heta build PATH --access P")
    options = {"rebuild": rebuild, "prune": prune, "force": force, "wait": wait, "access": access or None, "actor": cli_actor()}
    with open_kb(obj["kb"]) as kb:
        sources = [Path(p) for p in paths]
        if meta:
            from heta_framework.cli.meta import documents_with_metadata, parse_meta

            sources = documents_with_metadata(sources, parse_meta(meta))
        if as_json:
            report = kb.sync.build(sources, progress=no_progress, **options)
            emit_json({**report.to_dict(), "fusion": fusion_after_build(kb)})
            return
        with make_progress() as progress:
            report = kb.sync.build(sources, progress=RichProgress(progress), **options)
        print_plain(report.to_text())
        for mode, entry in fusion_after_build(kb).items():
            if message := entry.get("note") or entry.get("error"):
                print_plain(f"{mode}: {message}")


def fusion_after_build(kb: Any) -> dict[str, dict[str, Any]]:
    """The fused modes' weights for the build just made, calibrated now rather than on the first query, so the
    report can say when one of them ranks as a single leg (``note``). A failure here is not the build's: it is
    reported, and the first query calibrates again."""
    from heta_framework.builtin.engines.calibration import calibrate_available, calibrated_modes, fusion_note

    try:
        calibrations = kb.sync.run(calibrate_available(kb))
    except Exception as exc:  # the build is committed whatever happens here; the type only, a message may hold a key
        error = f"fusion weights not calibrated ({type(exc).__name__}); the first query calibrates them"
        return {mode: {"error": error} for mode in calibrated_modes(kb)}
    entries: dict[str, dict[str, Any]] = {}
    for mode, calibration in calibrations.items():
        entry: dict[str, Any] = {"weights": calibration.to_dict() if calibration else None}
        if note := fusion_note(calibration, mode):
            entry["note"] = note
        entries[mode] = entry
    return entries


def _when(timestamp: float | None) -> str:
    """One format for every time the CLI prints (local time, to the second)."""
    if not timestamp:
        return ""
    return datetime.datetime.fromtimestamp(timestamp).isoformat(sep=" ", timespec="seconds")


#: the catalog fields that hold POSIX seconds: printed as dates, kept as numbers in JSON
TIME_FIELDS = ("modified", "added", "updated")


def document_to_dict(kb: Any, record: Any, *, with_chunks: bool = False, issues: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The catalog entry, its readers and chunk count; ``state`` is ``skipped`` for a file that gave no text,
    and ``issues`` the codes the build reported for it (``issues``: ``issue_codes_by_document``, computed once
    for a listing)."""
    from heta_framework.contracts.documents import document_chunks
    from heta_framework.runtime.document_status import issue_codes_by_document, reader_state

    data = attrs.asdict(record)
    data["readers"] = list(kb.readers(record.id))  # its own access list, or the recipe's default
    chunks = document_chunks(kb.objects, record.id)
    data["chunks"] = len(chunks)
    codes = (issues if issues is not None else issue_codes_by_document(kb.run_record.runs)).get(record.id, [])
    data["state"] = reader_state(record.state, len(chunks), codes)
    data["issues"] = codes
    if with_chunks:
        data["chunk_texts"] = [{"id": c.id, "start": c.start, "end": c.end, "text": c.text} for c in chunks]
    return data


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def documents(ctx: click.Context, as_json: bool) -> None:
    """List the documents: id, source, state, chunks, size, added/updated. `heta documents show ID` for one."""
    if ctx.invoked_subcommand is not None:
        return
    from heta_framework.runtime.document_status import issue_codes_by_document

    with open_kb(ctx.obj["kb"]) as kb:
        issues = issue_codes_by_document(kb.run_record.runs)
        rows = [document_to_dict(kb, record, issues=issues) for record in kb.documents.values()]
    rows.sort(key=lambda row: row["source"])
    if as_json:
        emit_json({"documents": rows})
        return
    columns = ["id", "source", "state", "chunks", "bytes", "readers", "added", "updated"]
    table(
        f"{len(rows)} document(s)",
        columns,
        [[r["id"], r["source"], _state_text(r), str(r["chunks"]), str(r["size"]), ", ".join(r["readers"]), _when(r.get("added")),
          _when(r.get("updated"))] for r in rows],
    )


def _state_text(row: dict[str, Any]) -> str:
    return f"{row['state']} ({', '.join(row['issues'])})" if row["state"] == "skipped" else row["state"]


@documents.command("show")
@click.argument("document_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def show_document(obj: dict, document_id: str, as_json: bool) -> None:
    """One document's catalog entry and its chunks."""
    with open_kb(obj["kb"]) as kb:
        record = _find(kb, document_id)
        data = document_to_dict(kb, record, with_chunks=True)
    if as_json:
        emit_json(data)
        return
    data["state"] = _state_text(data)
    for key, value in data.items():
        if key in TIME_FIELDS:
            value = _when(value)
        elif key == "readers":
            value = ", ".join(value) or "(nobody)"
        elif key == "access" and value is None:
            value = "(the recipe's default)"
        elif key == "access":
            value = ", ".join(value)
        if key not in ("chunk_texts", "metadata", "issues"):
            print_plain(f"{key:<14} {value}")
    if data.get("metadata"):
        print_plain(f"{'metadata':<14} {data['metadata']}")
    for chunk in data["chunk_texts"]:
        print_plain(f"  [{chunk['start']}:{chunk['end']}] {' '.join(chunk['text'].split())[:120]}")


def _find(kb: Any, document_id: str) -> Any:
    try:
        return kb.document(document_id)
    except KeyError:
        from heta_framework.errors import did_you_mean

        raise UserError(f"No document {document_id!r} in {kb.path}. {did_you_mean(document_id, kb.documents)}") from None


def _matching_sources(kb: Any, sources: tuple[str, ...]) -> list[str]:
    """Ids of documents whose source is one of ``sources`` or lies under one of them (a folder)."""
    wanted = [Path(s).resolve() for s in sources]
    found = []
    for record in kb.documents.values():
        source = Path(record.source)
        if any(source == w or source.is_relative_to(w) for w in wanted):
            found.append(record.id)
    return found


@click.command()
@click.argument("document_ids", nargs=-1)
@click.option("--source", "sources", multiple=True, type=click.Path(), help="Remove the documents from this file or folder; repeat for more.")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@click.option("--wait", type=click.FloatRange(min=0), default=None, help=WAIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def remove(obj: dict, document_ids: tuple[str, ...], sources: tuple[str, ...], dry_run: bool, wait: float | None, as_json: bool) -> None:
    """Remove documents (by id, or by --source) and everything derived from them, from every store.

    A removed document stays removed: `heta build` of its folder does not add it back unless
    its file changed or the build has --force.
    """
    if not document_ids and not sources:
        raise click.UsageError("Name document ids, or --source PATH (see `heta documents`).")
    with open_kb(obj["kb"]) as kb:
        for document_id in document_ids:
            _find(kb, document_id)
        matched = _matching_sources(kb, sources)
        if sources and not matched:
            raise UserError(f"No document of {kb.path} comes from {', '.join(sources)}. See `heta documents`.")
        ids = list(dict.fromkeys([*document_ids, *matched]))
        derived = kb.sync.run(kb.removal_preview(ids)) if dry_run else {}
        records = kb.sync.delete_documents(ids, dry_run=dry_run, wait=wait, actor=cli_actor())
        removed = [{"id": r.id, "source": r.source} for r in records]
    if as_json:
        emit_json({"dry_run": dry_run, "documents": removed, **({"derived": derived} if dry_run else {})})
        return
    verb = "Would remove" if dry_run else "Removed"
    for item in removed:
        print_plain(f"{verb} {item['id']}  {item['source']}")
    for step, counts in derived.items():
        print_plain(f"  {step}: " + ", ".join(f"{name.replace('_', ' ')} {n}" for name, n in counts.items()))


@click.command("access")
@click.argument("document_ids", nargs=-1, required=True)
@click.option("--set", "principals", multiple=True, metavar="PRINCIPAL", help="The new access list (repeat for more; 'public' for everyone).")
@click.option("--default", "to_default", is_flag=True, help="Drop the documents' own lists: the recipe's [access] default applies.")
@click.option("--wait", type=click.FloatRange(min=0), default=None, help=WAIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def access(obj: dict, document_ids: tuple[str, ...], principals: tuple[str, ...], to_default: bool, wait: float | None, as_json: bool) -> None:
    """Show or change who may read documents. Changing it re-embeds nothing; the next query follows it."""
    if principals and to_default:
        raise click.UsageError("Use --set PRINCIPAL or --default, not both.")
    with open_kb(obj["kb"]) as kb:
        for document_id in document_ids:
            _find(kb, document_id)
        if principals or to_default:
            kb.set_access(list(document_ids), None if to_default else list(principals), wait=wait, actor=cli_actor())
        rows = [{"id": d, "access": kb.document(d).access, "readers": list(kb.readers(d))} for d in dict.fromkeys(document_ids)]
    if as_json:
        emit_json({"documents": rows})
        return
    for row in rows:
        own = "" if row["access"] is not None else "  (the recipe's default)"
        print_plain(f"{row['id']}  {', '.join(row['readers']) or '(nobody)'}{own}")


def cli_actor() -> str:
    """Who runs the command, for the audit log: the operating-system user."""
    import getpass

    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # a container user without a passwd entry
        return "cli:unknown"


@click.command()
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@click.option("--wait", type=click.FloatRange(min=0), default=None, help=WAIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def delete(obj: dict, dry_run: bool, wait: float | None, as_json: bool) -> None:
    """Remove everything the build created (raw inputs and the recipe are kept)."""
    with open_kb(obj["kb"]) as kb:
        plan = kb.delete(dry_run=dry_run, wait=wait)
    if as_json:
        emit_json({"dry_run": dry_run, "paths": list(plan.paths), "kept": list(plan.kept)})
        return
    verb = "Would remove" if dry_run else "Removed"
    for path in plan.paths:
        print_plain(f"{verb} {path}")
    print_plain(f"Kept: {', '.join(plan.kept)}")


@click.command()
@click.option("--wait", type=click.FloatRange(min=0), default=None, help=WAIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def compact(obj: dict, wait: float | None, as_json: bool) -> None:
    """Make removed documents' text physically gone: merge index segments, VACUUM the SQLite files."""
    with open_kb(obj["kb"]) as kb:
        report = kb.compact(wait=wait)
    data = attrs.asdict(report)
    if as_json:
        emit_json(data)
        return
    print_plain(f"Compacted {', '.join(report.stores) or 'no stores'}; SQLite files: {', '.join(report.sqlite_files) or 'none'}.")
    print_plain(f"Folder size {report.bytes_before:,} -> {report.bytes_after:,} bytes.")
    if report.busy_files:
        print_plain(f"A reader held an old snapshot of {', '.join(report.busy_files)}: run `heta compact` again later.")


COMMANDS = (build, documents, access, remove, delete, compact)
