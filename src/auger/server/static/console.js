/* auger's web console: plain JavaScript over the server's JSON endpoints, no build step. */
"use strict";

const BODY = document.body.dataset;
const USER = BODY.user || "";
const ADMIN = BODY.admin === "true";
const TITLES = {query: "Query", profiles: "Profiles", profile: "Profile", options: "Options",
                storage: "Storage", metrics: "Metrics", threads: "Threads", logs: "Logs",
                status: "Status"};
const $ = id => document.getElementById(id);
// the storage configuration is for administrators only: others are not offered the page
if (!ADMIN) document.querySelectorAll('header a[data-tab="storage"]').forEach(a => a.remove());

// ------------------------------------------------------------------ helpers
function el(tag, text, attrs) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}
function button(text, onClick, attrs) {
  const b = el("button", text, Object.assign({type: "button"}, attrs || {}));
  b.addEventListener("click", onClick);
  return b;
}
/** A flat table: the header row first, then one row per record; ``cell`` may fill a td itself
 * (returning undefined) or return the text to show. */
function fillTable(table, columns, rows, cell) {
  table.replaceChildren();
  const head = el("tr");
  columns.forEach(c => head.appendChild(el("th", c, {scope: "col"})));
  table.appendChild(head);
  rows.forEach(r => {
    const tr = el("tr");
    columns.forEach((c, i) => {
      const td = el("td");
      const v = cell ? cell(r, c, i, td, tr) : r[c];
      if (v !== undefined) td.textContent = v === null ? "null" : (typeof v === "object" ? JSON.stringify(v) : String(v));
      tr.appendChild(td);
    });
    table.appendChild(tr);
  });
}
function emptyState(table, text, cls) {
  const tr = el("tr");
  tr.appendChild(el("td", text, {class: "empty" + (cls ? " " + cls : "")}));
  table.replaceChildren(tr);
}
function loginRedirect() {
  location.href = "/login?redirect=" + encodeURIComponent(location.pathname + location.search);
}
async function getJson(url, init) {
  const opts = Object.assign({credentials: "same-origin"}, init || {});
  opts.headers = Object.assign({Accept: "application/json"}, opts.headers || {});
  const resp = await fetch(url, opts);
  if (resp.status === 401) { loginRedirect(); throw new Error("Log in to see this page."); }
  const text = await resp.text();
  let data;
  try { data = JSON.parse(text); } catch (e) { if (resp.ok) return text; throw new Error(text || resp.statusText); }
  if (!resp.ok) throw new Error((data && (data.errorMessage || data.result)) || resp.status + " " + resp.statusText);
  return data;
}
function postJson(url, body) {
  return getJson(url, {method: "POST", body: JSON.stringify(body || {}),
                       headers: {"Content-Type": "application/json"}});
}
function ms(v) {
  if (v === null || v === undefined) return "–";
  if (v < 1000) return v + " ms";
  if (v < 60000) return (v / 1000).toFixed(2) + " s";
  return Math.floor(v / 60000) + " min " + ((v % 60000) / 1000).toFixed(1) + " s";
}
function quoteName(name) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : "`" + name.replace(/`/g, "``") + "`";
}

// ------------------------------------------------------------------ navigation
let current = null;
function show(tab, push) {
  if (!(tab in TITLES)) tab = "query";
  current = tab;
  $("page-title").textContent = TITLES[tab];
  document.title = "auger · " + TITLES[tab];
  document.querySelectorAll("main > section").forEach(s => s.classList.toggle("active", s.id === tab));
  document.querySelectorAll("header a[data-tab]").forEach(a => {
    const on = a.dataset.tab === tab || (tab === "profile" && a.dataset.tab === "profiles");
    a.classList.toggle("active", on);
    if (on) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  });
  if (push && tab !== "profile") history.pushState({tab: tab}, "", "/" + tab);
  const loaders = {query: loadSchemas, profiles: loadProfiles, options: loadOptions,
                   storage: loadStorage, metrics: loadMetrics, threads: loadThreads,
                   logs: loadLogs, status: loadStatus, profile: () => loadProfile(BODY.profile)};
  loaders[tab]();
}
document.querySelectorAll("header a[data-tab]").forEach(a =>
  a.addEventListener("click", ev => {
    if (ev.ctrlKey || ev.metaKey || ev.shiftKey) return;  // a new tab keeps the link
    ev.preventDefault();
    show(a.dataset.tab, true);
  }));
window.addEventListener("popstate", ev => show((ev.state && ev.state.tab) || "query", false));

// ------------------------------------------------------------------ SQL editor
const KEYWORDS = ("SELECT FROM WHERE GROUP BY ORDER HAVING LIMIT OFFSET AS AND OR NOT IN IS NULL " +
  "LIKE ILIKE BETWEEN JOIN LEFT RIGHT FULL INNER OUTER CROSS ON USING UNION ALL DISTINCT CASE WHEN " +
  "THEN ELSE END CAST CREATE TABLE VIEW DROP IF EXISTS INSERT INTO VALUES WITH SHOW SCHEMAS TABLES " +
  "FILES DESCRIBE USE ALTER SESSION SYSTEM SET RESET EXPLAIN PLAN FOR ASC DESC TRUE FALSE COUNT SUM " +
  "AVG MIN MAX FLATTEN KVGEN CONVERT_FROM CONVERT_TO TYPEOF SQLTYPEOF DATE TIMESTAMP INTERVAL " +
  "VARCHAR INTEGER BIGINT DOUBLE FLOAT DECIMAL BOOLEAN OVER PARTITION ROWS TEMPORARY APPLY LATERAL " +
  "UNNEST REFRESH METADATA ANALYZE COMPUTE STATISTICS").split(" ");
