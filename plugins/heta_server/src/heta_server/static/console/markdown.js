// A small, safe subset of Markdown for document text: headings, paragraphs, lists, quotes, code, **bold**,
// *emphasis*, `code` and http(s) links. Everything is built from elements and text nodes, so a document
// can add no tag, attribute or script; anything else shows as the text it is.
"use strict";

import {el, marked} from "./dom.js";

// "__" only at word edges, as CommonMark has it: window.__name__ and snake__case stay text
const INLINE = /(\*\*[^*\n]+\*\*|(?<![\p{L}\p{N}_])__[^_\n]+__(?![\p{L}\p{N}_])|`[^`\n]+`|\[[^\]\n]+\]\([^)\s]+\)|\*[^*\s][^*\n]*\*)/gu;

function safeHref(url) {
  try {
    const parsed = new URL(url, location.href);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
  } catch { return null; }
}

function inline(text, pattern) {
  const nodes = [];
  for (const [i, piece] of text.split(INLINE).entries()) {
    if (!piece) continue;
    if (i % 2 === 0) { nodes.push(...marked(piece, pattern)); continue; }
    if (piece.startsWith("**") || piece.startsWith("__")) nodes.push(el("strong", {}, ...marked(piece.slice(2, -2), pattern)));
    else if (piece.startsWith("`")) nodes.push(el("code", {}, ...marked(piece.slice(1, -1), pattern)));
    else if (piece.startsWith("[")) {
      const [, label, url] = piece.match(/^\[([^\]]+)\]\(([^)]+)\)$/);
      const href = safeHref(url);
      nodes.push(href ? el("a", {href, rel: "noopener noreferrer nofollow", target: "_blank"}, ...marked(label, pattern))
        : document.createTextNode(piece));
    } else nodes.push(el("em", {}, ...marked(piece.slice(1, -1), pattern)));
  }
  return nodes;
}

// Markdown text as a <div class="md"> of blocks; headings are shown one level below the page's own
// (a document's "# Title" becomes a bold line, not the page's heading); query words are marked
export function renderMarkdown(text, pattern) {
  const root = el("div", {class: "md"});
  const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
  let paragraph = [];
  let list = null;
  const flush = () => {
    if (paragraph.length) root.append(el("p", {}, ...inline(paragraph.join(" "), pattern)));
    paragraph = [];
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let match;
    if (/^\s*```/.test(line)) {
      flush();
      const code = [];
      for (i++; i < lines.length && !/^\s*```/.test(lines[i]); i++) code.push(lines[i]);
      root.append(el("pre", {}, el("code", {}, ...marked(code.join("\n"), pattern))));
    } else if ((match = line.match(/^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/))) {
      flush();
      root.append(el("p", {class: "md-h md-h" + match[1].length}, ...inline(match[2], pattern)));
    } else if ((match = line.match(/^\s*([-*+]|\d+[.)])\s+(.*)$/))) {
      if (paragraph.length) { root.append(el("p", {}, ...inline(paragraph.join(" "), pattern))); paragraph = []; }
      const ordered = /\d/.test(match[1]);
      if (!list || (list.tagName === "OL") !== ordered) { list = el(ordered ? "ol" : "ul"); root.append(list); }
      list.append(el("li", {}, ...inline(match[2], pattern)));
    } else if ((match = line.match(/^\s*>\s?(.*)$/))) {
      flush();
      root.append(el("blockquote", {}, ...inline(match[1], pattern)));
    } else if (!line.trim()) {
      flush();
    } else {
      if (list) list = null;
      paragraph.push(line.trim());
    }
  }
  flush();
  return root;
}

// a stretch of text around the first query word, at most about `size` characters, cut at line or word ends
export function snippet(text, pattern, size = 420) {
  if (text.length <= size) return text;
  let start = 0;
  if (pattern) {
    pattern.lastIndex = 0;
    const found = pattern.exec(text);
    pattern.lastIndex = 0;
    if (found) start = Math.max(0, found.index - Math.floor(size / 3));
  }
  if (start > 0) {
    const line = text.lastIndexOf("\n", start);
    start = line >= 0 && start - line < 80 ? line + 1 : (text.indexOf(" ", start) + 1 || start);
  }
  let end = Math.min(text.length, start + size);
  if (end < text.length) end = text.lastIndexOf(" ", end) > start ? text.lastIndexOf(" ", end) : end;
  return (start > 0 ? "… " : "") + text.slice(start, end) + (end < text.length ? " …" : "");
}
