// The graph explorer: find an entity, draw its neighbourhood with Cytoscape.js, click (or press Expand) to load a
// node's own neighbourhood, and read the evidence chunks of an entity or a relation. Neighbourhoods come a page
// at a time from /console/graph/entity/{id}: the whole graph is never loaded.
"use strict";

import {api} from "./api.js";
import {el, queryWords, wordPattern} from "./dom.js";
import {renderMarkdown, snippet} from "./markdown.js";

const PAGE = 25;
const CYTOSCAPE_STYLESHEET = "__________cytoscape_stylesheet";
let library = null;

function loadCytoscape() {
  if (window.cytoscape) return Promise.resolve(window.cytoscape);
  library = library || new Promise((resolve, reject) => {
    const script = el("script", {src: "/static/vendor/cytoscape.min.js"});
    script.addEventListener("load", () => resolve(window.cytoscape));
    script.addEventListener("error", () => reject(new Error("The graph library did not load.")));
    document.head.append(script);
  });
  return library;
}

const STYLE = [
  {selector: "node", style: {
    "label": "data(name)", "background-color": "#3b6ea8", "color": "#1d232b", "font-size": 11, "text-valign": "bottom",
    "text-margin-y": 4, "width": 18, "height": 18, "text-wrap": "ellipsis", "text-max-width": 140,
  }},
  {selector: "node.centre", style: {"background-color": "#b3541e", "width": 26, "height": 26, "font-weight": "bold"}},
  {selector: "node.expanded", style: {"border-width": 3, "border-color": "#1d232b"}},
  {selector: "node:selected", style: {"background-color": "#6b3fa0"}},
  {selector: "edge", style: {
    "width": 1.5, "line-color": "#8a96a3", "curve-style": "bezier", "target-arrow-shape": "triangle", "target-arrow-color": "#8a96a3",
    "label": "data(name)", "font-size": 9, "color": "#4a5561", "text-rotation": "autorotate", "text-background-color": "#ffffff",
    "text-background-opacity": 0.8,
  }},
  {selector: "edge:selected", style: {"line-color": "#6b3fa0", "target-arrow-color": "#6b3fa0", "width": 3}},
];

class Explorer {
  constructor(view, go) {
    this.go = go;
    this.entities = new Map();
    this.relations = new Map();
    this.next = new Map();  // entity id -> the offset of its next page of relations (null: all loaded)
    this.canvas = el("div", {id: "graph", class: "graph", role: "img", "aria-label": "The entities drawn as a graph; the list of relations below holds the same facts."});
    this.details = el("section", {id: "details", class: "details", "aria-live": "polite", "aria-label": "Selected fact"});
    this.list = el("section", {id: "relations", "aria-label": "Relations"});
    view.append(el("div", {class: "graph-area"}, this.canvas, this.details), this.list);
  }

  async start(entityId) {
    const cytoscape = await loadCytoscape();
    // Cytoscape injects a <style> element (.__________cytoscape_container { position: relative }) unless an element
    // with this id exists; the CSP would refuse it, and page.css already holds that rule for .graph
    if (!document.getElementById(CYTOSCAPE_STYLESHEET)) document.head.append(el("meta", {id: CYTOSCAPE_STYLESHEET, name: "cytoscape-style"}));
    this.cy = cytoscape({container: this.canvas, style: STYLE, minZoom: 0.2, maxZoom: 3});
    window.hetaGraph = this.cy;  // for tests and the browser console: the drawing, never data the API did not give
    this.cy.on("tap", "node", (event) => this.expand(event.target.id()));
    this.cy.on("tap", "edge", (event) => this.evidence("relation", event.target.id()));
    await this.expand(entityId, {centre: true});
  }

  addEntity(entity) {
    if (!this.entities.has(entity.id)) {
      this.entities.set(entity.id, entity);
      this.cy.add({group: "nodes", data: {id: entity.id, name: entity.name}});
    }
  }

  async expand(entityId, {centre = false} = {}) {
    const offset = this.next.has(entityId) ? this.next.get(entityId) : 0;
    if (offset === null) { this.evidence("entity", entityId); return; }
    const data = await api("/console/graph/entity/" + encodeURIComponent(entityId) + "?" + new URLSearchParams({offset, limit: PAGE}));
    this.addEntity(data.entity);
    for (const entity of data.entities) this.addEntity(entity);
    for (const relation of data.relations) {
      if (this.relations.has(relation.id)) continue;
      this.relations.set(relation.id, relation);
      this.cy.add({group: "edges", data: {id: relation.id, source: relation.source, target: relation.target, name: relation.name || relation.type}});
    }
    this.next.set(entityId, data.next_offset);
    const node = this.cy.getElementById(entityId);
    node.addClass(centre ? "centre" : "expanded");
    this.cy.layout({name: "cose", animate: false, randomize: false, nodeDimensionsIncludeLabels: true}).run();
    this.cy.fit(undefined, 30);
    if (this.cy.zoom() > 1.3) { this.cy.zoom(1.3); this.cy.center(); }  // two or three nodes need no magnifying glass
    this.renderList();
    await this.evidence("entity", entityId, data.total);
  }