const KEYWORD_SET = new Set(KEYWORDS);
const TOKEN = /(--[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|('(?:[^']|'')*'?)|(`[^`]*`?|"[^"]*"?)|(\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b)|([A-Za-z_][A-Za-z0-9_$]*)/g;
const esc = s => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function highlight() {
  const text = $("sql").value;
  let out = "", last = 0;
  text.replace(TOKEN, (m, com, str, id, num, word, at) => {
    out += esc(text.slice(last, at));
    last = at + m.length;
    const cls = com ? "com" : str ? "str" : id ? "id" : num ? "num" :
      (KEYWORD_SET.has(word.toUpperCase()) ? "kw" : null);
    out += cls ? `<span class="tok-${cls}">${esc(m)}</span>` : esc(m);
    return m;
  });
  $("sql-highlight").innerHTML = out + esc(text.slice(last)) + "\n ";
  syncScroll();
}
function syncScroll() {
  $("sql-highlight").scrollTop = $("sql").scrollTop;
  $("sql-highlight").scrollLeft = $("sql").scrollLeft;
}

// the catalog, fetched lazily with the server's own look-up statements (no profiles)
const catalog = {schemas: null, tables: {}, columns: {}};
async function lookup(sql) {
  const resp = await fetch("/query.json", {
    method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json", Accept: "application/json", "X-Auger-Internal": "true"},
    body: JSON.stringify({queryType: "SQL", query: sql})});
  if (resp.status === 401) { loginRedirect(); throw new Error("login needed"); }
  const data = JSON.parse(await resp.text());
  if (data.queryState !== "COMPLETED") throw new Error(data.errorMessage || "look-up failed");
  return data;
}
async function schemas() {
  if (!catalog.schemas) {
    const data = await lookup("SHOW SCHEMAS");
    catalog.schemas = data.rows.map(r => r[data.columns[0]]).filter(Boolean).sort();
  }
  return catalog.schemas;
}
async function tables(schema) {
  if (!catalog.tables[schema]) {
    const names = new Map();
    try {
      const files = await lookup("SHOW FILES IN " + schema);
      files.rows.forEach(r => names.set(r.name, r.isDirectory === true || r.isDirectory === "true" ? "directory" : "file"));
    } catch (e) { /* not a file system schema */ }
    try {
      const tabs = await lookup("SHOW TABLES IN " + schema);
      tabs.rows.forEach(r => names.set(r.TABLE_NAME, "table"));
    } catch (e) { /* no tables */ }
    catalog.tables[schema] = [...names.entries()].sort((a, b) => a[0].localeCompare(b[0]))
      .map(([name, kind]) => ({name, kind}));
  }
  return catalog.tables[schema];
}
function tableRef(schema, table) {
  return schema.split(".").map(quoteName).join(".") + "." + quoteName(table);
}
async function columns(ref) {
  if (!catalog.columns[ref]) {
    const data = await lookup("SELECT * FROM " + ref + " LIMIT 0");
    catalog.columns[ref] = data.columns.map((c, i) => ({name: c, type: (data.metadata || [])[i] || ""}));
  }
  return catalog.columns[ref];
}

function insertText(text) {
  const ta = $("sql");
  ta.focus();
  ta.setRangeText(text, ta.selectionStart, ta.selectionEnd, "end");
  highlight();
}

// ----- completion
let completion = {items: [], index: 0, start: 0};
let completionAsked = 0;  // only the latest request's answer is shown
function wordBeforeCaret() {
  const ta = $("sql");
  const before = ta.value.slice(0, ta.selectionStart);
  const m = /[A-Za-z0-9_.$`\/-]*$/.exec(before);
  return {word: m[0], start: ta.selectionStart - m[0].length};
}
function referencedTables() {
  const refs = [];
  const re = /\b(?:FROM|JOIN)\s+((?:`[^`]+`|[A-Za-z0-9_$]+)(?:\.(?:`[^`]+`|[A-Za-z0-9_$]+))*)/gi;
  let m;
  while ((m = re.exec($("sql").value)) !== null) refs.push(m[1]);
  return refs;
}
async function candidates(word) {
  const bare = word.replace(/`/g, "").toLowerCase();
  const out = [];
  const dot = word.lastIndexOf(".");
  let all = [];
  try { all = await schemas(); } catch (e) { /* offline catalog: keywords only */ }
  if (dot >= 0) {
    const head = word.slice(0, dot).replace(/`/g, "");
    all.filter(s => s.toLowerCase().startsWith(bare)).forEach(s => out.push({text: s, kind: "schema"}));
    if (all.includes(head)) {
      const tail = word.slice(dot + 1).replace(/`/g, "").toLowerCase();
      (await tables(head)).filter(t => t.name.toLowerCase().startsWith(tail))
        .forEach(t => out.push({text: tableRef(head, t.name), kind: t.kind}));
    }
    return out;
  }
  for (const ref of referencedTables()) {
    try {
      (await columns(ref)).filter(c => c.name.toLowerCase().startsWith(bare))
        .forEach(c => out.push({text: quoteName(c.name), kind: c.type || "column"}));
    } catch (e) { /* a table that does not exist yet */ }
  }
  all.filter(s => s.toLowerCase().startsWith(bare)).forEach(s => out.push({text: s, kind: "schema"}));
  KEYWORDS.filter(k => k.toLowerCase().startsWith(bare) && bare.length > 0)
    .forEach(k => out.push({text: k, kind: "keyword"}));
  const seen = new Set();
  return out.filter(c => !seen.has(c.text) && seen.add(c.text));
}
async function openCompletion(explicit) {
  const {word, start} = wordBeforeCaret();
  if (!explicit && word.length < 1) { closeCompletion(); return; }
  const asked = ++completionAsked;
  const items = (await candidates(word)).slice(0, 60);
  if (asked !== completionAsked) return;
  if (!items.length) { closeCompletion(); return; }
  completion = {items, index: 0, start};
  const list = $("completions");
  list.replaceChildren();
  items.forEach((c, i) => {
    const li = el("li", c.text, {role: "option", id: "completion-" + i, "aria-selected": i === 0 ? "true" : "false"});
    li.appendChild(el("span", c.kind, {class: "kind"}));
    li.addEventListener("mousedown", ev => { ev.preventDefault(); completion.index = i; acceptCompletion(); });
    list.appendChild(li);
  });
  const ta = $("sql");
  const lines = ta.value.slice(0, ta.selectionStart).split("\n");
  list.style.top = Math.min(ta.clientHeight - 20, 8 + lines.length * 21 - ta.scrollTop) + "px";
  list.style.left = Math.min(ta.clientWidth - 200, 10 + lines[lines.length - 1].length * 8.4) + "px";
  list.hidden = false;
  ta.setAttribute("aria-activedescendant", "completion-0");
}
function closeCompletion() {
  $("completions").hidden = true;
  $("sql").removeAttribute("aria-activedescendant");
}
function moveCompletion(delta) {
  const n = completion.items.length;
  completion.index = (completion.index + delta + n) % n;
  [...$("completions").children].forEach((li, i) => li.setAttribute("aria-selected", i === completion.index ? "true" : "false"));
  $("completions").children[completion.index].scrollIntoView({block: "nearest"});
  $("sql").setAttribute("aria-activedescendant", "completion-" + completion.index);
}
function acceptCompletion() {
  const ta = $("sql");
  const item = completion.items[completion.index];
  ta.setRangeText(item.text, completion.start, ta.selectionStart, "end");
  closeCompletion();
  highlight();
}
let completionTimer = null;
$("sql").addEventListener("input", () => {
  highlight();
  clearTimeout(completionTimer);
  const {word} = wordBeforeCaret();
  if (/[.]$/.test(word) || !$("completions").hidden) completionTimer = setTimeout(() => openCompletion(false), 150);
});
$("sql").addEventListener("scroll", syncScroll);
$("sql").addEventListener("blur", () => setTimeout(closeCompletion, 150));
$("sql").addEventListener("keydown", ev => {
  const open = !$("completions").hidden;
  if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); closeCompletion(); runQuery(); return; }
  if (ev.key === " " && ev.ctrlKey) { ev.preventDefault(); openCompletion(true); return; }
  if (!open) return;
  if (ev.key === "ArrowDown") { ev.preventDefault(); moveCompletion(1); }
  else if (ev.key === "ArrowUp") { ev.preventDefault(); moveCompletion(-1); }
  else if (ev.key === "Enter" || ev.key === "Tab") { ev.preventDefault(); acceptCompletion(); }
  else if (ev.key === "Escape") { ev.preventDefault(); closeCompletion(); }
});

