// The page of `loom view` and `loom report --html`; lib/view/page.ts joins
// this part and the modules it imports into the page's one script. It
// shows runs, a run's timeline, one request and stored results. Every
// string it shows came from a model, a tool or a file name and is hostile:
// it reaches the document only as text (textContent, a text node, an
// attribute of a fixed name); no HTML is ever parsed from data, and the
// page's CSP forbids it (Trusted Types) besides. Data comes from the
// embedded JSON (the file) or from the server's API, with the token of the
// page's own URL (served).
import {
  $,
  cell,
  clear,
  dollars,
  el,
  encoder,
  label,
  num,
  PART_COLORS,
  pct,
  pickRow,
  swatch,
  tokens,
} from "./dom.js";
import { source } from "./source.js";
import { renderTimeline } from "./timeline.js";

let current = null;

async function showRuns() {
  const runs = await source.runs();
  const body = clear($("runs-body"));
  if (runs.error !== undefined) {
    body.append(el("tr", {}, [el("td", { text: runs.error })]));
    return;
  }
  $("runs-count").textContent = runs.length === 1
    ? "1 run"
    : num(runs.length) + " runs";
  for (const r of runs) {
    const row = pickRow({ "data-run": r.id }, () => openRun(r.id), [
      cell(r.kind),
      cell(r.name),
      cell(r.status),
      cell(r.steps === null ? "—" : num(r.steps), true),
      cell(num(r.requests), true),
      cell(num(r.bytes_sent), true),
      cell(r.hit_ratio === null ? "—" : pct(r.hit_ratio), true),
      cell(
        r.dollars === null ? "—" : dollars(r.dollars) +
          (r.cost_source === "simulated" ? " (sim.)" : ""),
        true,
      ),
      cell(num(r.results), true),
    ]);
    row.title = r.where;
    body.append(row);
  }
  const wanted = /^#([A-Za-z0-9]+)(?:\/(\d+))?$/.exec(location.hash);
  const first = wanted ? wanted[1] : runs.length === 1 ? runs[0].id : null;
  if (first !== null) {
    await openRun(first, wanted && wanted[2] ? Number(wanted[2]) : null);
  }
}

async function openRun(id, request) {
  const detail = await source.detail(id);
  if (detail.error !== undefined) {
    $("run-notes").append(el("li", { text: detail.error }));
    return;
  }
  current = { id: id, detail: detail, bodies: new Map(), selected: -1 };
  for (const row of document.querySelectorAll("#runs-body tr")) {
    row.classList.toggle("on", row.getAttribute("data-run") === id);
  }
  const s = detail.summary;
  $("run").hidden = false;
  $("run-title").textContent = s.kind + " · " + s.name;
  const meta = [
    "status " + s.status,
    s.steps === null ? null : num(s.steps) + " steps",
    num(s.requests) + " requests",
    num(s.bytes_sent) + " bytes sent",
    detail.policy === null ? null : detail.policy + " policy",
    detail.model === null ? null : "model " + detail.model,
    detail.revision === null ? null : "revision " + detail.revision,
  ].filter((x) => x !== null);
  $("run-meta").textContent = meta.join(" · ");
  $("run-detail").textContent = detail.detail || "";
  const notes = clear($("run-notes"));
  for (const note of detail.notes) notes.append(el("li", { text: note }));
  $("request").hidden = true;
  renderTimeline(detail.timeline, selectRequest);
  renderResults(detail.results);
  renderGateway(detail.gateway);
  if (request !== null && request !== undefined && detail.timeline) {
    await selectRequest(request);
  }
}

// ------------------------------------------------------------ request
async function body(i) {
  if (i < 0 || !current.detail.summary.bodies) return null;
  if (!current.bodies.has(i)) {
    current.bodies.set(i, source.request(current.id, i));
  }
  return await current.bodies.get(i);
}

