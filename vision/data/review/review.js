// scorelens review page: draw a reading over its board, edit it, rescore on the server.
// No framework and no build step: the server (vision/review.py) serves this file as is.
"use strict";

const TOKEN = document.querySelector('meta[name="scorelens-token"]').content;
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

const ui = {
  boards: [],         // summaries from /api/items
  id: null,           // the board shown
  item: null,         // its view from the server
  selected: null,     // element name
  pending: undefined, // a value chosen with the keyboard, not yet sent (Enter sends it)
  typed: "",          // digits typed for a number
  edge: null,         // first arrow of an Avenue road
  checked: new Set(), // elements accepted or corrected on this page
  colour: null,       // the colour of the last meeple edited: a new meeple takes it
  chain: Promise.resolve(), // changes run one after another, each on the board as the last left it
  narrow: false,      // a phone-sized screen: tap to zoom, larger tap pads
  tapped: null,       // the element last selected by a tap on the board (a second tap on a tile adds a meeple)
  zoom: null,         // the board's region shown when zoomed in: [x, y, width, height] in board units
};

// Run a change after the ones before it: it reads the board's value when it runs, never a
// value captured when its button was drawn.
function act(fn) {
  ui.chain = ui.chain.then(fn).catch((e) => status(e.message, true));
  return ui.chain;
}

// ---------------------------------------------------------------- server

async function api(method, url, body) {
  const options = { method, headers: { "X-Scorelens-Token": TOKEN } };
  if (method === "POST") {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body || {});
  }
  const response = await fetch(url, options);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function status(text, error) {
  $("status").textContent = text || "";
  $("status").className = error ? "error" : "";
}

async function loadBoards() {
  await refreshBoards();
  const asked = /board=(\d+)/.exec(location.hash);          // review?t=...#board=N opens board N
  const first = asked && ui.boards.find((b) => b.id === Number(asked[1]));
  if (ui.boards.length) await showBoard((first || ui.boards[0]).id);
  performance.mark("scorelens-ready");           // drawn, and taking taps and keys (tests/test_review_browser.py bench)
}

async function showBoard(id) {
  ui.item = await api("GET", `/api/items/${id}`);
  ui.id = id;
  ui.checked = new Set();
  ui.selected = null;
  clearPending();
  $("boards").value = String(id);
  $("error").hidden = !ui.item.error;
  $("error").textContent = ui.item.error
    ? `This photo could not be read (${ui.item.error}). Enter its board on the blank board, or its total under "Off the board".`
    : "";
  setImage();
  render();
  if (ui.item.queue.length) select(ui.item.queue[0]);
}

// Apply a view the server answered: the board, and its line in the board list.
function takeView(view) {
  const before = $("total").textContent;
  Object.assign(ui.item, view);
  const summary = ui.boards.find((b) => b.id === ui.id);
  if (summary && view.to_check !== undefined) {
    Object.assign(summary, { to_check: view.to_check, saved: Boolean(view.saved) && !view.unsaved, unsaved: view.unsaved });
    listBoards();
  }
  render();
  if ($("total").textContent !== before) flash($("total"));
}

async function send(path, body) {
  try {
    const view = await api("POST", `/api/items/${ui.id}/${path}`, body);
    takeView(view);
    return view;
  } catch (e) {
    status(e.message, true);
    return null;
  }
}

async function commitElement(name, value) {
  const el = element(name);
  const old = el ? el.value : null;
  clearPending();
  if (same(old, value)) {
    ui.checked.add(name);
    render();
    return true;
  }
  const view = await send("edit", { element: name, value });
  if (view) {
    ui.checked.add(name);
    status(`${name}: ${show(old)} → ${show(value)}`);
    render();
  }
  return Boolean(view);
}

const commit = (value) => (ui.selected ? commitElement(ui.selected, value) : Promise.resolve(false));

async function commitField(name, value) {
  const old = ui.item.fields[name];
  if (same(old, value)) return true;
  const view = await send("edit", { field: name, value });
  if (view) status(`${fieldLabel(name)}: ${show(old)} → ${show(value)}`);
  return Boolean(view);
}

async function undo() {
  const view = await send("undo", {});
  if (view) status("undone");
}

async function save() {
  const view = await send("save", {});
  if (view) {
    const r = view.result;
    status(`saved ${r.path}; ${r.crops} crops kept (${r.corrected} corrected)`);
    await refreshBoards();
  }
}

async function refreshBoards() {
  ui.boards = await api("GET", "/api/items");
  listBoards();
}

function listBoards() {
  const select = $("boards");
  const label = (b) => `${b.name} · ${b.to_check} to check${b.saved ? " · ✓ saved" : b.unsaved ? " · unsaved" : ""}`;
  if (select.options.length !== ui.boards.length) {
    select.replaceChildren(...ui.boards.map((b) => new Option(label(b), b.id)));
  } else {
    ui.boards.forEach((b, i) => { select.options[i].textContent = label(b); });
  }
  select.value = String(ui.id);
  const item = ui.item;
  $("mark").textContent = !item ? "" : item.unsaved ? "● unsaved" : item.saved ? "✓ saved" : "";
  $("mark").className = item && item.unsaved ? "unsaved" : "saved";
}

// Leaving the page with edits not saved asks first.
window.addEventListener("beforeunload", (e) => {
  if ((ui.item && ui.item.unsaved) || ui.boards.some((b) => b.unsaved)) {
    e.preventDefault();
    e.returnValue = "";
  }
});

// ---------------------------------------------------------------- values

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

function show(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "boolean") return value ? "on" : "off";
  if (Array.isArray(value)) return `${value.length} item${value.length === 1 ? "" : "s"}`;
  if (typeof value === "object") {
    if ("tile" in value) return `${value.tile} ${value.rotation || 0}°`;
    if ("feature" in value) return `${value.colour} ${value.kind && value.kind !== "follower" ? value.kind + " " : ""}on ${value.feature} of ${value.x},${value.y}`;
    return Object.entries(value).filter(([, v]) => v !== null && v !== false)
      .map(([k, v]) => (v === true ? k : `${k} ${show(v)}`)).join(", ") || "–";
  }
  return String(value);
}