// ----- schema browser
function treeItem(label, kind, insert, expand, typeText) {
  const li = el("li", null, {role: "treeitem", "aria-expanded": expand ? "false" : undefined});
  if (!expand) li.removeAttribute("aria-expanded");
  const toggle = el("button", expand ? "▸" : "·", {class: "toggle", type: "button",
    "aria-label": (expand ? "Open " : "") + label, tabindex: expand ? "0" : "-1"});
  const name = el("button", label, {class: "name", type: "button", title: "Insert " + insert,
    "data-kind": kind, "data-insert": insert});
  name.addEventListener("click", () => insertText(insert));
  li.append(toggle, name);
  if (typeText) li.appendChild(el("span", typeText, {class: "type"}));
  if (expand) {
    const sub = el("ul", null, {role: "group"});
    sub.hidden = true;
    li.appendChild(sub);
    let loaded = false;
    toggle.addEventListener("click", async () => {
      const opening = sub.hidden;
      sub.hidden = !opening;
      toggle.textContent = opening ? "▾" : "▸";
      li.setAttribute("aria-expanded", opening ? "true" : "false");
      if (opening && !loaded) {
        loaded = true;
        sub.replaceChildren(el("li", "loading…", {class: "muted"}));
        try {
          const items = await expand();
          sub.replaceChildren(...(items.length ? items : [el("li", "(empty)", {class: "muted"})]));
        } catch (e) {
          loaded = false;
          sub.replaceChildren(el("li", e.message, {class: "fail"}));
        }
      }
    });
  }
  return li;
}
async function loadSchemas() {
  const tree = $("schema-tree");
  if (tree.children.length && catalog.schemas) return;
  tree.replaceChildren(el("li", "loading…", {class: "muted"}));
  try {
    const names = await schemas();
    const plugins = new Map();
    names.forEach(s => {
      const [plugin, ...rest] = s.split(".");
      if (!plugins.has(plugin)) plugins.set(plugin, []);
      plugins.get(plugin).push({schema: s, workspace: rest.join(".")});
    });
    const tableItems = schema => async () => (await tables(schema)).map(t => {
      const ref = tableRef(schema, t.name);
      return treeItem(t.name, "table", ref, async () => (await columns(ref)).map(c =>
        treeItem(c.name, "column", quoteName(c.name), null, c.type)), t.kind === "table" ? "" : t.kind);
    });
    tree.replaceChildren(...[...plugins.entries()].map(([plugin, spaces]) => {
      const only = spaces.length === 1 && !spaces[0].workspace;
      return treeItem(plugin, "plugin", plugin, only ? tableItems(plugin) : async () =>
        spaces.map(w => treeItem(w.workspace, "workspace", w.schema, tableItems(w.schema))));
    }));
  } catch (e) {
    tree.replaceChildren(el("li", "Schemas unavailable: " + e.message, {class: "fail"}));
  }
}
$("reload-schemas").addEventListener("click", () => {
  catalog.schemas = null; catalog.tables = {}; catalog.columns = {};
  $("schema-tree").replaceChildren();
  loadSchemas();
});

