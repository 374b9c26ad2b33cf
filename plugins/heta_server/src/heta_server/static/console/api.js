// Talking to the server: the token, JSON requests, uploads, and the answer's event stream.
"use strict";

const TOKEN_KEY = "heta-token";

// ?kb=NAME opens a --kb-dir knowledge base; without it, the --kb one
export const kbName = new URLSearchParams(location.search).get("kb");
export const base = kbName ? "/api/v1/kbs/" + encodeURIComponent(kbName) : "/api/v1";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let onUnauthorized = () => {};
export function whenUnauthorized(handler) { onUnauthorized = handler; }

export function setToken(token) { sessionStorage.setItem(TOKEN_KEY, token); }

function authHeaders() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? {"Authorization": "Bearer " + token} : {};
}

async function failure(response) {
  const data = await response.json().catch(() => ({}));
  const error = data.error || {code: "HTTP" + response.status, message: response.statusText || "The server did not answer with JSON."};
  if (response.status === 401) onUnauthorized();
  return new ApiError(response.status, error.code, error.message);
}

// path relative to the knowledge base's API ("/console/summary"); "/api/..." paths are taken as they are
export async function api(path, {method = "GET", body, form} = {}) {
  const url = path.startsWith("/api/") ? path : base + path;
  const init = {method, headers: authHeaders()};
  if (form) init.body = form;  // multipart: the browser sets its content type
  else if (body !== undefined) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
  const response = await fetch(url, init);
  if (!response.ok) throw await failure(response);
  return response.json();
}

// POST /query with "stream": true; onEvent(name, data) for each event (results, token, done, error)
export async function streamQuery(body, onEvent) {
  const response = await fetch(base + "/query", {
    method: "POST", headers: {...authHeaders(), "Content-Type": "application/json", "Accept": "text/event-stream"},
    body: JSON.stringify({...body, stream: true}),
  });
  if (!response.ok) throw await failure(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, {stream: true});
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
      let name = "message";
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}

// a link may carry the token in its fragment (/#token=...): fragments never reach a server or its logs; the
// token moves to this tab's session storage and out of the address bar
export function tokenFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  if (!token) return;
  setToken(token);
  history.replaceState(null, "", location.pathname + location.search);
}