// A value as its editor names it (a fence 1 is "on"), else as show() writes it.
function showAs(spec, value) {
  const option = spec && spec.type === "choice" && spec.options.find((o) => same(o.value, value));
  return option && option.value !== null ? option.label : show(value);
}
const element = (name) => ui.item.elements.find((e) => e.name === name);
const specOf = (el) => (el && ui.item.editors[el.kind]) || { type: "json" };
const current = () => (ui.pending !== undefined ? ui.pending : (element(ui.selected) || {}).value);
const fieldLabel = (name) => ((ui.item.editors[`field:${name}`] || {}).label) || (name === "total_by_hand" ? "total entered by hand" : name.replace(/_/g, " "));

function node(tag, attrs, ...children) {
  const n = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") n.setAttribute("class", v);
    else if (k === "text") n.textContent = v;
    else if (k === "style") Object.assign(n.style, v);       // CSSOM: allowed by the page's CSP
    else if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else n.setAttribute(k, v);
  }
  n.append(...children.filter((c) => c !== null && c !== undefined));
  return n;
}

function button(label, onclick, cls, title) {
  return node("button", { type: "button", class: cls, title, onclick: () => act(onclick) }, label);
}

// ---------------------------------------------------------------- Carcassonne tile pictures

const KIND_FILL = { city: "#c8843f", road: "#f6f3e8", field: "#86b84a", cloister: "#b8412c", garden: "#3f8f3a", river: "#5aa6d6" };
const pictureCache = new Map();

// The parts of a tile type as SVG paths (printed north up, a 24 x 24 grid).
function tileShapes(type) {
  if (pictureCache.has(type)) return pictureCache.get(type);
  const tile = ui.item.catalogue.tiles[type];
  const rows = tile.map;
  const paths = {}, sums = {};
  rows.forEach((row, y) => {
    let x = 0;
    while (x < row.length) {
      const c = row[x];
      let end = x;
      while (end < row.length && row[end] === c) end++;
      (paths[c] = paths[c] || []).push(`M${x},${y}h${end - x}v1h${x - end}z`);
      const s = (sums[c] = sums[c] || [0, 0, 0]);
      for (let k = x; k < end; k++) { s[0] += k + 0.5; s[1] += y + 0.5; s[2] += 1; }
      x = end;
    }
  });
  const shapes = { tile, paths: {}, centre: {} };
  for (const [c, list] of Object.entries(paths)) {
    shapes.paths[c] = list.join("");
    shapes.centre[c] = [sums[c][0] / sums[c][2], sums[c][1] / sums[c][2]];
  }
  pictureCache.set(type, shapes);
  return shapes;
}

const partChar = (i) => String.fromCharCode(97 + i);

// A tile picture as an SVG group in a 24 x 24 box, turned as it lies; `highlight` a part index.
function tileGroup(type, rotation, highlight) {
  const shapes = tileShapes(type);
  const g = node("svg:g", { transform: `rotate(${rotation || 0} 12 12)` });
  g.append(node("svg:rect", { x: 0, y: 0, width: 24, height: 24, fill: KIND_FILL.field }));
  for (const [c, d] of Object.entries(shapes.paths)) {
    const i = c.charCodeAt(0) - 97;
    const part = i >= 0 && i < shapes.tile.parts.length ? shapes.tile.parts[i] : null;
    const fill = c === "#" ? "#555" : part ? KIND_FILL[part.kind] || "#999" : KIND_FILL.field;
    g.append(node("svg:path", { d, fill, class: i === highlight ? "part hl" : "part" }));
  }
  shapes.tile.parts.forEach((p, i) => {
    if (!p.pennants) return;
    const [x, y] = shapes.centre[partChar(i)] || [12, 12];
    g.append(node("svg:path", { d: `M${x - 2},${y - 2}h4v2.5l-2,2l-2,-2z`, fill: "#2457a6", stroke: "#fff", "stroke-width": 0.4 }));
  });
  return g;
}

function tilePicture(type, rotation, highlight, cls) {
  const svg = node("svg:svg", { viewBox: "0 0 24 24", class: cls || "tile-pic", "aria-hidden": "true" });
  svg.append(tileGroup(type, rotation, highlight));
  return svg;
}

// The part of a tile (type, rotation) under the point (u, v) of its square as it lies, or -1.
function partAt(type, rotation, u, v) {
  for (let k = 0; k < ((rotation || 0) / 90) % 4; k++) [u, v] = [v, 1 - u];   // as it lies -> printed
  const rows = ui.item.catalogue.tiles[type].map;
  const n = rows.length;
  const c = rows[Math.min(n - 1, Math.max(0, Math.floor(v * n)))][Math.min(n - 1, Math.max(0, Math.floor(u * n)))];
  const i = c.charCodeAt(0) - 97;
  return i >= 0 && i < 26 ? i : -1;
}

const refText = (ref) => ref.replace(":", " ");

// ---------------------------------------------------------------- drawing the board

function segmentPath(seg, x0, y0, x1, y1) {
  const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  const at = { N: [cx, y0], E: [x1, cy], S: [cx, y1], W: [x0, cy] };
  const [a, b] = [at[seg[0]], at[seg[1]]];
  if (seg === "NS" || seg === "EW") return `M${a[0]},${a[1]} L${b[0]},${b[1]}`;
  return `M${a[0]},${a[1]} Q${cx},${cy} ${b[0]},${b[1]}`;
}

function setImage() {
  const svg = $("overlay"), item = ui.item;
  const [x, y, w, h] = item.canvas;
  ui.zoom = null;
  showZoom();
  svg.replaceChildren();
  if (item.image) {
    svg.append(node("svg:image", { href: `${item.image.url}?t=${encodeURIComponent(TOKEN)}`, x: 0, y: 0, width: item.image.width, height: item.image.height }));
  } else {
    svg.append(node("svg:rect", { x, y, width: w, height: h, class: "blank" }));
  }
  svg.append(node("svg:g", { id: "marks" }));
}

const MEEPLE_INK = { red: "#d7263d", blue: "#2457a6", green: "#2e8b3a", yellow: "#f2c12e", black: "#222", neutral: "#aaa" };

function spaceLines(v) {
  if (!v) return ["–"];
  const names = { people: ["person", "people"], vegetables: ["veg", "veg"], sheep: ["sheep", "sheep"], boar: ["boar", "boar"], cattle: ["cattle", "cattle"], grain: ["grain", "grain"] };
  const counts = Object.keys(names).filter((k) => v[k]).map((k) => `${v[k]} ${names[k][v[k] === 1 ? 0 : 1]}`);
  return [[v.kind || "empty", ...(v.stable ? ["stable"] : [])].join(" + "), ...(counts.length ? [counts.join(", ")] : [])];
}