// ------------------------------------------------------------------ running a query
let running = null;   // {id, poll, cancelled}
let lastResult = null;
async function runQuery() {
  if (running) return;
  const status = $("status"), error = $("error");
  const sql = $("sql").value;
  status.textContent = "running…"; error.textContent = "";
  showMessages([]);
  $("grid").replaceChildren(); $("result-tools").hidden = true; hideChart();
  $("run").disabled = true;
  running = {id: null, poll: null, started: performance.now()};
  const state = running;
  let data = null;
  try {
    const resp = await fetch("/query.json", {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", Accept: "application/json"},
      body: JSON.stringify({queryType: "SQL", query: sql, autoLimit: $("limit").value})});
    if (resp.status === 401) { loginRedirect(); return; }
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (;;) {
      const {done, value} = await reader.read();
      if (done) break;
      text += decoder.decode(value, {stream: true});
      if (!state.id) {
        const m = /"queryId"\s*:\s*"([^"]+)"/.exec(text);
        if (m) startProgress(state, m[1]);
      }
    }
    text += decoder.decode();
    try { data = JSON.parse(text); } catch (e) { throw new Error(text || resp.statusText); }
    if (!resp.ok && !data.queryState) throw new Error(data.errorMessage || resp.statusText);
  } catch (e) {
    status.textContent = "error"; error.textContent = e.message;
  } finally {
    stopProgress(state);
    running = null;
    $("run").disabled = false;
  }
  if (!data) return;
  const secs = ((performance.now() - state.started) / 1000).toFixed(3);
  const link = data.queryId ? " · " : "";
  if (data.queryState !== "COMPLETED") {
    status.textContent = (data.queryState || "FAILED") + link;
    if (data.queryId) status.appendChild(el("a", "profile", {href: "/profiles/" + data.queryId}));
    error.textContent = data.errorMessage || (data.queryState === "CANCELED" ? "The query was cancelled." : "");
    remember(sql, data.queryState || "FAILED", 0);
    return;
  }
  lastResult = {columns: data.columns, metadata: data.metadata || [], rows: data.rows, id: data.queryId};
  renderGrid(lastResult);
  status.textContent = data.rows.length + " row(s) in " + secs + " s · ";
  status.appendChild(el("a", "query " + data.queryId, {href: "/profiles/" + data.queryId}));
  remember(sql, "COMPLETED", data.rows.length);
  if (/^\s*(create|drop|use|alter)\b/i.test(sql)) { catalog.schemas = null; catalog.tables = {}; }
  loadMessages(data.queryId);
}
// what the scans noticed (a misspelt column, records skipped, files missing), as the shell
// prints after the rows: Drill's answer has no room for them, the query's profile has
async function loadMessages(id) {
  if (!id) return;
  // the answer may reach the page a moment before its profile is written finished
  for (let tries = 0; tries < 40; tries++) {
    let p;
    try { p = await getJson("/profiles/" + encodeURIComponent(id) + ".json"); }
    catch (e) { return; /* the rows stand without their messages */ }
    if (!lastResult || lastResult.id !== id) return;
    if (["COMPLETED", "FAILED", "CANCELED"].includes(p.stateName)) {
      showMessages(p.warnings || []);
      return;
    }
    await new Promise(done => setTimeout(done, 250));
  }
}
function showMessages(messages) {
  const box = $("query-messages");
  box.replaceChildren(...messages.map(m => el("li", m)));
  box.hidden = !messages.length;
  if (messages.length) {
    $("status").appendChild(document.createTextNode(
      " · " + messages.length + (messages.length === 1 ? " message" : " messages")));
  }
}
function startProgress(state, id) {
  state.id = id;
  $("cancel").hidden = false; $("cancel").disabled = false;
  $("progress").hidden = false;
  $("progress-fill").style.width = "0";
  $("progress-text").textContent = "waiting for Spark…";
  const tick = async () => {
    if (running !== state) return;
    const secs = ((performance.now() - state.started) / 1000).toFixed(1);
    try {
      const p = await getJson("/profiles/" + id + ".json");
      const stages = p.stages || [];
      const done = stages.filter(s => s.status === "COMPLETE" || s.status === "SKIPPED").length;
      const active = stages.filter(s => s.status === "ACTIVE");
      $("progress-fill").style.width = (stages.length ? Math.round(100 * done / stages.length) : 5) + "%";
      $("progress-text").textContent = secs + " s · " + (stages.length
        ? done + " of " + stages.length + " Spark stage(s) done" +
          (active.length ? " · running: " + active.map(s => s.label || s.name).join(", ") : "")
        : "planning");
    } catch (e) {
      $("progress-text").textContent = secs + " s";
    }
    if (running === state) state.poll = setTimeout(tick, 500);
  };
  state.poll = setTimeout(tick, 200);
}
function stopProgress(state) {
  clearTimeout(state.poll);
  $("cancel").hidden = true;
  $("progress").hidden = true;
}
$("cancel").addEventListener("click", async () => {
  if (!running || !running.id) return;
  $("cancel").disabled = true;
  $("status").textContent = "cancelling…";
  try {
    await fetch("/profiles/cancel/" + encodeURIComponent(running.id),
                {method: "POST", credentials: "same-origin"});
  } catch (e) { $("error").textContent = e.message; }
});
$("run").addEventListener("click", runQuery);

