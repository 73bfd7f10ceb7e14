// scorelens review page: draw a reading over its board, edit it, rescore on the server.
// No framework and no build step: the server (vision/review.py) serves this file as is.
"use strict";

const TOKEN = document.querySelector('meta[name="scorelens-token"]').content;
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

const ui = {
  boards: [],        // summaries from /api/items
  id: null,          // the board shown
  item: null,        // its view from the server
  selected: null,    // element name
  pending: undefined, // a value chosen but not yet sent (Enter sends it)
  typed: "",         // digits typed for a number
  edge: null,        // first arrow of an Avenue road
  checked: new Set(), // elements accepted or corrected on this page
};

// ---------------------------------------------------------------- server

async function api(method, url, body) {
  const options = { method, headers: {} };
  if (method === "POST") {
    options.headers["Content-Type"] = "application/json";
    options.headers["X-Scorelens-Token"] = TOKEN;
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
  if (ui.boards.length) await showBoard(ui.boards[0].id);
}

async function showBoard(id) {
  ui.item = await api("GET", `/api/items/${id}`);
  ui.id = id;
  ui.checked = new Set();
  ui.selected = null;
  clearPending();
  $("boards").value = String(id);
  buildBoard();
  render();
  if (ui.item.queue.length) select(ui.item.queue[0]);
}

async function send(path, body) {
  try {
    const view = await api("POST", `/api/items/${ui.id}/${path}`, body);
    const before = $("total").textContent;
    Object.assign(ui.item, view);
    render();
    if ($("total").textContent !== before) flash($("total"));
    return view;
  } catch (e) {
    status(e.message, true);
    return null;
  }
}

async function commit(value) {
  const name = ui.selected;
  if (!name) return false;
  const el = element(name);
  clearPending();
  if (el && JSON.stringify(el.value) === JSON.stringify(value)) {
    ui.checked.add(name);
    render();
    return true;
  }
  const view = await send("edit", { element: name, value });
  if (view) {
    ui.checked.add(name);
    status(`${name}: ${show(el ? el.value : null)} → ${show(value)}`);
    render();
  }
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
  const select = $("boards");
  select.replaceChildren(...ui.boards.map((b) => new Option(`${b.name} (${b.to_check} to check)${b.saved ? " ✓ saved" : ""}`, b.id)));
  select.value = String(ui.id);
}

// ---------------------------------------------------------------- values

function show(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "boolean") return value ? "on" : "off";
  if (typeof value === "object") {
    return Object.entries(value).filter(([, v]) => v !== null && v !== false && v !== 0)
      .map(([k, v]) => (v === true ? k : `${k} ${show(v)}`)).join(", ") || "–";
  }
  return String(value);
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// A value as its editor names it (a fence 1 is "on"), else as show() writes it.
function showAs(spec, value) {
  const option = spec && spec.type === "choice" && spec.options.find((o) => same(o.value, value));
  return option && option.value !== null ? option.label : show(value);
}
const element = (name) => ui.item.elements.find((e) => e.name === name);
const specOf = (el) => (el && ui.item.editors[el.kind]) || { type: "json" };
const current = () => (ui.pending !== undefined ? ui.pending : element(ui.selected).value);

// An Avenue road segment, drawn in a box: the two edge midpoints, joined
// straight or through the centre for a curve.
function segmentPath(seg, x0, y0, x1, y1) {
  const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  const at = { N: [cx, y0], E: [x1, cy], S: [cx, y1], W: [x0, cy] };
  const [a, b] = [at[seg[0]], at[seg[1]]];
  if (seg === "NS" || seg === "EW") return `M${a[0]},${a[1]} L${b[0]},${b[1]}`;
  return `M${a[0]},${a[1]} Q${cx},${cy} ${b[0]},${b[1]}`;
}

// ---------------------------------------------------------------- drawing

function buildBoard() {
  const svg = $("overlay"), list = $("element-list"), item = ui.item;
  svg.replaceChildren();
  list.replaceChildren();
  const drawn = item.image && item.elements.some((e) => e.box);
  svg.style.display = item.image ? "" : "none";
  // elements with no place on the image (Agricola's house) are listed beside it
  list.hidden = Boolean(drawn) && item.elements.every((e) => e.box);
  if (item.image) {
    svg.setAttribute("viewBox", `0 0 ${item.image.width} ${item.image.height}`);
    const img = document.createElementNS(SVG, "image");
    img.setAttribute("href", item.image.url);
    img.setAttribute("width", item.image.width);
    img.setAttribute("height", item.image.height);
    svg.append(img);
  }
  for (const el of item.elements) {
    if (drawn && el.box) {
      const g = document.createElementNS(SVG, "g");
      g.dataset.name = el.name;
      g.classList.add("el");
      const [x0, y0, x1, y1] = el.box;
      const rect = document.createElementNS(SVG, "rect");
      Object.entries({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 }).forEach(([k, v]) => rect.setAttribute(k, v));
      const title = document.createElementNS(SVG, "title");
      rect.append(title);
      g.append(rect);
      if (specOf(el).draw === "segment") {
        const path = document.createElementNS(SVG, "path");
        path.classList.add("seg");
        g.append(path);
      }
      const tag = document.createElementNS(SVG, "rect");
      tag.classList.add("tag");
      tag.setAttribute("x", x0 + 2);
      tag.setAttribute("y", y0 + 2);
      tag.setAttribute("height", 17);
      const text = document.createElementNS(SVG, "text");
      text.setAttribute("x", x0 + 5);
      text.setAttribute("y", y0 + 15);
      g.append(tag, text);
      g.addEventListener("click", () => select(el.name));
      svg.append(g);
    } else {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.name = el.name;
      b.addEventListener("click", () => select(el.name));
      list.append(b);
    }
  }
}

function render() {
  const item = ui.item;
  for (const el of item.elements) {
    const classes = {
      flagged: el.flagged && !ui.checked.has(el.name) && same(el.value, el.read),
      fixed: !same(el.value, el.read),
      checked: ui.checked.has(el.name) && same(el.value, el.read),
      selected: el.name === ui.selected,
      pending: el.name === ui.selected && ui.pending !== undefined,
    };
    const shown = el.name === ui.selected && ui.pending !== undefined ? ui.pending : el.value;
    const g = document.querySelector(`#overlay g[data-name="${el.name}"]`);
    if (g) {
      Object.entries(classes).forEach(([k, v]) => g.classList.toggle(k, v));
      const conf = el.confidence === null ? "" : ` (${Math.round(el.confidence * 100)}%)`;
      const spec = specOf(el);
      g.querySelector("title").textContent = `${el.name}: ${showAs(spec, shown)}, read ${showAs(spec, el.read)}${conf}`;
      const text = g.querySelector("text");
      text.textContent = showAs(spec, shown);
      const width = 8 * text.textContent.length + 8;
      g.querySelector(".tag").setAttribute("width", width);
      const path = g.querySelector("path.seg");
      if (path) {
        const [x0, y0, x1, y1] = el.box;
        path.setAttribute("d", shown ? segmentPath(shown, x0, y0, x1, y1) : "");
      }
    }
    const b = document.querySelector(`#element-list button[data-name="${el.name}"]`);
    if (b) {
      b.textContent = `${el.name}: ${showAs(specOf(el), shown)}`;
      Object.entries(classes).forEach(([k, v]) => b.classList.toggle(k, v));
    }
  }
  renderEditor();
  renderQueue();
  renderCard();
  renderFields();
  renderHistory();
  const left = item.queue.filter((n) => !ui.checked.has(n)).length;
  $("progress").textContent = `${left} of ${item.queue.length} left to check`;
  $("save").disabled = !item.can_save;
  $("undo").disabled = !item.history.length;
}

function flash(node) {
  node.classList.remove("changed");
  void node.offsetWidth;
  node.classList.add("changed");
}

function button(label, onclick, cls) {
  const b = document.createElement("button");
  b.type = "button";
  b.append(label);
  if (cls) b.className = cls;
  b.addEventListener("click", onclick);
  return b;
}

function segmentIcon(seg) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 28 28");
  const frame = document.createElementNS(SVG, "rect");
  Object.entries({ x: 1, y: 1, width: 26, height: 26 }).forEach(([k, v]) => frame.setAttribute(k, v));
  svg.append(frame);
  if (seg) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", segmentPath(seg, 1, 1, 27, 27));
    svg.append(path);
  }
  return svg;
}