function drawMarks() {
  const g = $("marks"), item = ui.item;
  g.replaceChildren();
  const tiles = item.game === "carcassonne";
  const last = (el) => (el.kind === "house" ? 1 : 0);     // the house badge over the top fences' pads
  for (const el of item.elements.slice().sort((a, b) => last(a) - last(b))) {
    if (!el.box) continue;
    const [x0, y0, x1, y1] = el.box;
    const w = x1 - x0, h = y1 - y0;
    const shown = el.name === ui.selected && ui.pending !== undefined ? ui.pending : el.value;
    const spec = specOf(el);
    const classes = ["el", el.kind];
    if (el.flagged && !ui.checked.has(el.name) && same(el.value, el.read)) classes.push("flagged");
    if (!same(el.value, el.read)) classes.push("fixed");
    else if (ui.checked.has(el.name)) classes.push("checked");
    if (el.name === ui.selected) classes.push("selected");
    if (el.name === ui.selected && ui.pending !== undefined) classes.push("pending");
    if (el.free) classes.push("free");
    if (el.kind === "fence") classes.push(shown ? "on" : "off");
    const m = node("svg:g", { class: classes.join(" "), "data-name": el.name });
    const conf = el.confidence === null ? "" : ` (${Math.round(el.confidence * 100)}%)`;
    m.append(node("svg:title", { text: `${el.name}: ${showAs(spec, shown)}, read ${showAs(spec, el.read)}${conf}${el.why ? ": " + el.why : ""}` }));
    if (el.kind === "meeple") {
      const r = w / 2;
      m.append(node("svg:circle", { cx: x0 + r, cy: y0 + r, r: r * 0.8, class: "hit", style: { fill: MEEPLE_INK[shown && shown.colour] || "#c0c" } }));
      if (shown && /^field/.test(shown.feature)) m.append(node("svg:text", { x: x0 + r, y: y0 + r * 1.35, "font-size": r, "text-anchor": "middle", class: "lying", text: "F" }));
    } else {
      if (tiles && !item.image && shown) {
        const pic = node("svg:svg", { x: x0, y: y0, width: w, height: h, viewBox: "0 0 24 24" });
        pic.append(tileGroup(shown.tile, shown.rotation));
        m.append(pic);
      }
      if (el.kind === "cell" && shown) m.append(node("svg:path", { class: "seg", d: segmentPath(shown, x0, y0, x1, y1) }));
      m.append(node("svg:rect", { x: x0, y: y0, width: w, height: h, class: "hit" }));
      if (tiles) {
        const fs = Math.max(8, w * 0.2);
        if (shown) {
          const cx = x0 + w / 2, cy = y0 + h / 2;
          const arrow = node("svg:path", { class: "north", d: `M${cx},${cy - h * 0.32} l${w * 0.09},${h * 0.14} h${-w * 0.18}z`, transform: `rotate(${shown.rotation || 0} ${cx} ${cy})` });
          m.append(arrow);
          m.append(node("svg:text", { x: x0 + w * 0.06, y: y0 + h * 0.94, "font-size": fs, class: "tag", text: `${shown.tile} ${shown.rotation || 0}°` }));
        } else {
          m.append(node("svg:text", { x: x0 + w / 2, y: y0 + h / 2 + fs / 3, "font-size": fs * 1.4, class: "plus", "text-anchor": "middle", text: el.read ? `${el.read.tile}?` : "+" }));
        }
      } else if (el.kind === "space") {
        // at the foot of the space, small: the pieces in the photo stay visible
        const lines = spaceLines(shown);
        const fs = Math.min(h / 7, w / 10);
        lines.forEach((line, i) => m.append(node("svg:text", { x: x0 + w / 2, y: y1 - fs * 0.5 - (lines.length - 1 - i) * fs * 1.2, "font-size": fs, "text-anchor": "middle", class: "label", text: line })));
      } else if (el.kind === "house") {
        const fs = h * 0.6;
        m.append(node("svg:text", { x: x0 + fs * 0.4, y: y0 + h / 2 + fs / 3, "font-size": fs, class: "label", text: `house: ${show(shown)}` }));
      } else if (el.kind === "round-farm" || el.kind === "round-score") {
        // in the box's corner: the handwriting stays visible
        const fs = Math.min(h * 0.28, w * 0.4);
        m.append(node("svg:text", { x: x0 + fs * 0.25, y: y0 + fs, "font-size": fs, class: "tag", text: shown === null ? "–" : String(shown) }));
      }
    }
    const pad = ui.narrow && padOf(el);
    if (pad && el.kind === "meeple") {
      m.append(node("svg:circle", { cx: (pad[0] + pad[2]) / 2, cy: (pad[1] + pad[3]) / 2, r: (pad[2] - pad[0]) / 2, class: "pad" }));
    } else if (pad) {
      m.append(node("svg:rect", { x: pad[0], y: pad[1], width: pad[2] - pad[0], height: pad[3] - pad[1], class: "pad" }));
    }
    m.addEventListener("click", (e) => {
      // a second tap on the selected tile, where a meeple stands, adds one there
      // (selected by a tap before: a tile selected from the list, or by n / p, is not yet "tapped")
      if (tiles && el.kind === "tile" && !el.free && ui.selected === el.name && ui.tapped === el.name && shown) {
        const svg = $("overlay");
        const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(svg.getScreenCTM().inverse());
        const [u, v] = [(p.x - x0) / w, (p.y - y0) / h];
        const [x, y] = squareOf(el.name);
        act(() => {
          const now = tileAt(x, y);
          const part = now ? partAt(now.tile, now.rotation, u, v) : -1;
          if (part >= 0) return addMeeple(x, y, ui.item.catalogue.tiles[now.tile].refs[String(now.rotation || 0)][part]);
        });
        return;
      }
      select(el.name);
      ui.tapped = el.name;
    });
    g.append(m);
  }
}

function render() {
  drawMarks();
  renderEditor();
  renderQueue();
  renderCard();
  renderFields();
  renderHistory();
  const item = ui.item;
  const left = item.queue.filter((n) => !ui.checked.has(n) && same(element(n).value, element(n).read)).length;
  $("progress").textContent = `${left} of ${item.queue.length} left to check`;
  $("save").disabled = !item.can_save;
  $("undo").disabled = !item.history.length;
  listBoards();
}