// ----- results grid
const NUMERIC = /^(INT|INTEGER|BIGINT|SMALLINT|TINYINT|FLOAT|DOUBLE|DECIMAL|VARDECIMAL|NUMERIC|REAL|FLOAT4|FLOAT8)/i;
const LONG_TEXT = 200;
function renderGrid(res) {
  const numeric = res.columns.map((c, i) => NUMERIC.test(res.metadata[i] || ""));
  fillTable($("grid"), res.columns, res.rows, (row, c, i, td) => {
    const v = row[c];
    if (v === null || v === undefined) { td.classList.add("null"); return "null"; }
    if (typeof v === "object") {
      const d = el("details");
      const summary = JSON.stringify(v);
      d.appendChild(el("summary", summary.length > 60 ? summary.slice(0, 60) + "…" : summary));
      d.addEventListener("toggle", () => {
        if (d.open && !d.querySelector("pre")) d.appendChild(el("pre", JSON.stringify(v, null, 2)));
      }, {once: false});
      td.appendChild(d);
      return undefined;
    }
    if (numeric[i] || typeof v === "number") td.classList.add("num");
    const s = String(v);
    if (s.length <= LONG_TEXT) return s;
    td.classList.add("long");
    td.appendChild(el("span", s.slice(0, LONG_TEXT) + "…", {class: "clip", title: s.slice(0, 1000)}));
    td.appendChild(button("show all " + s.length.toLocaleString() + " chars", ev => {
      td.replaceChildren(el("div", s, {class: "full-text"}));
      td.classList.add("expanded");
    }, {class: "small more"}));
    return undefined;
  });
  const xs = $("chart-x"), ys = $("chart-y");
  // a column empty in every row (a misspelt name reads as one) has nothing to chart
  const filled = res.columns.filter(c => res.rows.some(r => r[c] !== null && r[c] !== undefined && r[c] !== ""));
  const offered = filled.length ? filled : res.columns;
  xs.replaceChildren(...offered.map(c => el("option", c)));
  const numericCols = offered.filter(c => numeric[res.columns.indexOf(c)] ||
    res.rows.slice(0, 20).every(r => r[c] === null || typeof r[c] === "number"));
  ys.replaceChildren(...(numericCols.length ? numericCols : offered).map(c => el("option", c)));
  // the first column along x, the first other number up the y axis
  xs.value = offered[0];
  const y = numericCols.find(c => c !== xs.value);
  if (y) ys.value = y;
  $("result-tools").hidden = false;
}

// ----- downloads
function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], {type}));
  const a = el("a", null, {href: url, download: name});
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
function csvField(v) {
  if (v === null || v === undefined) return "";
  const s = typeof v === "object" ? JSON.stringify(v) : String(v);
  return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}
$("download-csv").addEventListener("click", () => {
  if (!lastResult) return;
  const lines = [lastResult.columns.map(csvField).join(",")];
  lastResult.rows.forEach(r => lines.push(lastResult.columns.map(c => csvField(r[c])).join(",")));
  download("query-" + lastResult.id.slice(0, 8) + ".csv", "text/csv", lines.join("\r\n") + "\r\n");
});
$("download-json").addEventListener("click", () => {
  if (!lastResult) return;
  download("query-" + lastResult.id.slice(0, 8) + ".json", "application/json",
           JSON.stringify(lastResult.rows, null, 1));
});

// ----- chart
let chart = null;
function hideChart() {
  if (chart) { chart.destroy(); chart = null; }
  $("chart-box").hidden = true; $("chart-close").hidden = true;
}
$("chart-close").addEventListener("click", hideChart);
$("chart-button").addEventListener("click", () => {
  if (!lastResult || typeof Chart === "undefined") return;
  hideChart();
  const type = $("chart-type").value, x = $("chart-x").value, y = $("chart-y").value;
  const rows = lastResult.rows.slice(0, 5000);
  const num = v => (v === null || v === undefined || v === "") ? null : Number(v);
  const dataset = {label: y, backgroundColor: "rgba(42,107,176,.6)", borderColor: "#2a6bb0"};
  const config = {type, options: {animation: false, responsive: true, maintainAspectRatio: false,
    scales: {x: {title: {display: true, text: x}}, y: {title: {display: true, text: y}}}}};
  if (type === "scatter") {
    dataset.data = rows.map(r => ({x: num(r[x]), y: num(r[y])}));
    config.data = {datasets: [dataset]};
  } else {
    dataset.data = rows.map(r => num(r[y]));
    config.data = {labels: rows.map(r => r[x] === null ? "null" : String(r[x])), datasets: [dataset]};
  }
  $("chart-box").hidden = false; $("chart-close").hidden = false;
  chart = new Chart($("chart"), config);
});

// ----- history (per user, kept in this browser)
const HISTORY_KEY = "auger.history." + (USER || "anonymous");
function readHistory() {
  try { return JSON.parse(localStorage.getItem(HISTORY_KEY) || "[]"); } catch (e) { return []; }
}
function remember(sql, state, rows) {
  const items = readHistory().filter(h => h.sql !== sql);
  items.unshift({sql, state, rows, at: new Date().toISOString()});
  localStorage.setItem(HISTORY_KEY, JSON.stringify(items.slice(0, 100)));
  renderHistory();
}
function renderHistory() {
  const items = readHistory();
  const list = $("history");
  if (!items.length) { list.replaceChildren(el("li", "No queries yet.", {class: "muted"})); return; }
  list.replaceChildren(...items.map(h => {
    const li = el("li");
    li.appendChild(el("span", h.at.slice(11, 19) + " ", {class: "muted"}));
    li.appendChild(el("span", h.state === "COMPLETED" ? "✓ " : "✗ ", {class: h.state === "COMPLETED" ? "ok" : "fail",
      "aria-label": h.state}));
    li.appendChild(button(h.sql.replace(/\s+/g, " "), () => {
      $("sql").value = h.sql; highlight(); $("sql").focus();
    }, {title: h.sql}));
    return li;
  }));
}
$("clear-history").addEventListener("click", () => { localStorage.removeItem(HISTORY_KEY); renderHistory(); });

