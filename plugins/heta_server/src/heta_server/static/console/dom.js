// Building the page out of elements and text nodes: nothing a document says is ever parsed as HTML.
"use strict";

// el("a", {href: "#/", class: "x"}, "text", otherNode): attributes set one by one, children as text or nodes
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function bytes(size) {
  if (size === null || size === undefined) return "";
  if (size < 1024) return size + " B";
  if (size < 1024 * 1024) return (size / 1024).toFixed(1) + " KB";
  return (size / 1024 / 1024).toFixed(1) + " MB";
}

// POSIX seconds as "2026-12-07 05:47" in the reader's time zone
export function when(seconds) {
  if (!seconds) return "";
  const d = new Date(seconds * 1000);
  const two = (n) => String(n).padStart(2, "0");
  return d.getFullYear() + "-" + two(d.getMonth() + 1) + "-" + two(d.getDate()) + " " + two(d.getHours()) + ":" + two(d.getMinutes());
}

// the query's words (two letters or more), lower-cased
export function queryWords(query) {
  return (query || "").toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) || [];
}

// a regular expression that finds the words; a Latin word only as a whole word ("who" not in "blowhole"),
// CJK text has no spaces to go by
export function wordPattern(words) {
  if (!words.length) return null;
  const escaped = words.map((w) => {
    const literal = w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return /^[a-z0-9]+$/.test(w) ? "(?<![\\p{L}\\p{N}])" + literal + "(?![\\p{L}\\p{N}])" : literal;
  });
  return new RegExp("(" + escaped.join("|") + ")", "giu");
}

// text as nodes, each match of pattern in a <mark>
export function marked(text, pattern) {
  if (!pattern) return [document.createTextNode(text)];
  return text.split(pattern).map((piece, i) => (i % 2 === 1 ? el("mark", {}, piece) : document.createTextNode(piece)));
}

export function clear(node) { node.replaceChildren(); return node; }

// a table whose rows scroll sideways on a narrow screen rather than squeezing the page
export function table(caption, columns, rows) {
  // focusable and named: a region that scrolls must be reachable by keyboard
  return el("div", {class: "table-wrap", tabindex: 0, role: "region", "aria-label": caption || columns.join(", ")},
    el("table", {},
      caption ? el("caption", {}, caption) : null,
      el("thead", {}, el("tr", {}, columns.map((c) => el("th", {scope: "col"}, c)))),
      el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((c) => el("td", {}, c)))))));
}