function flash(n) {
  n.classList.remove("changed");
  void n.offsetWidth;
  n.classList.add("changed");
}

// ---------------------------------------------------------------- editors

function segmentIcon(seg) {
  const svg = node("svg:svg", { viewBox: "0 0 28 28", class: "icon" });
  svg.append(node("svg:rect", { x: 1, y: 1, width: 26, height: 26 }));
  if (seg) svg.append(node("svg:path", { d: segmentPath(seg, 1, 1, 27, 27) }));
  return svg;
}

// A labelled number input with − and + buttons; `get` gives the value now, `set` takes a new
// one (null for blank).
function numberInput(label, spec, get, set, help) {
  const id = `n-${Math.random().toString(36).slice(2)}`;
  const value = get();
  const input = node("input", { type: "number", id, inputmode: "numeric", min: spec.min, max: spec.max, value: value === null || value === undefined ? "" : value });
  const read = () => (input.value === "" ? (spec.blank ? null : spec.min === undefined ? 0 : spec.min) : Math.trunc(Number(input.value)));
  input.addEventListener("change", () => act(() => set(read())));
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); e.stopPropagation(); act(() => set(read())); }
  });
  const step = (d) => {
    const now = get();
    let v = (now === null || now === undefined ? 0 : now) + d;
    if (spec.min !== undefined) v = Math.max(spec.min, v);
    if (spec.max !== undefined) v = Math.min(spec.max, v);
    return set(v);
  };
  const row = node("div", { class: "field number", "data-field": label },
    node("label", { for: id, title: help, text: label }),
    button("−", () => step(-1), "step", `${label} − 1`), input, button("+", () => step(1), "step", `${label} + 1`));
  if (spec.blank) row.append(button("blank", () => set(null), value === null ? "on" : "", `${label}: blank`));
  return row;
}

function choiceButtons(spec, value, pick) {
  const box = node("div", { class: "choices" + (spec.draw === "segment" ? " segments" : "") });
  for (const option of spec.options) {
    const label = node("span");
    if (spec.draw === "segment") label.append(segmentIcon(option.value));
    label.append(option.label + (option.key ? ` [${option.key}]` : ""));
    box.append(button(label, () => pick(option.value), same(option.value, value) ? "on" : ""));
  }
  return box;
}

// The editor of a plain value: choice, number, text, object (an Agricola space), or JSON.
function editorFor(spec, value, pick) {
  if (spec.type === "choice") return choiceButtons(spec, value, pick);
  if (spec.type === "number") return numberInput("value", spec, () => (ui.pending !== undefined ? ui.pending : element(ui.selected).value), pick);
  if (spec.type === "text") {
    const input = node("input", { type: "text", value: value === null || value === undefined ? "" : value, "aria-label": "value" });
    const go = () => pick(input.value === "" && spec.blank ? null : input.value);
    input.addEventListener("change", () => act(go));
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); e.stopPropagation(); act(go); } });
    return node("div", { class: "field" }, input);
  }
  if (spec.type === "object") {
    // each field commits at once, on the board's value as it is now (never a copy taken earlier)
    const box = node("div", { class: "fields" });
    const obj = value && typeof value === "object" ? value : {};
    for (const [name, sub] of Object.entries(spec.fields)) {
      const now = () => (ui.pending !== undefined ? ui.pending : element(ui.selected).value) || {};
      const put = (v) => pick({ ...now(), [name]: v });
      if (sub.type === "number") {
        box.append(numberInput(sub.label || name, sub, () => (now()[name] === undefined ? 0 : now()[name]), put, sub.help));
      } else if (sub.type === "choice") {
        const options = sub.options.filter((o) => o.value !== null);
        box.append(node("div", { class: "field", "data-field": name }, node("span", { class: "name", title: sub.help, text: sub.label || name }),
          choiceButtons({ ...sub, options }, obj[name] === undefined ? options[0].value : obj[name], put)));
      }
    }
    return box;
  }
  const area = node("textarea", { "aria-label": "value as JSON" });
  area.value = JSON.stringify(value, null, 1);
  const apply = () => {
    try { pick(JSON.parse(area.value)); } catch (err) { status(`not JSON: ${err.message}`, true); }
  };
  area.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); e.stopPropagation(); apply(); }
  });
  return node("div", { class: "field" }, area, button("apply (Ctrl-Enter)", apply));
}

const tileAt = (x, y) => {
  const el = element(`tile:${x},${y}`);
  return el && !el.free ? el.value : null;
};
const squareOf = (name) => name.split(":")[1].split(",").map(Number);

// Carcassonne: a tile is picked from pictures and turned; its meeples are listed, and a tap on
// its picture puts a new meeple on the part tapped.
function tileEditor(el) {
  const value = current();
  const [x, y] = squareOf(el.name);
  const box = node("div", { class: "tile-editor" });
  const types = Object.keys(ui.item.catalogue.tiles).sort();
  const turn = (d) => {
    const v = current();
    if (!v) return null;
    return commit({ ...v, rotation: ((v.rotation || 0) + d + 360) % 360 });
  };
  if (value) {
    const big = tilePicture(value.tile, value.rotation, -1, "tile-big");
    big.addEventListener("click", (e) => {
      const r = big.getBoundingClientRect();
      const [u, w] = [(e.clientX - r.left) / r.width, (e.clientY - r.top) / r.height];
      act(() => {
        const v = tileAt(x, y);
        const part = v ? partAt(v.tile, v.rotation, u, w) : -1;
        if (part >= 0) return addMeeple(x, y, ui.item.catalogue.tiles[v.tile].refs[String(v.rotation || 0)][part]);
      });
    });
    box.append(node("div", { class: "tile-now" }, big,
      node("div", { class: "turn" },
        node("p", { class: "big", text: `${value.tile}, turned ${value.rotation || 0}°` }),
        button("⟲ turn left", () => turn(-90), "", "turn a quarter left (←)"),
        button("⟳ turn right", () => turn(90), "", "turn a quarter right (→)"),
        button("remove tile", () => commit(null), "danger"),
        node("p", { class: "hint", text: "To add a meeple, tap this picture, or the tile on the board again, where it stands." }))));
  } else {
    box.append(node("p", { text: el.read ? `The reader saw ${show(el.read)} here.` : "A free square: pick a tile to lay it here." }));
  }
  const grid = node("div", { class: "tile-grid", role: "group", "aria-label": "tile types" });
  for (const t of types) {
    const rot = value ? value.rotation || 0 : 0;
    const b = button(node("span", {}, tilePicture(t, rot), node("b", { text: t })), () => commit({ tile: t, rotation: rot }),
      value && value.tile === t ? "on" : "", `${t}: ${ui.item.catalogue.tiles[t].note}`);
    b.dataset.tile = t;
    grid.append(b);
  }
  box.append(grid);
  const meeples = ui.item.elements.filter((m) => m.kind === "meeple" && m.value && m.value.x === x && m.value.y === y);
  if (meeples.length) {
    box.append(node("div", { class: "choices" }, node("span", { class: "name", text: "meeples here" }),
      ...meeples.map((m) => button(show(m.value), () => select(m.name)))));
  }
  return box;
}

