"""``heta modes`` and ``heta query``."""

from __future__ import annotations

import json
from typing import Any

import click

from heta_framework.builtin.engines.calibration import fusion_note, stored_calibrations
from heta_framework.cli.common import open_kb
from heta_framework.cli.output import console, emit_json, table
from heta_framework.distribution import CORE_DISTRIBUTION
from heta_framework.plugins.known import known_distribution, known_modes


def _installed_distributions(kb: Any) -> set[str]:
    return {CORE_DISTRIBUTION} | {info.distribution for info in kb.registry.plugins}


def _with_install_hints(reasons: list[str], installed: set[str]) -> list[str]:
    """Each 'asset X is not built' whose step comes from a plugin that is not installed says what to install."""
    hinted = []
    for reason in reasons:
        words = reason.split()
        asset = words[1] if len(words) > 2 and words[0] == "asset" else ""
        distribution = known_distribution(asset.split(":")[0]) if asset else None
        if distribution and distribution not in installed:
            reason += f" (its step comes from {distribution}, which is not installed: pip install {distribution})"
        hinted.append(reason)
    return hinted


def mode_rows(kb: Any) -> list[dict[str, Any]]:
    """Every mode: registered ones with their status, then first-party modes whose plugin is not installed."""
    installed = _installed_distributions(kb)
    available = set(kb.available_queries)
    unavailable = kb.unavailable_queries()
    calibrations = stored_calibrations(kb)
    rows = [
        {
            "mode": mode,
            "available": mode in available,
            "reasons": _with_install_hints(unavailable.get(mode, []), installed),
            "provided_by": kb.query_engines.provider_of(mode),
            "install": None,
            "aliases": kb.query_engines.aliases_of(mode),
            **({"fusion": calibrations[mode].to_dict() if calibrations[mode] else None} if mode in calibrations else {}),
            **({"note": note} if (note := fusion_note(calibrations.get(mode), mode)) else {}),
        }
        for mode in kb.query_engines.modes
    ]
    for mode, distribution in known_modes().items():
        if mode not in kb.query_engines.modes:
            rows.append({
                "mode": mode,
                "available": False,
                "reasons": [f"plugin {distribution} is not installed"],
                "provided_by": distribution,
                "install": f"pip install {distribution}",
                "aliases": [],
            })
    return rows


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def modes(obj: dict, as_json: bool) -> None:
    """Available query modes, why the others are not, what to install for them, and the other names they answer to."""
    with open_kb(obj["kb"]) as kb:
        rows = mode_rows(kb)
    if as_json:
        emit_json({"modes": rows})
        return
    table(
        "Query modes",
        ["mode", "also called", "status", "provided by"],
        [
            [row["mode"], ", ".join(row["aliases"]),
             ("available" + (f" ({row['note']})" if "note" in row else "")) if row["available"] else "unavailable: " + "; ".join(row["reasons"]),
             row["provided_by"]]
            for row in rows
        ],
    )


def parse_pairs(items: tuple[str, ...], what: str, parse_value: Any = str) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; a key given twice collects a list (``--filter name=a --filter name=b``)."""
    parsed: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint=what)
        key, value = key.strip(), parse_value(value)
        if key in parsed:
            previous = parsed[key]
            parsed[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            parsed[key] = value
    return parsed


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


@click.command()
@click.argument("text")
@click.option("--mode", "-m", default=None, help="Query mode (default: the best available; --json says which ran).")
@click.option("--top-k", "-k", default=5, show_default=True, type=click.IntRange(min=1))
@click.option("--filter", "filters", multiple=True, help="KEY=VALUE metadata filter; repeat a key for any of several values.")
@click.option("--option", "options", multiple=True, help="KEY=JSON engine option, e.g. rrf_k=60; repeat for more.")
@click.option("--answer", is_flag=True, help="Ask the language model for a grounded answer.")
@click.option("--trace", is_flag=True, help="Include the query trace.")
@click.option("--as", "principals", multiple=True, metavar="PRINCIPAL",
              help="Query as this principal (repeat for a user and their groups); without it only public documents are seen.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (QueryResponse.to_dict()).")
@click.pass_obj
def query(obj: dict, text: str, mode: str | None, top_k: int, filters: tuple[str, ...], options: tuple[str, ...], answer: bool, trace: bool,
          principals: tuple[str, ...], as_json: bool) -> None:
    """Query the knowledge base."""
    from heta_framework.cli.render import render_response

    parsed_filters = parse_pairs(filters, "--filter")
    parsed_options = parse_pairs(options, "--option", _json_or_text)
    if answer:
        parsed_options["answer"] = True
    with open_kb(obj["kb"]) as kb:
        response = kb.sync.query(text, mode=mode, top_k=top_k, filters=parsed_filters, options=parsed_options, trace=trace,
                                 principals=principals)
    if as_json:
        emit_json(response.to_dict())
    else:
        render_response(console(), response.metadata.get("mode", mode or ""), response)


COMMANDS = (modes, query)