// ------------------------------------------------------------------ profiles
let profileRows = [], profilePage = 0;
async function loadProfiles() {
  const list = $("profile-list");
  try {
    const data = await getJson("/profiles.json?max=1000");
    profileRows = data.runningQueries.concat(data.finishedQueries);
    const users = [...new Set(profileRows.map(r => r.user))].sort();
    const sel = $("profile-user"), keep = sel.value;
    sel.replaceChildren(el("option", "all", {value: ""}), ...users.map(u => el("option", u)));
    sel.value = users.includes(keep) ? keep : "";
    renderProfiles();
  } catch (e) { emptyState(list, e.message, "fail"); }
}
function renderProfiles() {
  const list = $("profile-list");
  const text = $("profile-filter").value.toLowerCase(), user = $("profile-user").value;
  const state = $("profile-state").value, size = Number($("profile-page-size").value);
  const rows = profileRows.filter(r => (!text || r.query.toLowerCase().includes(text) ||
    r.queryId.includes(text)) && (!user || r.user === user) && (!state || r.state === state));
  const pages = Math.max(1, Math.ceil(rows.length / size));
  profilePage = Math.min(profilePage, pages - 1);
  const shown = rows.slice(profilePage * size, (profilePage + 1) * size);
  $("profile-page").textContent = rows.length ? `page ${profilePage + 1} of ${pages} · ${rows.length} queries` : "";
  $("profile-prev").disabled = profilePage === 0;
  $("profile-next").disabled = profilePage >= pages - 1;
  if (!rows.length) {
    emptyState(list, profileRows.length ? "No query matches the filter." : "No queries yet: run one on the Query page.");
    return;
  }
  // servers sharing a state directory share a profile store: then say which ran each query
  const servers = new Set(profileRows.map(r => r.server || ""));
  const cols = ["queryId", "user", "state", "time", "duration"].concat(servers.size > 1 ? ["server"] : [], ["query"]);
  fillTable(list, cols, shown, (r, c, i, td) => {
    if (c === "queryId") {
      td.appendChild(el("a", r.queryId.slice(0, 8), {href: "/profiles/" + r.queryId, "data-query": r.queryId}));
      return undefined;
    }
    if (c === "state") { td.appendChild(el("span", r.state, {class: "badge " + r.state})); return undefined; }
    return r[c];
  });
}
["profile-filter", "profile-user", "profile-state", "profile-page-size"].forEach(id =>
  ["input", "change"].forEach(kind =>
    $(id).addEventListener(kind, () => { profilePage = 0; renderProfiles(); })));
$("profile-prev").addEventListener("click", () => { profilePage--; renderProfiles(); });
$("profile-next").addEventListener("click", () => { profilePage++; renderProfiles(); });
$("refresh-profiles").addEventListener("click", loadProfiles);

// ----- one profile
let profileTimer = null;
async function loadProfile(id) {
  const box = $("profile-detail");
  clearTimeout(profileTimer);
  let p;
  try { p = await getJson("/profiles/" + encodeURIComponent(id) + ".json"); }
  catch (e) {
    box.replaceChildren(el("p", "No profile " + id + " that you may see: " + e.message, {class: "empty"}));
    return;
  }
  const parts = [];
  const title = el("h2", "Query " + p.queryId + " ");
  title.appendChild(el("span", p.stateName, {class: "badge " + p.stateName}));
  parts.push(title);
  const t = p.timings || {};
  const facts = el("div", null, {class: "facts", id: "profile-facts"});
  const fact = (k, v) => { const d = el("div"); d.appendChild(el("b", k)); d.appendChild(document.createTextNode(v)); facts.appendChild(d); };
  fact("State", p.stateName);
  fact("User", p.user);
  fact("Rows", p.rows.toLocaleString());
  fact("Started", new Date(p.start).toLocaleString());
  fact("Total", p.end ? ms(p.end - p.start) : "running " + ms(Date.now() - p.start));
  fact("Queued", ms(t.queued));
  fact("Planning", ms(t.planning));
  fact("Execution", ms(t.execution));
  parts.push(facts);
  parts.push(el("h3", "SQL"), el("pre", p.query, {class: "sql", id: "profile-sql"}));
  if (p.error) {
    parts.push(el("h3", "Error"));
    parts.push(el("pre", p.verboseError || p.error, {class: "context", id: "profile-error"}));
  }
  if ((p.warnings || []).length) {
    parts.push(el("h3", "Scan messages"));
    const ul = el("ul", null, {id: "profile-warnings"});
    p.warnings.forEach(w => ul.appendChild(el("li", w)));
    parts.push(ul);
  }
  if ((p.scans || []).length) {
    parts.push(el("h3", "Scans"));
    const table = el("table", null, {id: "profile-scans", class: "grid"});
    const cols = ["table", "files listed", "pruned", "read", "rows read", "skipped", "null-filled columns"];
    fillTable(table, cols, p.scans, (s, c) => {
      const v = {"table": s.table, "files listed": s.files_listed, "pruned": s.files_pruned,
                 "read": s.files_read, "rows read": s.rows_read, "skipped": s.records_skipped,
                 "null-filled columns": (s.missing_columns || s.null_columns || []).join(", ")}[c];
      return v === null || v === undefined ? "–" : v;
    });
    const wrap = el("div", null, {class: "table-wrap"}); wrap.appendChild(table);
    parts.push(wrap);
  }
  parts.push(el("h3", "Plan"));
  const tree = p.planTree || parsePlanText(p.plan || "");
  parts.push(tree ? planGraph(tree) : el("p", "No plan recorded (statements that run no Spark plan have none).", {class: "empty"}));
  parts.push(el("h3", "Spark stages"));
  parts.push(stageTimeline(p));
  box.replaceChildren(...parts);
  if (!["COMPLETED", "FAILED", "CANCELED"].includes(p.stateName) && current === "profile") {
    profileTimer = setTimeout(() => loadProfile(id), 1000);
  }
}
/** Any indented plan text as a tree: Spark's ``+- `` / ``:- `` markers, Drill's ``00-01``
 * operator ids and plain indentation all nest by the column where the operator starts. */