// One editor for a spec; `value` is what it shows, `set` is called with a new value.
function editorFor(spec, value, set, commitNow) {
  const box = document.createElement("div");
  box.className = "field";
  if (spec.type === "choice") {
    for (const option of spec.options) {
      const label = document.createElement("span");
      if (spec.draw === "segment") label.append(segmentIcon(option.value));
      label.append(option.label + (option.key ? ` [${option.key}]` : ""));
      const on = same(option.value, value);
      box.append(button(label, () => commitNow(option.value), on ? "on" : ""));
    }
  } else if (spec.type === "number") {
    const input = document.createElement("input");
    input.type = "number";
    input.min = spec.min;
    if (spec.max !== undefined) input.max = spec.max;
    input.value = value === null || value === undefined ? "" : value;
    input.addEventListener("change", () => set(input.value === "" ? null : Number(input.value)));
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        e.stopPropagation();
        commitNow(input.value === "" ? null : Number(input.value));
      }
    });
    box.append(input);
    if (spec.blank) box.append(button("blank", () => commitNow(null), value === null ? "on" : ""));
  } else if (spec.type === "text") {
    const input = document.createElement("input");
    input.type = "text";
    input.value = value === null || value === undefined ? "" : value;
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        e.stopPropagation();
        commitNow(input.value === "" && spec.blank ? null : input.value);
      }
    });
    input.addEventListener("change", () => set(input.value));
    box.append(input);
  } else if (spec.type === "object" && (value === null || value === undefined || typeof value === "object")) {
    const obj = value || {};
    for (const [name, sub] of Object.entries(spec.fields)) {
      const row = editorFor(sub, obj[name], (v) => set({ ...obj, [name]: v }),
        (v) => set({ ...obj, [name]: v }));
      const label = document.createElement("span");
      label.textContent = name;
      row.prepend(label);
      box.append(row);
    }
    box.append(button("apply", () => commitNow(obj)));
    if (spec.blank) box.append(button("remove", () => commitNow(null)));
  } else if (spec.type === "map" && value && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) {
      const row = editorFor(spec.values, v, (x) => set({ ...value, [key]: x }),
        (x) => commitNow({ ...value, [key]: x }));
      const label = document.createElement("span");
      label.textContent = key;
      row.prepend(label);
      box.append(row);
    }
  } else {
    const area = document.createElement("textarea");
    area.value = JSON.stringify(value, null, 1);
    area.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        e.stopPropagation();
        apply();
      }
    });
    const apply = () => {
      try {
        commitNow(JSON.parse(area.value));
      } catch (err) {
        status(`not JSON: ${err.message}`, true);
      }
    };
    box.append(area, button("apply (Ctrl-Enter)", apply));
  }
  return box;
}

