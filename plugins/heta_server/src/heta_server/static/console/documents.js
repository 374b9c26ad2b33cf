// Documents: the catalog a page at a time, one document with its chunks, and upload and removal when the token may write.
"use strict";

import {api} from "./api.js";
import {bytes, el, table, when} from "./dom.js";
import {renderMarkdown} from "./markdown.js";

const PAGE = 50;

function stateCell(row) {
  const codes = (row.issues || []).map((issue) => issue.code);
  return el("span", {}, el("span", {class: "state state-" + row.state}, row.state),
    codes.length ? el("span", {class: "issue-codes"}, " ", codes.map((code) => el("code", {class: "code"}, code))) : null);
}

function pager(data, hashFor) {
  const nav = el("nav", {class: "pager", "aria-label": "Pages"});
  const shown = data.total ? (data.offset + 1) + "–" + Math.min(data.total, data.offset + data.limit) + " of " + data.total : "0";
  if (data.offset > 0) nav.append(el("a", {href: hashFor(Math.max(0, data.offset - data.limit))}, "Previous"), " ");
  nav.append(el("span", {}, shown));
  if (data.next_offset !== null && data.next_offset !== undefined) nav.append(" ", el("a", {href: hashFor(data.next_offset)}, "Next"));
  return nav;
}

// waits for a write job (GET /jobs/{id}) to finish; the job's own error message when it failed
async function finished(job, status, what) {
  for (let i = 0; i < 600; i++) {
    const current = (await api("/jobs/" + encodeURIComponent(job.id))).job;
    if (current.status === "done") return current;
    if (current.status === "failed" || current.status === "interrupted") throw new Error(what + " failed: " + ((current.error && current.error.message) || "see the server log"));
    const stage = (current.progress || []).at(-1);  // the build's current step, as `heta build` shows it
    status(what + "… " + (stage ? stage.stage + (stage.total ? " " + stage.done + "/" + stage.total : "") : current.status));
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
  throw new Error(what + " is still running; reload the page later.");
}

function uploadForm({status, refresh, go}) {
  const file = el("input", {id: "upload-file", type: "file", name: "file", required: true});
  const form = el("form", {id: "upload", class: "upload"},
    el("label", {for: "upload-file"}, "Add a document"), file, el("button", {type: "submit"}, "Upload"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!file.files.length) { status("Choose a file first.", true); return; }
    const body = new FormData();
    body.append("file", file.files[0]);
    try {
      status("Uploading " + file.files[0].name + "…");
      const {job} = await api("/documents/upload", {method: "POST", form: body});
      await finished(job, status, "Building " + file.files[0].name);
      await refresh();
      go("#/documents?added=" + encodeURIComponent(job.documents[0] || ""));
    } catch (error) {
      status((error.code ? error.code + ": " : "") + error.message, true);
    }
  });
  return form;
}

async function catalog(view, {summary, params, status, refresh, go}) {
  const text = params.get("q") || "";
  const offset = Math.max(0, Number(params.get("offset")) || 0);
  const data = await api("/console/documents?" + new URLSearchParams({q: text, offset, limit: PAGE}));
  const filter = el("input", {id: "doc-filter", type: "search", name: "q", value: text});
  const form = el("form", {class: "filter", role: "search"}, el("label", {for: "doc-filter"}, "Filter by name"), filter,
    el("button", {type: "submit"}, "Filter"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    go("#/documents?" + new URLSearchParams({q: filter.value.trim()}));
  });
  const hashFor = (at) => "#/documents?" + new URLSearchParams({q: text, offset: at});
  view.append(el("h1", {}, "Documents"));
  if (summary.may_write) view.append(uploadForm({status, refresh, go}));
  view.append(form);
  if (params.get("added")) status("Added " + params.get("added") + ".");
  if (!data.documents.length) {
    view.append(el("p", {}, text ? "No document's name contains “" + text + "”." : "No documents yet."));
    return;
  }
  view.append(table(null, ["name", "state", "size", "chunks", "added", "updated"], data.documents.map((row) => [
    row.state === "removed" ? row.name : el("a", {href: "#/documents/" + encodeURIComponent(row.id)}, row.name), stateCell(row),
    bytes(row.size), row.state === "removed" ? "" : String(row.chunks),
    when(row.added), when(row.updated),
  ])), pager(data, hashFor));
}

