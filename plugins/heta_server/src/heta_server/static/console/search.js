// Search: one box, the API's default mode, results with where they came from, and the answer when a model can write one.
"use strict";

import {api, streamQuery} from "./api.js";
import {el, queryWords, wordPattern} from "./dom.js";
import {renderMarkdown, snippet} from "./markdown.js";

const MEMORY = "memory_search";

function modeSelect(summary, chosen) {
  const select = el("select", {id: "mode", name: "mode"});
  for (const row of summary.modes) {
    select.append(el("option", {value: row.mode, "data-available": row.available ? "yes" : "no"},
      row.mode + (row.mode === summary.default_mode ? " (default)" : "") + (row.available ? "" : " (unavailable)")));
  }
  select.value = chosen || summary.default_mode || "";
  return select;
}

function baseName(path) { return String(path || "").split(/[\\/]/).pop(); }

function docLink(documentId, chunkId, label = "Open document") {
  if (!documentId) return null;
  const hash = "#/documents/" + encodeURIComponent(documentId) + (chunkId ? "?chunk=" + encodeURIComponent(chunkId) : "");
  return el("a", {href: hash, class: "doc-link"}, label);
}

function foundBy(result) {
  const ranks = (result.metadata && result.metadata.fusion_ranks) || {};
  const sources = result.sources || [];
  if (!sources.length) return null;
  return el("span", {class: "found-by"}, "found by " + sources.map((mode) => mode + (ranks[mode] ? " #" + ranks[mode] : "")).join(", "));
}

function scoreBars(item) {
  const bar = (label, value) => el("span", {class: "bar"},
    el("label", {}, label, " ", el("meter", {min: 0, max: 1, value: Number(value || 0).toFixed(3)}), " ", Number(value || 0).toFixed(2)));
  return el("div", {class: "scores", "aria-label": "memory scores"},
    bar("recency", item.recency_score), bar("importance", item.importance_score_normalized), bar("relevance", item.relevance_score));
}

// one result, from /query (a QueryResult's JSON) or /search (a memory)
function resultCard(result, pattern, rank) {
  const metadata = result.metadata || {};
  const isFact = result.kind && result.kind !== "chunk";
  const title = isFact ? (metadata.name || result.id) : (metadata.name || baseName(metadata.source) || result.document_id || metadata.document_id || result.id);
  const card = el("article", {class: "result", id: "result-" + rank, tabindex: "-1", "data-result-id": result.id});
  card.append(el("h3", {class: "result-title"}, el("span", {class: "rank"}, rank + "."), " ", title,
    isFact ? el("span", {class: "badge"}, result.kind + (metadata.type ? " · " + metadata.type : "")) : null));
  const meta = el("p", {class: "meta"});
  const parts = [];
  if (result.location) parts.push(el("span", {class: "location"}, result.location));
  if (result.score !== undefined && result.score !== null) parts.push(el("span", {class: "score"}, "score " + Number(result.score).toFixed(4)));
  const by = foundBy(result);
  if (by) parts.push(by);
  parts.forEach((part, i) => { if (i) meta.append(" · "); meta.append(part); });
  card.append(meta);
  card.append(renderMarkdown(snippet(result.text || "", pattern), pattern));
  if (result.recency_score !== undefined) card.append(scoreBars(result));
  const links = el("p", {class: "links"});
  const documentId = result.document_id || metadata.document_id;
  if (!isFact) links.append(docLink(documentId, result.id) || "");
  if (metadata.entity_id) links.append(el("a", {href: "#/graph?entity=" + encodeURIComponent(metadata.entity_id)}, "Explore in graph"));
  for (const [i, evidence] of (result.evidence || []).slice(0, 3).entries()) {
    const em = evidence.metadata || {};
    if (i || metadata.entity_id) links.append(" · ");
    links.append(docLink(em.document_id, evidence.id, "evidence: " + (evidence.location || em.name || em.document_id)) || "");
  }
  if (links.childNodes.length) card.append(links);
  return card;
}

function memoryItem(memory) {
  const m = memory.memory;
  return {id: m.id, text: m.content, document_id: m.document_id, score: memory.score, location: m.location,
    metadata: {...m.metadata, source: m.source, document_id: m.document_id}, sources: memory.sources,
    recency_score: memory.recency_score, importance_score_normalized: memory.importance_score_normalized, relevance_score: memory.relevance_score};
}

function answerBlock() {
  const text = el("div", {class: "answer-text"});
  const block = el("section", {class: "answer", "aria-label": "Answer", "aria-busy": "true"}, el("h2", {}, "Answer"), text);
  return {block, text};
}

// the answer's text with each [n] marker a link to the result it cites
function finishAnswer(answer, data, resultIds) {
  answer.block.setAttribute("aria-busy", "false");
  answer.text.replaceChildren();
  if (!data.answer) { answer.text.append(el("p", {class: "muted"}, "No answer.")); return; }
  const byMarker = Object.fromEntries((data.citations || []).map((c) => [c.marker, c]));
  const paragraph = el("p", {});
  for (const piece of data.answer.split(/(\[\d+\])/)) {
    const citation = byMarker[piece];
    const rank = citation ? resultIds.indexOf(citation.result_id) + 1 : 0;
    if (citation && rank > 0) {
      paragraph.append(el("a", {href: "#result-" + rank, class: "cite", "data-rank": rank, onclick: (event) => {
        event.preventDefault();
        document.getElementById("result-" + rank).focus();
      }}, piece));
    } else paragraph.append(piece);
  }
  answer.text.append(paragraph);
}

