// Home: what this knowledge base is, how big, its last build and its issues, and which modes run.
"use strict";

import {el, table, when} from "./dom.js";

function count(label, value, note) {
  return el("div", {class: "count"}, el("span", {class: "count-value"}, value === null || value === undefined ? "–" : String(value)),
    el("span", {class: "count-label"}, label), note ? el("span", {class: "count-note"}, note) : null);
}

function lastBuild(build) {
  if (!build) return el("p", {}, "Nothing is built yet: ", el("code", {}, "heta build PATH"), " adds documents.");
  const box = el("div", {});
  box.append(el("p", {}, "Build run " + build.id + ": " + build.status + ", " + build.documents + " document(s), finished " +
    (when(build.finished) || "—") + "."));
  if (!build.issue_count) box.append(el("p", {class: "ok"}, "No issues."));
  else {
    box.append(el("p", {}, build.issue_count + " issue(s)" + (build.issue_count > build.issues.length ? ", the first " + build.issues.length : "") + ":"));
    box.append(el("ul", {class: "issues"}, build.issues.map((issue) =>
      el("li", {}, el("span", {class: "sev sev-" + issue.severity}, issue.severity), " ", issue.message, " ",
        el("code", {class: "code"}, issue.code), issue.subject && issue.subject.type === "document"
          ? el("span", {}, " — ", el("a", {href: "#/documents/" + encodeURIComponent(issue.subject.id)}, issue.subject.id)) : null))));
  }
  return box;
}

function modes(summary) {
  const rows = summary.modes.map((row) => [
    el("span", {}, el("code", {}, row.mode), row.mode === summary.default_mode ? el("span", {class: "badge"}, "default") : null),
    row.available ? el("span", {class: "ok"}, "available") : el("span", {}, "unavailable: " + (row.reasons.join("; ") || "not built") +
      (row.install ? " — " + row.install : "")),
    row.provided_by || "",
  ]);
  return table(null, ["mode", "status", "provided by"], rows);
}

export async function render(view, {summary}) {
  const docs = summary.documents;
  const states = Object.entries(docs).filter(([state]) => state !== "total").map(([state, n]) => n + " " + state).join(", ");
  view.append(
    el("h1", {}, summary.default_kb ? summary.folder : summary.name),
    el("section", {class: "counts", "aria-label": "Size"},
      count("documents", docs.total, states),
      count("chunks", summary.chunks),
      count("entities", summary.entities, summary.entities === null ? "no graph" : null)),
    el("p", {class: "actions"}, el("a", {class: "button", href: "#/search"}, "Search"), " ",
      el("a", {class: "button secondary", href: "#/documents"}, "Browse documents"),
      summary.entities ? el("a", {class: "button secondary", href: "#/graph"}, "Explore the graph") : null),
    el("h2", {}, "Last build"), lastBuild(summary.last_build),
    el("h2", {}, "Query modes"),
    el("p", {}, "Searches run ", el("code", {}, summary.default_mode || "nothing yet"), " unless you pick another mode; " +
      (summary.answers ? "a language model is configured, so searches can answer." : "no language model is configured, so searches return results without an answer.")),
    modes(summary));
}