async function selectRequest(i) {
  const t = current.detail.timeline;
  if (!t || i < 0 || i >= t.bytes.length) return;
  current.selected = i;
  for (const svg of document.querySelectorAll("#timeline svg")) {
    if (svg.selectedMark) svg.selectedMark(i);
  }
  $("request").hidden = false;
  $("request-number").value = String(i + 1);
  $("request-title").textContent = "Request " + (i + 1) + " of " +
    num(t.bytes.length) + " · step " + t.step[i] + " · " +
    (t.phase[i] === "s" ? "selection" : "arguments");
  $("request-bytes").textContent = num(t.bytes[i]);
  $("request-bytes").setAttribute("data-bytes", String(t.bytes[i]));
  $("request-tokens").textContent = num(tokens(t.bytes[i]));
  renderParts(t, i);
  renderCache(t, i);
  const mine = i;
  const sent = $("request-sent");
  const diff = $("request-diff");
  clear(sent);
  clear(diff);
  renderPrefix(t, i);
  const reply = $("request-reply");
  clear(reply);
  if (!current.detail.summary.bodies) {
    sent.append(el("p", {
      className: "muted",
      text: source.mode === "file"
        ? "This file holds no request bodies (loom report --html --requests LOG adds them)."
        : "No request log for this run (loom run --record-requests LOG; then loom view … --requests LOG).",
    }));
  } else {
    sent.append(
      el("p", { className: "muted", text: "Loading the request…" }),
    );
    const [now, before] = await Promise.all([body(i), body(i - 1)]);
    if (current.selected !== mine) return;
    clear(sent);
    renderSent(sent, now, t.bytes[i]);
    renderDiff(diff, now, before, i);
  }
  if (current.detail.summary.replies) {
    const answer = await source.reply(current.id, i);
    if (current.selected !== mine) return;
    reply.append(
      el("h3", { text: "The model's reply (from the recording)" }),
      answer.error !== undefined
        ? el("p", { className: "muted", text: answer.error })
        : el("pre", { text: JSON.stringify(answer.reply, null, 2) }),
    );
  }
}

function renderParts(t, i) {
  const total = t.bytes[i];
  const table = clear($("parts-body"));
  const grid = clear($("parts-grid"));
  const rows = t.parts.map((p, k) => ({ part: p, bytes: t.by_part[k][i] }));
  let sum = 0;
  for (const r of rows) {
    sum += r.bytes;
    table.append(el("tr", { attrs: { "data-part": r.part } }, [
      el("td", {}, [swatch(PART_COLORS[r.part] || "#888"), label(r.part)]),
      cell(num(r.bytes), true),
      cell(num(tokens(r.bytes)), true),
      cell(total === 0 ? "—" : pct(r.bytes / total), true),
    ]));
  }
  table.append(el("tr", {}, [
    el("td", { text: "all parts" }),
    el("td", {
      className: "n",
      text: num(sum),
      attrs: { id: "parts-sum", "data-sum": sum },
    }),
    cell(num(tokens(sum)), true),
    cell(sum === total ? "= request bytes" : "≠ request bytes", true),
  ]));
  // A /context-style grid: 200 cells, each 0.5% of the request.
  const cells = 200;
  const shares = rows.map((
    r,
  ) => (total === 0 ? 0 : (r.bytes / total) * cells));
  const whole = shares.map(Math.floor);
  let left = cells - whole.reduce((a, b) => a + b, 0);
  const order = shares.map((s, k) => [s - Math.floor(s), k]).sort((a, b) =>
    b[0] - a[0]
  );
  for (const [, k] of order) {
    if (left <= 0) break;
    whole[k] += 1;
    left -= 1;
  }
  rows.forEach((r, k) => {
    for (let c = 0; c < whole[k]; c++) {
      const square = el("span", { title: label(r.part) });
      square.style.background = PART_COLORS[r.part] || "#888";
      grid.append(square);
    }
  });
}

function renderCache(t, i) {
  const c = t.cost;
  const box = clear($("request-cache"));
  box.append(
    el("p", {}, [
      (c.source === "recorded" ? "Recorded" : "Simulated") +
      ": cache reads " +
      num(c.read[i]) + ", cache writes " + num(c.write[i]) + ", uncached " +
      num(c.uncached[i]) + " tokens; " + dollars(c.dollars[i]) + ".",
    ]),
  );
}

function renderPrefix(t, i) {
  const box = clear($("request-prefix"));
  if (i === 0) {
    box.append(
      el("p", {
        text: "The first request: nothing to share with a previous one.",
      }),
    );
    return;
  }
  const part = t.divergence[i];
  box.append(el("p", {}, [
    "Shares its first " + num(t.stable[i]) + " of " + num(t.cache_order[i]) +
    " bytes (in the provider's cache order) with request " + i +
    "; the cached prefix can reach at most there, and it first differs in " +
    (part === null ? "—" : part) + ".",
  ]));
  if (t.breakpoints[i].length > 0) {
    box.append(el("p", {
      className: "muted",
      text: "Cache breakpoints end at bytes " +
        t.breakpoints[i].map(num).join(", ") + ".",
    }));
  }
}