function issuesText(issues) {
  return (issues || []).map((issue) => (issue.message || issue.code) + " (" + issue.code + ")").join("; ");
}

async function run(view, summary, {query, mode, topK, wantAnswer, remember}, status) {
  const row = summary.modes.find((r) => r.mode === mode);
  if (row && !row.available) {
    status("Mode " + mode + " is unavailable: " + (row.reasons.join("; ") || "not built") + (row.install ? " — " + row.install : ""), true);
    return;
  }
  const pattern = wordPattern(queryWords(query));
  const results = el("section", {id: "results", "aria-labelledby": "results-heading"}, el("h2", {id: "results-heading", class: "visually-hidden"}, "Results"));
  status("Searching…");
  const started = performance.now();
  const done = (count, issues) => {
    const note = issuesText(issues);
    status(count + " result" + (count === 1 ? "" : "s") + " from " + mode + " in " + Math.round(performance.now() - started) + " ms" +
      (note ? " — " + note : ""));
  };
  if (mode === MEMORY) {
    // looking at results is not recalling them: a page view strengthens the memories' recency only when asked
    const data = await api("/search", {method: "POST", body: {query, top_k: topK, update_access: Boolean(remember)}});
    const items = data.results.map(memoryItem);
    items.forEach((item, i) => results.append(resultCard(item, pattern, i + 1)));
    view.append(results);
    const related = el("section", {id: "related", "aria-label": "Related"}, el("h2", {}, "Related"));
    if (!data.related.length) related.append(el("p", {class: "muted"}, "No related memories."));
    for (const [i, r] of data.related.entries()) {
      related.append(resultCard({id: r.id, text: r.content, document_id: r.document_id, metadata: {...(r.metadata || {}), document_id: r.document_id},
        sources: r.via_entity ? ["via " + r.via_entity] : []}, pattern, "r" + (i + 1)));
    }
    view.append(related);
    done(items.length, data.issues);
    return;
  }
  const body = {text: query, mode, top_k: topK};
  if (!wantAnswer) {
    const data = await api("/query", {method: "POST", body});
    data.results.forEach((result, i) => results.append(resultCard(result, pattern, i + 1)));
    view.append(results);
    done(data.results.length, data.metadata && data.metadata.issues);
    return;
  }
  const answer = answerBlock();
  view.append(answer.block, results);
  let resultIds = [];
  let issues = [];
  await streamQuery({...body, answer: true}, (name, data) => {
    if (name === "results") {
      resultIds = data.results.map((r) => r.id);
      data.results.forEach((result, i) => results.append(resultCard(result, pattern, i + 1)));
      issues = (data.metadata && data.metadata.issues) || [];
      done(resultIds.length, issues);
      status("Writing the answer…");
    } else if (name === "token") {
      answer.text.append(data.text);
    } else if (name === "done" || name === "error") {
      finishAnswer(answer, data, resultIds);
      done(resultIds.length, data.issues);
      if (name === "error") status("The answer stopped: " + data.error.message, true);
    }
  });
}

export async function render(view, {summary, params, status, go}) {
  const query = params.get("q") || "";
  const mode = params.get("mode") || summary.default_mode || "";
  const topK = Math.max(1, Math.min(100, Number(params.get("k")) || 10));
  const input = el("input", {id: "q", name: "q", type: "search", value: query, placeholder: "Ask the knowledge base", autocomplete: "off"});
  const select = modeSelect(summary, mode);
  const k = el("input", {id: "top_k", name: "k", type: "number", min: 1, max: 100, value: topK});
  const answer = summary.answers ? el("input", {id: "answer", type: "checkbox", checked: params.get("answer") !== "no"}) : null;
  const memory = summary.modes.some((row) => row.mode === MEMORY && row.available);
  const remember = memory ? el("input", {id: "remember", type: "checkbox", checked: params.get("remember") === "yes"}) : null;
  const form = el("form", {id: "search", role: "search"},
    el("label", {for: "q", class: "visually-hidden"}, "Question"), input,
    el("span", {class: "field"}, el("label", {for: "mode", class: "inline-label"}, "Mode"), select),
    el("span", {class: "field"}, el("label", {for: "top_k", class: "inline-label"}, "Results"), k),
    answer ? el("span", {class: "check"}, answer, el("label", {for: "answer"}, "Answer")) : null,
    remember ? el("span", {class: "check", title: "memory_search: count these results as recalled (their recency goes up)"},
      remember, el("label", {for: "remember"}, "Remember")) : null,
    el("button", {type: "submit"}, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams({q: input.value.trim(), mode: select.value, k: k.value});
    if (answer && !answer.checked) next.set("answer", "no");
    if (remember && remember.checked) next.set("remember", "yes");
    go("#/search?" + next);
  });
  view.append(el("h1", {class: "visually-hidden"}, "Search"), form);
  if (!query) { input.focus(); return; }
  await run(view, summary, {query, mode, topK, wantAnswer: Boolean(answer && answer.checked), remember: Boolean(remember && remember.checked)}, status);
}
