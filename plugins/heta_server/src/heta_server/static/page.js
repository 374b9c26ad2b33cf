// The console: a page per view, picked by the address's fragment (#/search?q=..., #/documents/ID, ...).
// Every view builds its elements from text (console/dom.js); the Content-Security-Policy allows no inline script.
"use strict";

import {api, kbName, setToken, tokenFromFragment, whenUnauthorized} from "./console/api.js";
import * as home from "./console/home.js";
import * as search from "./console/search.js";
import * as documents from "./console/documents.js";
import * as graph from "./console/graph.js";
import * as evaluation from "./console/evaluation.js";

const VIEWS = {"": home, "search": search, "documents": documents, "graph": graph, "eval": evaluation};
const $ = (id) => document.getElementById(id);
let summary = null;

export function status(text, isError = false) {
  $("status").textContent = text || "";
  $("status").className = isError ? "error" : "";
}

// "#/documents/a%2Fb?offset=50" -> {view: "documents", rest: ["a/b"], params}
function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, query] = hash.split("?", 2);
  const [view, ...rest] = path.split("/");
  return {view: view || "", rest: rest.map(decodeURIComponent), params: new URLSearchParams(query || "")};
}

export function go(hash) {
  if (location.hash === hash) show();
  else location.hash = hash;
}

async function loadSummary() {
  summary = await api("/console/summary");
  const name = summary.default_kb ? summary.folder : summary.name;
  $("kb-name").textContent = name;
  document.title = name + " · Heta";
  await offerOtherKbs();
  return summary;
}

// a server with --kb-dir serves several knowledge bases: a caller may switch among the ones its token may use
async function offerOtherKbs() {
  if ($("kb-switch")) return;
  const {kbs} = await api("/api/v1/kbs");
  if (kbs.length < 2) return;
  const select = document.createElement("select");
  select.id = "kb-switch";
  for (const kb of kbs) {
    const option = document.createElement("option");
    option.value = kb.default ? "" : kb.name;
    option.textContent = kb.default ? kb.name + " (--kb)" : kb.name;
    select.append(option);
  }
  select.value = kbName || "";
  select.addEventListener("change", () => { location.href = "/" + (select.value ? "?kb=" + encodeURIComponent(select.value) : "") + "#/"; });
  const label = document.createElement("label");
  label.htmlFor = "kb-switch";
  label.className = "kb-switch-label";
  label.textContent = "Knowledge base";
  $("kb-name").after(" ", label, " ", select);
}

let showing = 0;
async function show() {
  const current = ++showing;
  const {view, rest, params} = route();
  const module = VIEWS[view] || home;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.view === (view || "home")) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  status("");
  const main = $("view");
  try {
    if (!summary) await loadSummary();
    if (current !== showing) return;
    main.replaceChildren();
    await module.render(main, {summary, rest, params, status, go, refresh: loadSummary});
  } catch (error) {
    if (current !== showing) return;
    status((error.code ? error.code + ": " : "") + error.message, true);
  }
}

whenUnauthorized(() => { $("auth").hidden = false; $("token").focus(); });
$("auth").addEventListener("submit", (event) => {
  event.preventDefault();
  setToken($("token").value);
  $("token").value = "";
  $("auth").hidden = true;
  summary = null;
  show();
});
window.addEventListener("hashchange", () => { if (!location.hash.startsWith("#token=")) show(); });

tokenFromFragment();
// the old search page's links (/?q=...&mode=...) open the search view
const legacy = new URLSearchParams(location.search);
if (legacy.get("q") && !location.hash) {
  const params = new URLSearchParams({q: legacy.get("q")});
  if (legacy.get("mode")) params.set("mode", legacy.get("mode"));
  history.replaceState(null, "", location.pathname + (kbName ? "?kb=" + encodeURIComponent(kbName) : "") + "#/search?" + params);
}
show();