  renderList() {
    const rows = [...this.relations.values()].map((relation) => {
      const source = this.entities.get(relation.source);
      const target = this.entities.get(relation.target);
      return el("li", {},
        this.entityButton(source), " ", el("span", {class: "rel"}, "— " + (relation.name || relation.type) + " →"), " ", this.entityButton(target), " ",
        el("button", {type: "button", class: "link", "data-relation": relation.id, onclick: () => this.evidence("relation", relation.id)},
          "evidence (" + relation.evidence + ")"));
    });
    const more = [...this.next.entries()].filter(([, offset]) => offset !== null).map(([id]) =>
      el("button", {type: "button", class: "secondary", onclick: () => this.expand(id)}, "More relations of " + this.entities.get(id).name));
    this.list.replaceChildren(el("h2", {}, "Relations (" + this.relations.size + ")"),
      rows.length ? el("ul", {class: "relation-list"}, rows) : el("p", {class: "muted"}, "No relations you may read."), ...more);
  }

  entityButton(entity) {
    if (!entity) return "";
    const expanded = this.next.has(entity.id);
    return el("button", {type: "button", class: "link entity", "data-entity": entity.id,
      "aria-label": (expanded ? "Show " : "Expand ") + entity.name, onclick: () => this.expand(entity.id)}, entity.name);
  }

  async evidence(kind, id, total) {
    const data = await api("/console/graph/evidence?" + new URLSearchParams({kind, id}));
    const fact = data.fact;
    const pattern = wordPattern(queryWords(kind === "entity" ? fact.name : [this.entities.get(fact.source), this.entities.get(fact.target)]
      .filter(Boolean).map((e) => e.name).join(" ")));
    this.cy.elements().unselect();
    this.cy.getElementById(id).select();
    const title = kind === "entity" ? fact.name : (this.entities.get(fact.source) || {name: fact.source}).name + " — " +
      (fact.name || fact.type) + " → " + (this.entities.get(fact.target) || {name: fact.target}).name;
    this.details.replaceChildren(
      el("h2", {}, title),
      el("p", {class: "meta"}, kind + (fact.type ? " · " + fact.type : "") + " · " + data.total + " evidence chunk(s)" +
        (kind === "entity" && total !== undefined ? " · " + total + " relation(s)" : "")),
      fact.description ? el("p", {}, fact.description) : null,
      el("h3", {}, "Evidence"),
      el("ol", {class: "evidence"}, data.evidence.map((item) => el("li", {},
        el("p", {class: "meta"}, el("a", {href: "#/documents/" + encodeURIComponent(item.document_id) + "?chunk=" + encodeURIComponent(item.chunk_id)}, item.location)),
        item.said && item.said !== item.text ? el("p", {class: "said"}, item.said) : null,
        renderMarkdown(snippet(item.text, pattern), pattern)))));
  }
}

async function finder(view, query, go, focus) {
  const input = el("input", {id: "entity-q", type: "search", value: query || "", autocomplete: "off"});
  const form = el("form", {class: "filter", role: "search"}, el("label", {for: "entity-q"}, "Find an entity"), input, el("button", {type: "submit"}, "Find"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    go("#/graph?" + new URLSearchParams({q: input.value.trim()}));
  });
  view.append(form);
  if (!query) {
    if (focus) {
      view.append(el("p", {class: "muted"}, "Find an entity by name, or open one from a search result (“Explore in graph”) or a document's entities. " +
        "Click a node to load its neighbours, click an edge, or use the list below the drawing, for the chunks a fact rests on."));
      input.focus();
    }
    return;
  }
  const data = await api("/console/graph/entities?" + new URLSearchParams({q: query, limit: 10}));
  if (!data.entities.length) { view.append(el("p", {}, "No entity matches “" + query + "”.")); return; }
  view.append(el("ul", {class: "found"}, data.entities.map((entity) => el("li", {},
    el("a", {href: "#/graph?entity=" + encodeURIComponent(entity.id), class: "entity-choice"}, entity.name), " ", el("span", {class: "muted"}, entity.type)))));
}

export async function render(view, {params, go}) {
  view.append(el("h1", {}, "Graph explorer"));
  const entity = params.get("entity");
  await finder(view, entity ? "" : params.get("q"), go, !entity);
  if (entity) await new Explorer(view, go).start(entity);
}