function parsePlanText(text) {
  const lines = text.split("\n").filter(l => l.trim() && !/^==.*==$/.test(l.trim()));
  if (!lines.length) return null;
  const root = {name: "plan", children: []};
  const stack = [{indent: -1, node: root}];
  for (const line of lines) {
    const m = /^(\d+-\d+)?([\s:+|\-]*)(.*)$/.exec(line);
    const indent = (m[1] || "").length + m[2].length;
    const body = m[3].trim();
    const name = (/^[A-Za-z_$][\w$]*/.exec(body) || [body])[0];
    const node = {name: (m[1] ? m[1] + " " : "") + name, detail: body, children: []};
    while (stack.length > 1 && stack[stack.length - 1].indent >= indent) stack.pop();
    stack[stack.length - 1].node.children.push(node);
    stack.push({indent, node});
  }
  return root.children.length === 1 ? root.children[0] : root;
}
function planGraph(tree) {
  const box = el("div", null, {class: "plan-graph", id: "plan-graph", role: "tree", "aria-label": "Query plan"});
  const render = node => {
    const li = el("li", null, {role: "treeitem"});
    const card = el("div", null, {class: "plan-node", tabindex: "0", title: node.detail || node.name});
    card.appendChild(el("div", node.name, {class: "op"}));
    const metrics = [];
    if (node.rows !== null && node.rows !== undefined) metrics.push(node.rows.toLocaleString() + " rows");
    if (node.timeMs !== null && node.timeMs !== undefined) metrics.push(ms(node.timeMs));
    if (metrics.length) card.appendChild(el("div", metrics.join(" · "), {class: "metric"}));
    if (node.detail && node.detail !== node.name) card.appendChild(el("div", node.detail, {class: "detail"}));
    li.appendChild(card);
    if ((node.children || []).length) {
      const ul = el("ul", null, {role: "group"});
      node.children.forEach(c => ul.appendChild(render(c)));
      li.appendChild(ul);
    }
    return li;
  };
  const ul = el("ul");
  ul.appendChild(render(tree));
  box.appendChild(ul);
  return box;
}
function stageTimeline(p) {
  const stages = (p.stages || []).filter(s => s.submissionTime);
  if (!stages.length) return el("p", "No Spark stages ran for this query.", {class: "empty"});
  const now = Date.now();
  const t0 = Math.min(p.start, ...stages.map(s => s.submissionTime));
  const t1 = Math.max(p.end || now, ...stages.map(s => s.completionTime || now));
  const span = Math.max(1, t1 - t0);
  const box = el("div", null, {class: "timeline", id: "stage-chart"});
  stages.forEach(s => {
    const row = el("div", null, {class: "row"});
    const end = s.completionTime || now;
    row.appendChild(el("div", "Stage " + s.stageId + ": " + (s.label || s.name || ""), {class: "label", title: s.name || ""}));
    row.appendChild(el("div", ms(end - s.submissionTime), {class: "muted"}));
    const track = el("div", null, {class: "track"});
    const bar = el("span", null, {class: "bar", title: (s.numTasks || 0) + " task(s) · " + (s.status || "")});
    bar.style.left = (100 * (s.submissionTime - t0) / span) + "%";
    bar.style.width = Math.max(0.5, 100 * (end - s.submissionTime) / span) + "%";
    track.appendChild(bar);
    row.appendChild(track);
    box.appendChild(row);
  });
  return box;
}

// ------------------------------------------------------------------ storage
async function loadStorage() {
  const table = $("storage-list");
  $("storage-note").textContent = ADMIN
    ? "Edit a plugin's workspaces and formats, or enable and disable it. Changes are checked before they are saved."
    : "Storage plugins as the server defines them; only administrators can change them.";
  try {
    const data = await getJson("/storage");
    if (!data.length) { emptyState(table, "No storage plugins are configured."); return; }
    fillTable(table, ["name", "type", "enabled", "workspaces", ""], data, (r, c, i, td) => {
      const cfg = r.config || {};
      if (c === "type") return cfg.type;
      if (c === "enabled") return cfg.enabled ? "yes" : "no";
      if (c === "workspaces") return Object.keys(cfg.workspaces || {}).join(", ") || "–";
      if (c === "") {
        td.appendChild(button(ADMIN ? "Edit" : "View", () => openPlugin(r), {"data-plugin": r.name}));
        if (ADMIN) {
          td.appendChild(document.createTextNode(" "));
          td.appendChild(button(cfg.enabled ? "Disable" : "Enable", async () => {
            try {
              await getJson(`/storage/${encodeURIComponent(r.name)}/enable/${!cfg.enabled}`, {method: "POST"});
              loadStorage();
            } catch (e) { $("storage-note").textContent = e.message; }
          }, {"data-enable": r.name}));
        }
        return undefined;
      }
      return r[c];
    });
  } catch (e) { emptyState(table, e.message, "fail"); }
}
let editingPlugin = null;
function openPlugin(r) {
  editingPlugin = r.name;
  $("storage-editor").hidden = false;
  $("storage-editor-title").textContent = (ADMIN ? "Edit " : "") + r.name;
  $("storage-config").value = JSON.stringify(r.config, null, 2);
  $("storage-config").readOnly = !ADMIN;
  $("storage-save").hidden = !ADMIN;
  $("storage-result").textContent = "";
  $("storage-config").focus();
}
$("storage-close").addEventListener("click", () => { $("storage-editor").hidden = true; });
$("storage-save").addEventListener("click", async () => {
  const result = $("storage-result");
  let config;
  try { config = JSON.parse($("storage-config").value); }
  catch (e) { result.className = "fail"; result.textContent = "Not valid JSON: " + e.message; return; }
  try {
    const data = await postJson(`/storage/${encodeURIComponent(editingPlugin)}.json`, {name: editingPlugin, config});
    result.className = "ok"; result.textContent = data.result || "Saved";
    catalog.schemas = null; catalog.tables = {};
    loadStorage();
  } catch (e) { result.className = "fail"; result.textContent = e.message; }
});