function addMeeple(x, y, feature) {
  const n = ui.item.elements.filter((e) => e.kind === "meeple").length;
  const colours = ui.item.editors.meeple.colours;
  const colour = ui.colour || Object.keys(ui.item.fields.track || {})[0] || colours[0];
  const name = `meeple:${n}`;
  return commitElement(name, { colour, kind: "follower", x, y, feature }).then((ok) => { if (ok) select(name); });
}

function meepleEditor(el) {
  const value = current();
  if (!value) return node("p", { text: "taken off" });
  const box = node("div", { class: "meeple-editor" });
  const put = (change) => {
    const now = element(ui.selected).value;
    if (change.colour) ui.colour = change.colour;
    return commit({ ...now, ...change });
  };
  const colours = [...new Set([...ui.item.editors.meeple.colours, ...Object.keys(ui.item.fields.track || {}), value.colour])];
  box.append(node("div", { class: "field" }, node("span", { class: "name", text: "colour" }),
    node("div", { class: "choices" }, ...colours.map((c) => {
      const b = button(c, () => put({ colour: c }), value.colour === c ? "on swatch" : "swatch");
      b.style.setProperty("--ink", MEEPLE_INK[c] || "#999");
      return b;
    }))));
  const figures = ui.item.catalogue.figures;
  if (Object.keys(figures).length > 1) {
    box.append(node("div", { class: "field" }, node("span", { class: "name", text: "figure" }),
      choiceButtons({ options: Object.keys(figures).map((f) => ({ value: f, label: f })) }, value.kind || "follower", (f) => put({ kind: f }))));
  }
  const tile = tileAt(value.x, value.y);
  if (tile) {
    const info = ui.item.catalogue.tiles[tile.tile];
    const refs = info.refs[String(tile.rotation || 0)];
    const stands = figures[value.kind || "follower"] || Object.keys(KIND_FILL);
    const lying = /^field/.test(value.feature);
    box.append(node("div", { class: "field" }, node("span", { class: "name", text: "pose" }),
      choiceButtons({ options: [{ value: false, label: "standing" }, { value: true, label: "lying (farmer)" }] }, lying, (lie) => {
        const ref = refs.find((r, i) => (info.parts[i].kind === "field") === lie && stands.includes(info.parts[i].kind));
        if (ref) put({ feature: ref });
        else status(`no ${lie ? "field" : "road, city or cloister"} on this tile`, true);
      })));
    const parts = node("div", { class: "choices parts" });
    refs.forEach((ref, i) => {
      if (!stands.includes(info.parts[i].kind)) return;
      const on = ref === value.feature || (value.feature.split(":")[0] === info.parts[i].kind && !value.feature.includes(":") && !ref.includes(":"));
      const b = button(node("span", {}, tilePicture(tile.tile, tile.rotation, i), node("b", { text: refText(ref) })), () => put({ feature: ref }), on ? "on" : "");
      b.dataset.feature = ref;
      parts.append(b);
    });
    box.append(node("div", { class: "field" }, node("span", { class: "name", text: "stands on" }), parts));
  } else {
    box.append(node("p", { class: "error", text: `no tile at ${value.x},${value.y}` }));
  }
  box.append(node("div", { class: "choices" }, button("remove meeple", () => removeMeeple(el.name), "danger"),
    button(`go to tile ${value.x},${value.y}`, () => select(`tile:${value.x},${value.y}`))));
  return box;
}

async function removeMeeple(name) {
  if (await commitElement(name, null)) {
    ui.selected = null;
    render();
  }
}

function renderEditor() {
  const el = ui.selected && element(ui.selected);
  const body = $("editor-body");
  if (!el) {
    $("editor-title").textContent = ui.item.error ? "Tap a square to enter it" : "Select an element";
    $("editor-read").textContent = "";
    $("editor-hint").textContent = "";
    body.replaceChildren();
    return;
  }
  const conf = el.confidence === null ? "" : `, confidence ${Math.round(el.confidence * 100)}%`;
  const spec = specOf(el);
  $("editor-title").textContent = el.name;
  $("editor-read").textContent = `read as ${showAs(spec, el.read)}${conf}${el.why ? ` (${el.why})` : ""}; now ${showAs(spec, el.value)}` +
    (ui.pending !== undefined ? `; Enter sets ${showAs(spec, ui.pending)}` : "");
  if (body.contains(document.activeElement) && document.activeElement.tagName === "INPUT") return; // being typed in
  let editor;
  if (spec.type === "tile") editor = tileEditor(el);
  else if (spec.type === "meeple") editor = meepleEditor(el);
  else editor = editorFor(spec, current(), (v) => commit(v));
  body.replaceChildren(editor);
  const hints = {
    choice: spec.draw === "segment" ? "1-6 or two arrows (the edges the road joins), 0 none" : "its key, or arrows",
    number: "type the number, Backspace, Space for blank, ↑/↓ ±1",
    object: "e/r/f picks the kind, digits a count",
    tile: "a letter picks the type (Shift+N, Shift+P), ←/→ turn it, Delete removes it; tap the tile again to add a meeple",
    meeple: "tap a colour, a pose and the part it stands on",
    text: "type it, Enter",
    json: "edit the JSON, Ctrl-Enter to apply",
  };
  $("editor-hint").textContent = `${hints[spec.type] || ""}; Enter accepts and moves on; n / p step`;
  if (ui.pending !== undefined) body.querySelectorAll("button.on").forEach((b) => b.classList.replace("on", "pending"));
}