function renderEditor() {
  const el = ui.selected && element(ui.selected);
  const body = $("editor-body");
  if (!el) {
    $("editor-title").textContent = "Select an element";
    $("editor-read").textContent = "";
    body.replaceChildren();
    return;
  }
  const conf = el.confidence === null ? "" : `, confidence ${Math.round(el.confidence * 100)}%`;
  $("editor-title").textContent = el.name;
  $("editor-read").textContent = `read as ${show(el.read)}${conf}; now ${show(el.value)}` +
    (ui.pending !== undefined ? `; Enter sets ${show(ui.pending)}` : "");
  const spec = specOf(el);
  const focused = document.activeElement && body.contains(document.activeElement);
  if (focused && spec.type !== "choice") return; // do not rebuild an input being typed in
  body.replaceChildren(editorFor(spec, current(), (v) => setPending(v), (v) => commit(v)));
  const hints = {
    choice: spec.draw === "segment" ? "1-6 or two arrows (the edges the road joins), 0 none" : "its key, or arrows",
    number: "type the number, Backspace, Space for blank, arrows ±1",
    object: "a letter picks the type, digits a count, arrows the rotation",
    text: "type it, Enter",
    map: "type each value",
    json: "edit the JSON, Ctrl-Enter to apply",
  };
  $("editor-hint").textContent = `${hints[spec.type] || ""}; Enter accepts`;
  if (ui.pending !== undefined) {
    body.querySelectorAll("button.on").forEach((b) => b.classList.replace("on", "pending"));
  }
}