function renderSent(box, answer, expected) {
  if (!answer || answer.error !== undefined) {
    box.append(
      el("p", {
        className: "bad",
        text: answer ? answer.error : "Not available",
      }),
    );
    return;
  }
  const text = answer.request;
  const size = encoder.encode(text).byteLength;
  box.append(el("p", { className: size === expected ? "ok" : "bad" }, [
    num(size) + " bytes as sent, " +
    (size === expected ? "equal to" : "not equal to") + " the report's " +
    num(expected) + ".",
  ]));
  let request;
  try {
    request = JSON.parse(text);
  } catch {
    request = null;
  }
  if (request !== null) {
    (request.system || []).forEach((b, k) =>
      box.append(blockView("system block " + k, b))
    );
    (request.messages || []).forEach((m, mi) =>
      (m.content || []).forEach((b, k) =>
        box.append(
          blockView("message " + mi + " block " + k + " (" + m.role + ")", b),
        )
      )
    );
    const tool = el("details", { className: "block" }, [
      el("summary", { text: "tool definitions" }),
      el("pre", {
        text: JSON.stringify(
          { tool: request.tool, tool_choice: request.tool_choice },
          null,
          2,
        ),
      }),
    ]);
    box.append(tool);
  }
  box.append(el("details", {}, [
    el("summary", {
      text: "The request as sent (raw JSON, " + num(size) + " bytes)",
    }),
    el("pre", { attrs: { id: "request-raw" }, text: text }),
  ]));
}

function blockView(name, block) {
  const text = typeof block.text === "string"
    ? block.text
    : JSON.stringify(block);
  const first = text.split("\n", 1)[0].slice(0, 100);
  const marker = block.cache_control ? " · cache breakpoint" : "";
  return el("details", { className: "block" }, [
    el("summary", {}, [
      name + " · " + num(encoder.encode(text).byteLength) + " bytes" +
      marker + " — " + first,
    ]),
    el("pre", { text: text }),
  ]);
}

function blockTexts(answer) {
  if (!answer || answer.error !== undefined) return null;
  try {
    const r = JSON.parse(answer.request);
    const out = (r.system || []).map((b) => "system\u0000" + b.text);
    for (const m of r.messages || []) {
      for (const b of m.content || []) out.push(m.role + "\u0000" + b.text);
    }
    return out;
  } catch {
    return null;
  }
}

function renderDiff(box, now, before, i) {
  box.append(el("h3", { text: "Difference from the previous request" }));
  if (i === 0) {
    box.append(
      el("p", {
        className: "muted",
        text: "None: this is the first request.",
      }),
    );
    return;
  }
  const a = blockTexts(before);
  const b = blockTexts(now);
  if (a === null || b === null) {
    box.append(
      el("p", {
        className: "muted",
        text: "The previous request is not available.",
      }),
    );
    return;
  }
  // Multiset differences: a block in both counts once against the other.
  const minus = (list, other) => {
    const left = new Map();
    for (const x of other) left.set(x, (left.get(x) || 0) + 1);
    return list.filter((x) => {
      const k = left.get(x) || 0;
      if (k > 0) left.set(x, k - 1);
      return k === 0;
    });
  };
  const appended = minus(b, a);
  const retired = minus(a, b);
  const bytes = (list) =>
    list.reduce(
      (n, x) => n + encoder.encode(x.split("\u0000")[1]).byteLength,
      0,
    );
  box.append(el("p", { attrs: { id: "diff-summary" } }, [
    num(appended.length) + " blocks appended (" + num(bytes(appended)) +
    " bytes), " +
    num(retired.length) + " retired (" + num(bytes(retired)) + " bytes).",
  ]));
  for (
    const [title, list] of [["Appended", appended], ["Retired", retired]]
  ) {
    if (list.length === 0) continue;
    const d = el("details", { className: "block" }, [
      el("summary", { text: title + " (" + list.length + ")" }),
    ]);
    for (const x of list) d.append(el("pre", { text: x.split("\u0000")[1] }));
    box.append(d);
  }
}

