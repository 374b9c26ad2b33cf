// the search page's script (a file of its own: the page's Content-Security-Policy allows no inline script)
"use strict";
const $ = (id) => document.getElementById(id);
let modeRows = [];

function headers() {
  const h = {"Content-Type": "application/json"};
  const token = sessionStorage.getItem("heta-token");
  if (token) h["Authorization"] = "Bearer " + token;
  return h;
}

async function api(path, body) {
  const response = await fetch(path, body === undefined ? {headers: headers()} : {method: "POST", headers: headers(), body: JSON.stringify(body)});
  const data = await response.json().catch(() => ({error: {code: "BadResponse", message: "The server did not answer with JSON."}}));
  if (response.status === 401) $("auth").classList.add("shown");
  if (!response.ok) throw new Error((data.error && (data.error.code + ": " + data.error.message)) || response.statusText);
  return data;
}

function status(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

// the text with each query word marked; built from text nodes, so nothing in a document is ever parsed as HTML
function highlighted(text, query) {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) || [];
  const node = document.createElement("div");
  node.className = "text";
  if (!words.length) { node.textContent = text; return node; }
  // a Latin word is marked only as a whole word ("who" not inside "blowhole"); CJK text has no spaces to go by
  const escaped = words.map((w) => {
    const literal = w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return /^[a-z0-9]+$/.test(w) ? "(?<![\\p{L}\\p{N}])" + literal + "(?![\\p{L}\\p{N}])" : literal;
  });
  const pattern = new RegExp("(" + escaped.join("|") + ")", "giu");
  for (const [i, piece] of text.split(pattern).entries()) {
    if (i % 2 === 1) { const mark = document.createElement("mark"); mark.textContent = piece; node.append(mark); }
    else node.append(document.createTextNode(piece));
  }
  return node;
}

function resultNode(item, query) {
  const box = document.createElement("div");
  box.className = "result";
  const meta = document.createElement("div");
  meta.className = "meta";
  const parts = [item.source || item.document_id || item.id];
  if (item.score !== undefined && item.score !== null) parts.push("score " + Number(item.score).toFixed(4));
  if (item.extra) parts.push(item.extra);
  meta.textContent = parts.join(" · ");
  box.append(meta, highlighted(item.text, query));
  return box;
}

async function loadModes() {
  try {
    modeRows = (await api("/api/v1/modes")).modes;
  } catch (error) { status(error.message, true); return; }
  const select = $("mode");
  select.replaceChildren();
  for (const row of modeRows) {
    const option = document.createElement("option");
    option.value = row.mode;
    option.textContent = row.available ? row.mode : row.mode + " (unavailable)";
    option.dataset.available = row.available ? "yes" : "no";
    select.append(option);
  }
  const wanted = new URLSearchParams(location.search).get("mode");
  const firstAvailable = modeRows.find((r) => r.available);
  select.value = wanted || (firstAvailable ? firstAvailable.mode : "");
}

async function search(event) {
  if (event) event.preventDefault();
  const query = $("q").value.trim();
  const mode = $("mode").value;
  const topK = Number($("top_k").value) || 10;
  $("results").replaceChildren();
  $("related").replaceChildren();
  $("related-block").hidden = true;
  if (!query) { status("Type a question first."); return; }
  const row = modeRows.find((r) => r.mode === mode);
  if (row && !row.available) {
    status("Mode " + mode + " is unavailable: " + (row.reasons.join("; ") || "not built") + (row.install ? " — " + row.install : ""), true);
    return;
  }
  status("Searching…");
  const started = performance.now();
  try {
    let items, related = [], issues = [];
    if (mode === "memory_search") {
      const data = await api("/api/v1/search", {query, top_k: topK});
      items = data.results.map((r) => ({
        id: r.memory.id, text: r.memory.content, source: r.memory.source, score: r.score,
        extra: "recency " + r.recency_score.toFixed(2) + " · importance " + r.importance_score_normalized.toFixed(2) + " · relevance " + r.relevance_score.toFixed(2),
      }));
      related = data.related.map((r) => ({id: r.id, text: r.content, source: (r.metadata && r.metadata.source) || r.document_id, extra: "via " + r.via_entity}));
      issues = data.issues || [];
    } else {
      const data = await api("/api/v1/query", {text: query, mode, top_k: topK});
      items = data.results.map((r) => ({
        id: r.id, text: r.text, score: r.score, source: (r.metadata && r.metadata.source) || (r.kind !== "chunk" ? r.kind : ""),
      }));
      issues = (data.metadata && data.metadata.issues) || [];
    }
    const ms = Math.round(performance.now() - started);
    status(items.length + " result" + (items.length === 1 ? "" : "s") + " from " + mode + " in " + ms + " ms" +
      (issues.length ? " — " + issues.map((i) => i.code).join(", ") : ""));
    for (const item of items) $("results").append(resultNode(item, query));
    if (mode === "memory_search") {
      $("related-block").hidden = false;
      if (!related.length) $("related").textContent = "No related memories.";
      for (const item of related) $("related").append(resultNode(item, query));
    }
  } catch (error) {
    status(error.message, true);
  }
}

$("search").addEventListener("submit", search);
$("save-token").addEventListener("click", () => {
  sessionStorage.setItem("heta-token", $("token").value);
  $("auth").classList.remove("shown");
  loadModes();
});

// a link may carry the token in its fragment (/#token=...): fragments never reach a server or its logs; the
// token moves to this tab's session storage and out of the address bar
function tokenFromFragment() {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  if (!token) return;
  sessionStorage.setItem("heta-token", token);
  history.replaceState(null, "", location.pathname + location.search);
}

(async () => {
  tokenFromFragment();
  await loadModes();
  const q = new URLSearchParams(location.search).get("q");
  if (q) { $("q").value = q; await search(); }
})();