function renderQueue() {
  const list = $("queue");
  list.replaceChildren(...ui.item.queue.map((name) => {
    const el = element(name);
    const li = document.createElement("li");
    const conf = el.confidence === null ? "" : ` ${Math.round(el.confidence * 100)}%`;
    li.textContent = `${name}: ${show(el.value)}${conf}`;
    li.classList.toggle("current", name === ui.selected);
    li.classList.toggle("done", ui.checked.has(name) || !same(el.value, el.read));
    li.addEventListener("click", () => select(name));
    return li;
  }));
}

function cardTable(card) {
  const table = document.createElement("table");
  const head = table.insertRow();
  ["", "count", "points"].forEach((t) => { const th = document.createElement("th"); th.textContent = t; head.append(th); });
  for (const line of card.lines || []) {
    const row = table.insertRow();
    row.insertCell().textContent = line.category + (line.note ? ` (${line.note})` : "");
    const count = row.insertCell();
    count.textContent = line.count === null ? "" : line.count;
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
  for (const [k, v] of Object.entries(card)) {
    if (["game", "lines", "total", "warnings", "players"].includes(k) || typeof v === "object") continue;
    const row = table.insertRow();
    row.insertCell().textContent = k.replace(/_/g, " ");
    row.insertCell();
    row.insertCell().textContent = v;
  }
  return table;
}

function renderCard() {
  const card = ui.item.card;
  const box = $("card");
  if (card.players && typeof card.players === "object") {
    // one card per player: a list, or an object by colour
    const players = Array.isArray(card.players)
      ? card.players.map((p, i) => [p.player || p.name || p.colour || `player ${i + 1}`, p])
      : Object.entries(card.players);
    box.replaceChildren(...players.map(([name, p]) => {
      const div = document.createElement("div");
      const h = document.createElement("h3");
      h.textContent = name;
      div.append(h, cardTable(p));
      return div;
    }));
    $("total").textContent = players.map(([name, p]) => `${name} ${p.total}`).join(" · ");
  } else {
    box.replaceChildren(cardTable(card));
    $("total").textContent = card.total;
  }
  $("findings").replaceChildren(...ui.item.findings.map((f) => {
    const li = document.createElement("li");
    li.append(f.message + " ");
    for (const name of f.elements) {
      const target = element(name) ? name : [`${name}:farm`, `${name}:score`].find((n) => element(n));
      if (!target) continue;
      const a = document.createElement("a");
      a.textContent = name;
      a.addEventListener("click", () => select(target));
      li.append(a, " ");
    }
    return li;
  }));
}

function renderFields() {
  const fields = ui.item.fields;
  const names = Object.keys(fields);
  $("fields-box").hidden = !names.length;
  const box = $("fields");
  if (box.contains(document.activeElement)) return;
  box.replaceChildren(...names.map((name) => {
    const spec = ui.item.editors[`field:${name}`] || { type: "json" };
    const commitField = async (v) => {
      const old = fields[name];
      if (await send("edit", { field: name, value: v })) status(`${name}: ${show(old)} → ${show(v)}`);
    };
    let value = fields[name];
    const row = editorFor(spec, value, (v) => {
      value = v;
      if (spec.type === "number" || spec.type === "map") commitField(v);
    }, commitField);
    const label = document.createElement("span");
    label.textContent = name;
    row.prepend(label);
    return row;
  }));
}

function renderHistory() {
  $("history").replaceChildren(...ui.item.history.slice().reverse().map((h) => {
    const li = document.createElement("li");
    const name = h.element || h.field;
    const a = document.createElement("a");
    a.textContent = name;
    if (h.element) a.addEventListener("click", () => select(h.element));
    li.append(a, `: ${show(h.old)} → ${show(h.new)}`);
    return li;
  }));
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
  clearPending();
  render();
  const node = document.querySelector(`#overlay g[data-name="${name}"]`);
  if (node && node.scrollIntoView) node.scrollIntoView({ block: "nearest", inline: "nearest" });
}

function step(delta) {
  const queue = ui.item.queue;
  const order = queue.length ? queue : ui.item.elements.map((e) => e.name);
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
  const left = ui.item.queue.filter((n) => !ui.checked.has(n));
  if (left.length) {
    const queue = ui.item.queue;
    const after = queue.slice(queue.indexOf(ui.selected) + 1).find((n) => !ui.checked.has(n));
    select(after || left[0]);
  } else {
    render();
  }
}

// The key a choice option answers to: its own key, or the first letter of its label if unique.
function optionForKey(spec, key) {
  const k = key.toLowerCase();
  const own = spec.options.find((o) => o.key === k);
  if (own) return own;
  const matches = spec.options.filter((o) => !o.key && typeof o.value === "string" && o.value.toLowerCase() === k);
  return matches.length === 1 ? matches[0] : null;
}

const ARROWS = { ArrowUp: "N", ArrowRight: "E", ArrowDown: "S", ArrowLeft: "W" };

// Keys for the selected element's value; returns true when the key was used.
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
    if (e.key === "ArrowUp" || e.key === "ArrowDown" || e.key === "ArrowLeft" || e.key === "ArrowRight") {
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
    if (/^[0-9]$/.test(e.key)) {
      ui.typed = (ui.typed + e.key).replace(/^0+(?=\d)/, "");
      if (Number(ui.typed) > max) ui.typed = e.key;
      setPending(Number(ui.typed));
      return true;
    }
    if (e.key === "Backspace") {
      ui.typed = ui.typed.slice(0, -1);
      setPending(ui.typed === "" ? (spec.blank ? null : spec.min) : Number(ui.typed));
      return true;
    }
    if ((e.key === " " || e.key === "Delete" || e.key === "-") && spec.blank) {
      ui.typed = "";
      setPending(null);
      return true;
    }
    if (e.key === "ArrowUp" || e.key === "ArrowDown") {
      const base = value === null || value === undefined ? spec.min - 1 : value;
      setPending(Math.min(max, Math.max(spec.min, base + (e.key === "ArrowUp" ? 1 : -1))));
      ui.typed = "";
      return true;
    }
    return false;
  }
  if (spec.type === "object" && value && typeof value === "object") {
    const fields = Object.entries(spec.fields);
    if (e.key.length === 1 && /[a-z]/i.test(e.key)) {
      // the first choice field with exactly one option starting with that letter
      const k = e.key.toLowerCase();
      for (const [name, sub] of fields) {
        if (sub.type !== "choice") continue;
        const hits = sub.options.filter((o) => o.value !== null && String(o.label).toLowerCase().startsWith(k));
        if (hits.length === 1) {
          setPending({ ...value, [name]: hits[0].value });
          return true;
        }
      }
      return false;
    }
    if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      const [name, sub] = fields.find(([n]) => /rotation|orientation/.test(n)) || [];
      if (!sub) return false;
      const values = sub.type === "choice" ? sub.options.map((o) => o.value)
        : [0, 90, 180, 270].filter((v) => v >= sub.min && (sub.max === undefined || v <= sub.max));
      const i = values.findIndex((v) => same(v, value[name] === undefined ? values[0] : value[name]));
      const d = e.key === "ArrowLeft" ? -1 : 1;
      setPending({ ...value, [name]: values[(i + d + values.length) % values.length] });
      return true;
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
  if (e.key === "Tab") {
    e.preventDefault();
    return step(e.shiftKey ? -1 : 1);
  }
  if (e.key === "Escape") {
    clearPending();
    status("");
    return render();
  }
  if (e.key === "Enter") {
    e.preventDefault();
    return accept();
  }
  if (e.key === "[" || e.key === "]") {
    const i = ui.boards.findIndex((b) => b.id === ui.id) + (e.key === "]" ? 1 : -1);
    if (i >= 0 && i < ui.boards.length) showBoard(ui.boards[i].id);
    return;
  }
  const el = ui.selected && element(ui.selected);
  if (el && valueKey(e, specOf(el), current())) {
    e.preventDefault();
    return;
  }
  if (e.key === "n" || e.key === "p") {
    e.preventDefault();
    step(e.key === "n" ? 1 : -1);
  }
});

$("boards").addEventListener("change", (e) => showBoard(Number(e.target.value)));
$("undo").addEventListener("click", undo);
$("save").addEventListener("click", save);
loadBoards().catch((e) => status(e.message, true));