// ------------------------------------------------------------ results
let reading = null;

function renderResults(results) {
  const box = $("results");
  box.hidden = results.length === 0;
  $("reader").hidden = true;
  const body = clear($("results-body"));
  for (const r of results) {
    body.append(pickRow({ "data-result": r.id }, () => openReader(r), [
      cell(r.id),
      cell(r.origin),
      cell(r.tool),
      el("td", {
        className: "mono",
        text: r.sha256.slice(0, 12) + "…",
        title: r.sha256,
      }),
      cell(num(r.bytes), true),
      cell(r.media_type || "text"),
      cell(
        r.source === "persisted" || r.source === "inline"
          ? "yes (" + r.source + ")"
          : "no (" + r.source + ")",
      ),
    ]));
  }
}

function openReader(r) {
  reading = r;
  $("reader").hidden = false;
  $("reader-title").textContent = r.id + " · " + r.origin;
  $("reader-digest").textContent = "SHA-256 " + r.sha256 + " · " +
    num(r.bytes) + " bytes";
  clear($("reader-output"));
  $("reader-status").textContent = "";
  $("reader-next").hidden = true;
}

async function readResult(params) {
  if (reading === null) return;
  const answer = await source.read(
    current.id,
    reading.id,
    Object.assign({ sha256: reading.sha256 }, params),
  );
  showAnswer(answer);
}

function showAnswer(answer) {
  const out = clear($("reader-output"));
  const status = $("reader-status");
  const next = $("reader-next");
  next.hidden = true;
  if (answer.error !== undefined) {
    status.textContent = answer.error;
    status.className = "bad";
    return;
  }
  status.className = "";
  const s = answer.structured || {};
  if (typeof s.selected_text === "string") out.textContent = s.selected_text;
  else if (typeof s.selected_json === "string") {
    out.textContent = s.selected_json;
  } else out.textContent = JSON.stringify(s, null, 2);
  if (s.truncated === true && s.next) {
    status.textContent = "The first part of " + num(s.total_bytes) +
      " bytes (digest checked).";
    next.hidden = false;
    next.onclick = () =>
      readResult({
        kind: "bytes",
        start: s.next.select.start,
        end: s.next.select.end,
        rendering: "text",
      });
  } else {
    status.textContent = "Digest checked.";
  }
}

function setUpReader() {
  $("reader-read").addEventListener("click", () =>
    readResult({
      kind: $("reader-kind").value,
      start: $("reader-start").value,
      end: $("reader-end").value,
      pointer: $("reader-pointer").value,
      rendering: $("reader-rendering").value,
    }));
  $("reader-find").addEventListener("click", async () => {
    if (reading === null) return;
    const answer = await source.find(current.id, reading.id, {
      sha256: reading.sha256,
      pattern: $("reader-pattern").value,
      regex: $("reader-regex").checked ? "true" : "",
    });
    showAnswer(answer);
  });
}

// ------------------------------------------------------------ gateway
function renderGateway(rows) {
  $("gateway").hidden = rows === null;
  if (rows === null) return;
  const body = clear($("gateway-body"));
  for (const r of rows) {
    body.append(el("tr", {}, [
      cell(r.tool),
      cell(num(r.calls), true),
      cell(num(r.offloaded), true),
      cell(num(r.bytes_received), true),
      cell(num(r.bytes_to_host), true),
      cell(
        r.bytes_received === 0
          ? "—"
          : pct(1 - r.bytes_to_host / r.bytes_received),
        true,
      ),
    ]));
  }
}

// -------------------------------------------------------------- start
function start() {
  $("mode").textContent = source.mode === "file"
    ? "A run saved by loom report --html: read-only, offline."
    : "Served by loom view on this machine: read-only.";
  $("request-go").addEventListener(
    "click",
    () => void selectRequest(Number($("request-number").value) - 1),
  );
  $("request-number").addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      void selectRequest(Number($("request-number").value) - 1);
    }
  });
  $("request-prev").addEventListener(
    "click",
    () => void selectRequest(current.selected - 1),
  );
  $("request-next").addEventListener(
    "click",
    () => void selectRequest(current.selected + 1),
  );
  setUpReader();
  showRuns().catch((error) => {
    $("runs-count").textContent = "Cannot load the runs: " +
      String(error && error.message || error);
  });
}

start();