function removeControls(record, {status, refresh, go}) {
  const box = el("div", {class: "remove"});
  const ask = el("button", {type: "button", id: "remove", class: "danger"}, "Remove this document");
  ask.addEventListener("click", () => {
    const confirm = el("button", {type: "button", id: "remove-confirm", class: "danger"}, "Yes, remove " + record.name);
    const cancel = el("button", {type: "button", class: "secondary", onclick: () => box.replaceChildren(ask)}, "Cancel");
    confirm.addEventListener("click", async () => {
      try {
        status("Removing " + record.name + "…");
        const {job} = await api("/documents/" + encodeURIComponent(record.id), {method: "DELETE"});
        await finished(job, status, "Removing " + record.name);
        await refresh();
        go("#/documents?removed=" + encodeURIComponent(record.id));
        status("Removed " + record.name + ".");
      } catch (error) {
        status((error.code ? error.code + ": " : "") + error.message, true);
      }
    });
    box.replaceChildren(el("p", {}, "Its chunks, vectors and the graph facts only it supports go too."), confirm, " ", cancel);
    confirm.focus();
  });
  box.append(ask);
  return box;
}

async function documentPage(view, id, {summary, params, status, refresh, go}) {
  const wanted = params.get("chunk");
  const asked = {offset: Math.max(0, Number(params.get("offset")) || 0), limit: PAGE, ...(wanted ? {chunk: wanted} : {})};
  const data = await api("/console/documents/" + encodeURIComponent(id) + "?" + new URLSearchParams(asked));
  const offset = data.offset;
  view.append(el("p", {class: "crumbs"}, el("a", {href: "#/documents"}, "Documents"), " / "), el("h1", {}, data.name));
  const facts = [
    ["id", data.id], ["state", stateCell(data)], ["size", bytes(data.size)], ["chunks", String(data.chunks)],
    ["added", when(data.added)], ["updated", when(data.updated)], ["readers", data.readers.join(", ")], ["source", data.source],
  ];
  view.append(el("dl", {class: "facts"}, facts.map(([name, value]) => [el("dt", {}, name), el("dd", {}, value)])));
  if (data.issues.length) {
    view.append(el("h2", {}, "Issues"), el("ul", {class: "issues"}, data.issues.map((issue) =>
      el("li", {}, el("span", {class: "sev sev-" + issue.severity}, issue.severity), " ", issue.message, " ", el("code", {class: "code"}, issue.code)))));
  }
  if (data.entities.length) {
    view.append(el("h2", {}, "Entities"), el("ul", {class: "entities"}, data.entities.map((entity) =>
      el("li", {}, el("a", {href: "#/graph?entity=" + encodeURIComponent(entity.id)}, entity.name), " ", el("span", {class: "muted"}, entity.type)))));
  }
  if (summary.may_write) view.append(removeControls(data, {status, refresh, go}));
  view.append(el("h2", {}, "Chunks"));
  const list = el("ol", {class: "chunks", start: offset + 1});
  for (const chunk of data.chunk_texts) {
    const item = el("li", {id: "chunk-" + chunk.id, class: "chunk" + (chunk.id === wanted ? " wanted" : ""), tabindex: "-1"},
      el("p", {class: "meta"}, chunk.location + " · characters " + chunk.start + "–" + chunk.end + " · " + chunk.id),
      renderMarkdown(chunk.text));
    list.append(item);
  }
  view.append(list);
  if (data.next_offset !== null || offset > 0) {
    view.append(pager({...data, total: data.chunks}, (at) => "#/documents/" + encodeURIComponent(id) + "?offset=" + at));
  }
  const target = wanted && document.getElementById("chunk-" + wanted);
  if (target) { target.focus(); target.scrollIntoView({block: "center"}); }
}

export async function render(view, context) {
  if (context.params.get("removed")) context.status("Removed " + context.params.get("removed") + ".");
  if (context.rest.length && context.rest[0]) return documentPage(view, context.rest.join("/"), context);
  return catalog(view, context);
}
