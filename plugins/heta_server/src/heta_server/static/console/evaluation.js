// Evaluation: the latest `heta eval` of this knowledge base, as its table and its chart.
"use strict";

import {api} from "./api.js";
import {el, table, when} from "./dom.js";

const cell = (value, digits = 3) => (value === null || value === undefined ? "" : Number(value).toFixed(digits));

export async function render(view) {
  view.append(el("h1", {}, "Evaluation"));
  const data = await api("/console/eval");
  if (data.hidden) {
    view.append(el("p", {}, "An evaluation scores every document; this token may not read all of them, so its results are not shown."));
    return;
  }
  const report = data.report;
  if (!report) {
    view.append(el("p", {}, "No evaluation of this knowledge base yet. Run ", el("code", {}, "heta --kb KB eval self"),
      " (pseudo-queries from its own chunks) or with a labelled set, from the folder that holds the knowledge base; the results appear here."));
    return;
  }
  const metrics = [...new Set(report.results.flatMap((row) => Object.keys(row.metrics || {}).filter((name) => row.metrics[name] !== null)))];
  const calls = report.results.some((row) => row.llm_calls_per_query !== null && row.llm_calls_per_query !== undefined);
  const columns = ["mode", "queries", ...metrics, "p50 ms", "p95 ms", ...(calls ? ["LLM calls/query"] : [])];
  const rows = report.results.map((row) => [
    el("code", {}, row.mode), String(row.queries) + (row.errors ? " (" + row.errors + " failed)" : ""),
    ...metrics.map((name) => cell(row.metrics[name])), cell(row.p50_ms, 1), cell(row.p95_ms, 1),
    ...(calls ? [cell(row.llm_calls_per_query, 2)] : []),
  ]);
  view.append(el("p", {}, "Set ", el("strong", {}, report.dataset), ", k=" + report.k + ", finished " + when(report.finished) + "."),
    table("Quality and latency by mode", columns, rows));
  for (const [recipe, skipped] of Object.entries(report.skipped || {})) {
    for (const [mode, reason] of Object.entries(skipped)) view.append(el("p", {class: "muted"}, "Skipped " + mode + " (" + recipe + "): " + reason));
  }
  if (report.chart) {
    view.append(el("figure", {class: "chart"}, el("img", {src: report.chart, alt: "Chart of each mode's quality against its latency (" + report.dataset + ")"}),
      el("figcaption", {}, "Quality against latency, as heta eval drew it (chart.png).")));
  }
}