// ------------------------------------------------------------------ options
let optionRows = [];
async function loadOptions() {
  const table = $("option-list");
  try {
    optionRows = await getJson("/options.json?scope=session");
    renderOptions();
  } catch (e) { emptyState(table, e.message, "fail"); }
}
function renderOptions() {
  const table = $("option-list");
  const f = $("option-filter").value.toLowerCase(), changed = $("option-changed").checked;
  const rows = optionRows.filter(o => o.name.toLowerCase().includes(f) &&
    (!changed || o.optionScope !== "BOOT"));
  if (!rows.length) { emptyState(table, "No option matches."); return; }
  fillTable(table, ["name", "value", "scope", "default", "kind", ""], rows, (o, c, i, td, tr) => {
    tr.dataset.option = o.name;
    if (o.optionScope !== "BOOT") tr.classList.add("changed");
    if (c === "value") {
      const input = el("input", null, {class: "opt-value", "aria-label": "Value of " + o.name});
      input.value = o.value === null ? "" : String(o.value);
      td.appendChild(input);
      return undefined;
    }
    if (c === "scope") return o.optionScope;
    if (c === "default") return o.defaultValue;
    if (c === "") {
      const value = () => tr.querySelector("input").value;
      td.appendChild(button("Set for session", () => setOption(o.name, value(), "SESSION"), {class: "small set-session"}));
      if (ADMIN) td.appendChild(button("Set system", () => setOption(o.name, value(), "SYSTEM"), {class: "small set-system"}));
      if (o.optionScope === "SESSION" || (ADMIN && o.optionScope === "SYSTEM")) {
        td.appendChild(button("Reset", () => resetOption(o.name, o.optionScope), {class: "small reset"}));
      }
      return undefined;
    }
    return o[c];
  });
}
async function setOption(name, value, scope) {
  const result = $("option-result");
  try {
    await postJson("/option/" + encodeURIComponent(name), {value, scope});
    result.className = "ok"; result.textContent = `${name} = ${value} (${scope.toLowerCase()})`;
    loadOptions();
  } catch (e) { result.className = "fail"; result.textContent = e.message; }
}
async function resetOption(name, scope) {
  const result = $("option-result");
  try {
    await postJson("/option/" + encodeURIComponent(name) + "/reset", {scope});
    result.className = "ok"; result.textContent = `${name} reset (${scope.toLowerCase()})`;
    loadOptions();
  } catch (e) { result.className = "fail"; result.textContent = e.message; }
}
$("option-filter").addEventListener("input", renderOptions);
$("option-changed").addEventListener("change", renderOptions);

// ------------------------------------------------------------------ metrics, threads, logs, status
async function loadMetrics() {
  const table = $("metric-list");
  try {
    const data = await getJson("/metrics");
    const rows = Object.entries(data.gauges || {}).map(([name, g]) => ({name, value: g.value}));
    fillTable(table, ["name", "value"], rows);
  } catch (e) { emptyState(table, e.message, "fail"); }
}
let threadBlocks = [];
async function loadThreads() {
  const box = $("thread-list");
  try {
    const resp = await fetch("/status/threads", {credentials: "same-origin"});
    if (resp.status === 401) { loginRedirect(); return; }
    const text = await resp.text();
    if (!resp.ok) throw new Error(text);
    threadBlocks = text.split(/\n\s*\n/).filter(b => b.trim()).map(b => {
      const lines = b.split("\n");
      return {name: lines[0].replace(/^"|"$/g, ""), body: lines.slice(1).join("\n")};
    });
    renderThreads();
  } catch (e) { box.replaceChildren(el("p", e.message, {class: "empty fail"})); }
}
function renderThreads() {
  const f = $("thread-filter").value.toLowerCase();
  const shown = threadBlocks.filter(t => !f || (t.name + t.body).toLowerCase().includes(f));
  const box = $("thread-list");
  box.replaceChildren(el("p", shown.length + " of " + threadBlocks.length + " thread(s)", {class: "muted"}),
    ...shown.map(t => { const d = el("details"); d.appendChild(el("summary", t.name)); d.appendChild(el("pre", t.body)); return d; }));
}
$("thread-filter").addEventListener("input", renderThreads);
$("refresh-threads").addEventListener("click", loadThreads);
let logLines = [];
async function loadLogs() {
  const table = $("log-list");
  try {
    const data = await getJson("/logs");
    if (!data.length) { emptyState(table, "The server has written no log files."); return; }
    fillTable(table, ["name", "size", "lastModified"], data, (r, c, i, td) => {
      if (c !== "name") return r[c];
      td.appendChild(button(r.name, () => openLog(r.name), {class: "small", "data-log": r.name}));
      return undefined;
    });
  } catch (e) { emptyState(table, e.message, "fail"); }
}
async function openLog(name) {
  $("log-view").hidden = false;
  $("log-name").textContent = name;
  try {
    const data = await getJson("/log/" + encodeURIComponent(name) + "/content");
    logLines = data.lines;
    renderLog();
  } catch (e) { $("log-content").textContent = e.message; }
}
function renderLog() {
  const f = $("log-filter").value.toLowerCase();
  $("log-content").textContent = logLines.filter(l => !f || l.toLowerCase().includes(f)).join("\n") || "(no lines)";
}
$("log-filter").addEventListener("input", renderLog);
async function loadStatus() {
  const table = $("status-list");
  try {
    const data = await getJson("/status");
    fillTable(table, ["name", "value"], Object.entries(data).map(([name, value]) => ({name, value})));
  } catch (e) { emptyState(table, e.message, "fail"); }
}

// ------------------------------------------------------------------ start
highlight();
renderHistory();
if (!USER) {
  // nobody is logged in on a server with logins: say so instead of asking the server
  document.querySelectorAll("main > section").forEach(s => s.classList.remove("active"));
  const note = el("p", "This server needs a login. ", {class: "empty", id: "login-needed"});
  note.appendChild(el("a", "Log in", {href: "/login?redirect=" + encodeURIComponent(location.pathname)}));
  $("main").appendChild(note);
} else {
  show(BODY.page || "query", false);
  history.replaceState({tab: current}, "");
}