function renderQueue() {
  const list = $("queue");
  list.replaceChildren(...ui.item.queue.map((name) => {
    const el = element(name);
    const conf = el.confidence === null ? "" : ` ${Math.round(el.confidence * 100)}%`;
    const li = node("li", { text: `${name}: ${showAs(specOf(el), el.value)}${conf}${el.why ? ": " + el.why : ""}` });
    li.classList.toggle("current", name === ui.selected);
    li.classList.toggle("done", ui.checked.has(name) || !same(el.value, el.read));
    li.addEventListener("click", () => select(name));
    return li;
  }));
}

function cardTable(card) {
  const table = node("table");
  const head = table.insertRow();
  ["", "count", "points"].forEach((t) => head.append(node("th", { text: t })));
  for (const line of card.lines || []) {
    const row = table.insertRow();
    row.insertCell().textContent = line.category + (line.note ? ` (${line.note})` : "");
    const count = row.insertCell();
    count.textContent = line.count === null || line.count === undefined ? "" : line.count;
    count.className = "n";
    const pts = row.insertCell();
    pts.textContent = line.points;
    pts.className = "n";
  }
  const total = table.insertRow();
  total.className = "total";
  total.insertCell().textContent = "total";
  total.insertCell();
  const cell = total.insertCell();
  cell.textContent = card.total;
  cell.className = "n";
  return table;
}

function renderCard() {
  const card = ui.item.card;
  const box = $("card");
  const byHand = ui.item.fields.total_by_hand;
  if (card.players && typeof card.players === "object") {
    const players = Array.isArray(card.players)
      ? card.players.map((p, i) => [p.player || p.name || p.colour || `player ${i + 1}`, p])
      : Object.entries(card.players);
    box.replaceChildren(...players.map(([name, p]) => node("details", { class: "player", open: players.length <= 2 || undefined },
      node("summary", { text: `${name}: ${p.total}` }), cardTable(p))));
    $("total").textContent = players.map(([name, p]) => `${name} ${p.total}`).join(" · ") || "no players";
  } else {
    box.replaceChildren(cardTable(card));
    $("total").textContent = card.total;
  }
  if (byHand !== null && byHand !== undefined) $("total").textContent = `${show(byHand)} (entered by hand)`;
  $("findings").replaceChildren(...ui.item.findings.map((f) => {
    const li = node("li", {}, f.message + " ");
    for (const name of f.elements) {
      const target = element(name) ? name : [`${name}:farm`, `${name}:score`].find((n) => element(n));
      if (!target) continue;
      li.append(node("a", { text: name, onclick: () => select(target) }), " ");
    }
    return li;
  }));
}

// Off-board values: each a labelled input that commits on its own.
function renderFields() {
  const fields = ui.item.fields;
  const names = Object.keys(fields);
  $("fields-box").hidden = !names.length;
  const box = $("fields");
  if (box.contains(document.activeElement) && document.activeElement.tagName === "INPUT") return;
  box.replaceChildren(...names.map((name) => {
    const spec = name === "total_by_hand"
      ? (ui.item.game === "carcassonne" ? { type: "map", values: { type: "number", min: 0 } } : { type: "number", blank: true })
      : ui.item.editors[`field:${name}`] || { type: "json" };
    const label = fieldLabel(name);
    const value = fields[name];
    const group = node("fieldset", { class: "off-board", "data-field": name }, node("legend", { title: spec.help, text: label }));
    const now = () => ui.item.fields[name];
    if (spec.type === "number") {
      group.append(numberInput(label, spec, now, (v) => commitField(name, v), spec.help));
    } else if (spec.type === "object") {
      for (const [key, sub] of Object.entries(spec.fields)) {
        group.append(numberInput(sub.label || key, sub, () => (now() || {})[key] || 0,
          (v) => commitField(name, { ...(now() || {}), [key]: v }), sub.help));
      }
    } else if (spec.type === "map") {
      const players = ui.item.elements.filter((e) => e.kind === "meeple" && e.value).map((e) => e.value.colour);
      const colours = [...new Set([...Object.keys(value || {}), ...players])];
      for (const key of colours) {
        group.append(numberInput(key, spec.values, () => (now() || {})[key] || 0,
          (v) => commitField(name, { ...(now() || {}), [key]: v })));
      }
      const others = (ui.item.editors.meeple ? ui.item.editors.meeple.colours : []).filter((c) => !colours.includes(c));
      if (others.length) {
        const pick = node("select", { "aria-label": `add a colour to ${label}` }, new Option("add a colour…", ""), ...others.map((c) => new Option(c, c)));
        pick.addEventListener("change", () => pick.value && act(() => commitField(name, { ...(now() || {}), [pick.value]: 0 })));
        group.append(node("div", { class: "field" }, pick));
      }
    } else {
      group.append(editorFor(spec, value, (v) => commitField(name, v)));
    }
    return group;
  }));
}

function renderHistory() {
  $("history").replaceChildren(...ui.item.history.slice().reverse().map((h) => {
    const name = h.element || fieldLabel(h.field);
    const a = node("a", { text: name });
    if (h.element && element(h.element)) a.addEventListener("click", () => select(h.element));
    return node("li", {}, a, `: ${show(h.old)} → ${show(h.new)}`);
  }));
}

// ---------------------------------------------------------------- a phone: tap to zoom
//
// On a narrow screen the whole board's elements are smaller than a finger. A first tap on the
// board zooms in around it, to the one scale of that board at which every element is at least
// TAP_PX wide and high; a tap then edits. Drag to move the zoomed board; "whole board" (or Esc)
// zooms back out. The page's own pinch zoom is left to the browser (touch-action: pinch-zoom).

const TAP_PX = 48;                           // the smallest tap target once zoomed (44 and some room)
const NARROW = window.matchMedia("(max-width: 760px)");

// On a phone, thin or small elements get a larger invisible pad to tap: a fence a band 0.4 of
// its length wide (short of the crossings), a meeple a disc 1.6 times its spot, the house badge
// twice as tall (into the margin above the board). Board units.
function padOf(el) {
  const [x0, y0, x1, y1] = el.box;
  const w = x1 - x0, h = y1 - y0, cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  if (el.kind === "meeple") {
    const r = 0.8 * w;
    return [cx - r, cy - r, cx + r, cy + r];
  }
  if (el.kind === "fence") {
    const long = Math.max(w, h), band = 0.4 * long, trim = (band - Math.min(w, h)) / 2;
    if (trim <= 0) return null;
    return w >= h ? [x0 + trim, cy - band / 2, x1 - trim, cy + band / 2] : [cx - band / 2, y0 + trim, cx + band / 2, y1 - trim];
  }
  if (el.kind === "house") return [x0, y0 - h, x1, y1];
  return null;
}

const targetOf = (el) => (ui.narrow && padOf(el)) || el.box;

// The board's view box: the page's canvas and, on a phone, every pad.
function boardCanvas() {
  const [x, y, w, h] = ui.item.canvas;
  if (!ui.narrow) return [x, y, w, h];
  let [a, b, c, d] = [x, y, x + w, y + h];
  for (const e of ui.item.elements) {
    if (!e.box) continue;
    const t = targetOf(e);
    [a, b, c, d] = [Math.min(a, t[0]), Math.min(b, t[1]), Math.max(c, t[2]), Math.max(d, t[3])];
  }
  return [a, b, c - a, d - b];
}

// CSS px per board unit with the whole board shown, and once zoomed in: the scale at which
// the smallest tap target of the board is TAP_PX.
const wholeScale = () => $("overlay").clientWidth / boardCanvas()[2];
function zoomScale() {
  const sizes = ui.item.elements.filter((e) => e.box).map((e) => { const b = targetOf(e); return Math.min(b[2] - b[0], b[3] - b[1]); });
  return Math.max(wholeScale(), sizes.length ? TAP_PX / Math.min(...sizes) : 0);
}

// The region shown at `scale` around (cx, cy), kept on the board.
function zoomWindow(cx, cy, scale) {
  const [X, Y, W, H] = boardCanvas();
  const f = scale / wholeScale();
  const w = W / f, h = H / f;
  const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);
  return [clamp(cx - w / 2, X, X + W - w), clamp(cy - h / 2, Y, Y + H - h), w, h];
}

function showZoom() {
  const svg = $("overlay");
  const [x, y, w, h] = ui.zoom || boardCanvas();
  svg.setAttribute("viewBox", `${x} ${y} ${w} ${h}`);
  svg.classList.toggle("zoomed", Boolean(ui.zoom));
  $("zoom-out").hidden = !ui.zoom;
}

function zoomTo(cx, cy, scale) {
  ui.zoom = zoomWindow(cx, cy, scale);
  showZoom();
  status("Tap an element to edit it; drag to move the board; ⤢ or Esc shows the whole board.");
}

function zoomOut() {
  ui.zoom = null;
  showZoom();
  status("");
}

// When zoomed, an element selected another way (n / p, the lists) is brought into view.
function keepInView(name) {
  const el = element(name);
  if (!ui.zoom || !el || !el.box) return;
  const [x, y, w, h] = ui.zoom, b = el.box;
  if (b[0] >= x && b[1] >= y && b[2] <= x + w && b[3] <= y + h) return;
  zoomTo((b[0] + b[2]) / 2, (b[1] + b[3]) / 2, $("overlay").clientWidth / w);
}

function boardPoint(e) {
  return new DOMPoint(e.clientX, e.clientY).matrixTransform($("overlay").getScreenCTM().inverse());
}

const drag = { start: null, moved: false };

function setUpZoom() {
  const svg = $("overlay");
  // the first tap: zoom in (capture: the element under it is not selected yet)
  svg.addEventListener("click", (e) => {
    if (drag.moved) {                          // the end of a drag is no tap
      drag.moved = false;
      e.stopPropagation();
      return;
    }
    if (!ui.narrow || ui.zoom || !ui.item) return;
    const p = boardPoint(e);
    const scale = zoomScale();
    if (scale <= wholeScale() * 1.001) return;    // large enough already: the tap edits
    e.stopPropagation();
    zoomTo(p.x, p.y, scale);
  }, true);
  svg.addEventListener("pointerdown", (e) => {
    drag.moved = false;
    drag.start = ui.zoom && e.isPrimary ? { x: e.clientX, y: e.clientY, box: ui.zoom.slice(), id: e.pointerId } : null;
  });
  svg.addEventListener("pointermove", (e) => {
    const d = drag.start;
    if (!d || e.pointerId !== d.id || !ui.zoom) return;
    const dx = e.clientX - d.x, dy = e.clientY - d.y;
    if (!drag.moved && Math.hypot(dx, dy) < 10) return;
    if (!drag.moved) svg.setPointerCapture(e.pointerId);
    drag.moved = true;
    const k = d.box[2] / svg.clientWidth;
    const [X, Y, W, H] = boardCanvas();
    const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);
    ui.zoom = [clamp(d.box[0] - dx * k, X, X + W - d.box[2]), clamp(d.box[1] - dy * k, Y, Y + H - d.box[3]), d.box[2], d.box[3]];
    showZoom();
  });
  const end = (e) => {
    if (drag.start && e.pointerId === drag.start.id) drag.start = null;
    if (e.type === "pointercancel") drag.moved = false;      // a pinch took over
  };
  svg.addEventListener("pointerup", end);
  svg.addEventListener("pointercancel", end);
  $("zoom-out").addEventListener("click", zoomOut);
  const fit = () => {
    const was = ui.narrow;
    ui.narrow = NARROW.matches;
    if (!ui.item) return;
    if (was !== ui.narrow) {
      ui.zoom = null;
      showZoom();
      drawMarks();
    }
  };
  NARROW.addEventListener("change", fit);
  ui.narrow = NARROW.matches;
}

// ---------------------------------------------------------------- selecting and keys

function clearPending() {
  ui.pending = undefined;
  ui.typed = "";
  ui.edge = null;
}

function setPending(value) {
  ui.pending = value;
  render();
}

function select(name) {
  if (!element(name)) return;
  ui.selected = name;
  ui.tapped = null;
  clearPending();
  render();
  const n = document.querySelector(`#marks g[data-name="${name}"]`);
  if (n && n.scrollIntoView && !ui.narrow) n.scrollIntoView({ block: "nearest", inline: "nearest" });
  keepInView(name);
}

function step(delta) {
  const queue = ui.item.queue;
  const order = queue.length ? queue : ui.item.elements.filter((e) => !e.free).map((e) => e.name);
  if (!order.length) return;
  let i = order.indexOf(ui.selected);
  i = i < 0 ? (delta > 0 ? 0 : order.length - 1) : (i + delta + order.length) % order.length;
  select(order[i]);
}

async function accept() {
  if (!ui.selected) return step(1);
  if (ui.pending !== undefined) {
    if (!(await commit(ui.pending))) return;
  } else {
    ui.checked.add(ui.selected);
  }
  const queue = ui.item.queue;
  const left = queue.filter((n) => !ui.checked.has(n));
  if (left.length) {
    const after = queue.slice(queue.indexOf(ui.selected) + 1).find((n) => !ui.checked.has(n));
    select(after || left[0]);
  } else {
    render();
  }
}

// The option a key picks: its own key, or the value itself when it is that one letter.
function optionForKey(spec, key) {
  const k = key.toLowerCase();
  const own = spec.options.find((o) => o.key === k);
  if (own) return own;
  const matches = spec.options.filter((o) => !o.key && typeof o.value === "string" && o.value.toLowerCase() === k);
  return matches.length === 1 ? matches[0] : null;
}

const ARROWS = { ArrowUp: "N", ArrowRight: "E", ArrowDown: "S", ArrowLeft: "W" };

// Keys for the selected element's value; returns true when the key was used.
// n and p never reach here: they always step through the queue.
function valueKey(e, spec, value) {
  if (spec.type === "choice") {
    if (spec.draw === "segment" && ARROWS[e.key]) {
      const edge = ARROWS[e.key];
      if (!ui.edge || ui.edge === edge) {
        ui.edge = edge;
        status(`road from ${edge}: now the other edge`);
        return true;
      }
      const option = spec.options.find((o) => o.value && o.value.includes(ui.edge) && o.value.includes(edge));
      ui.edge = null;
      status("");
      if (option) setPending(option.value);
      return true;
    }
    const option = e.key.length === 1 && optionForKey(spec, e.key);
    if (option) {
      setPending(option.value);
      return true;
    }
    if (ARROWS[e.key]) {
      const values = spec.options.map((o) => o.value);
      const i = values.findIndex((v) => same(v, value));
      const d = e.key === "ArrowUp" || e.key === "ArrowLeft" ? -1 : 1;
      setPending(values[(i + d + values.length) % values.length]);
      return true;
    }
    return false;
  }
  if (spec.type === "number") {
    const max = spec.max === undefined ? Infinity : spec.max;
    const min = spec.min === undefined ? 0 : spec.min;
    if (/^[0-9]$/.test(e.key)) {
      ui.typed = (ui.typed + e.key).replace(/^0+(?=\d)/, "");
      if (Number(ui.typed) > max) ui.typed = e.key;
      setPending(Number(ui.typed));
      return true;
    }
    if (e.key === "Backspace") {
      ui.typed = ui.typed.slice(0, -1);
      setPending(ui.typed === "" ? (spec.blank ? null : min) : Number(ui.typed));
      return true;
    }
    if ((e.key === " " || e.key === "Delete" || e.key === "-") && spec.blank) {
      ui.typed = "";
      setPending(null);
      return true;
    }
    if (e.key === "ArrowUp" || e.key === "ArrowDown") {
      const base = value === null || value === undefined ? min - 1 : value;
      setPending(Math.min(max, Math.max(min, base + (e.key === "ArrowUp" ? 1 : -1))));
      ui.typed = "";
      return true;
    }
    return false;
  }
  if (spec.type === "tile") {
    const types = Object.keys(ui.item.catalogue.tiles);
    if (e.key.length === 1 && types.includes(e.key.toUpperCase()) && types.includes(e.key)) {
      setPending({ tile: e.key, rotation: value ? value.rotation || 0 : 0 });
      return true;
    }
    if (e.key.length === 1 && /[a-z]/.test(e.key) && types.includes(e.key.toUpperCase())) {
      setPending({ tile: e.key.toUpperCase(), rotation: value ? value.rotation || 0 : 0 });
      return true;
    }
    if ((e.key === "ArrowLeft" || e.key === "ArrowRight") && value) {
      setPending({ ...value, rotation: ((value.rotation || 0) + (e.key === "ArrowLeft" ? 270 : 90)) % 360 });
      return true;
    }
    if (e.key === "Delete" || e.key === "Backspace") {
      setPending(null);
      return true;
    }
    return false;
  }
  if (spec.type === "object" && value && typeof value === "object") {
    const fields = Object.entries(spec.fields);
    if (e.key.length === 1 && /[a-z]/i.test(e.key)) {
      const k = e.key.toLowerCase();
      for (const [name, sub] of fields) {
        if (sub.type !== "choice") continue;
        const hits = sub.options.filter((o) => o.value !== null && typeof o.value === "string" && o.label.toLowerCase().startsWith(k));
        if (hits.length === 1) {
          setPending({ ...value, [name]: hits[0].value });
          return true;
        }
      }
      return false;
    }
    if (/^[0-9]$/.test(e.key)) {
      // a count: for the number field already counting something, else the first one
      const numbers = fields.filter(([, s]) => s.type === "number");
      const [name] = numbers.find(([n]) => value[n]) || numbers[0] || [];
      if (!name) return false;
      ui.typed = (ui.typed + e.key).replace(/^0+(?=\d)/, "");
      setPending({ ...value, [name]: Number(ui.typed) });
      return true;
    }
  }
  return false;
}

document.addEventListener("keydown", async (e) => {
  const typing = e.target.closest && e.target.closest("input, textarea, select");
  if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "z" && !typing) {
    e.preventDefault();
    return undo();
  }
  if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
    e.preventDefault();
    return save();
  }
  if (typing || e.ctrlKey || e.metaKey || e.altKey || !ui.item) return;
  if (e.key === "Tab" || e.key === "n" || e.key === "p") {
    e.preventDefault();
    return step(e.key === "p" || e.shiftKey ? -1 : 1);
  }
  if (e.key === "Escape") {
    if (ui.pending === undefined && ui.zoom) return zoomOut();   // nothing to drop: the whole board
    clearPending();
    status("");
    return render();
  }
  if (e.key === "Enter") {
    if (e.target.closest && e.target.closest("button")) return;   // a focused button clicks
    e.preventDefault();
    return act(accept);
  }
  if (e.key === "[" || e.key === "]") {
    const i = ui.boards.findIndex((b) => b.id === ui.id) + (e.key === "]" ? 1 : -1);
    if (i >= 0 && i < ui.boards.length) showBoard(ui.boards[i].id);
    return;
  }
  const el = ui.selected && element(ui.selected);
  if (el && valueKey(e, specOf(el), current())) e.preventDefault();
});

$("boards").addEventListener("change", (e) => showBoard(Number(e.target.value)));
setUpZoom();
$("undo").addEventListener("click", undo);
$("save").addEventListener("click", save);
loadBoards().catch((e) => status(e.message, true));
