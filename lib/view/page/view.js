// The page of `loom view` and `loom report --html` (lib/view/page.ts). It
// shows runs, a run's timeline, one request and stored results. Every
// string it shows came from a model, a tool or a file name and is hostile:
// it reaches the document only as text (textContent, a text node, an
// attribute of a fixed name); no HTML is ever parsed from data, and the
// page's CSP forbids it (Trusted Types) besides. Data comes from the
// embedded JSON (the file) or from the server's API, with the token of the
// page's own URL (served).
"use strict";

(function () {
  const PART_COLORS = {
    tool_definitions: "#8c6bb1",
    foundation: "#4c72b0",
    focus: "#dd8452",
    topic: "#937860",
    convo: "#55a868",
    descriptors: "#c44e52",
    tool_results_inline: "#e377c2",
    step: "#17becf",
    attention: "#bcbd22",
    framing: "#b0b7bf",
    request: "#4c72b0",
  };
  const CACHE_COLORS = {
    read: "#55a868",
    write: "#dd8452",
    uncached: "#c44e52",
  };
  const SVG = "http://www.w3.org/2000/svg";
  const BYTES_PER_TOKEN = 4;
  const encoder = new TextEncoder();

  // ---------------------------------------------------------------- DOM
  function $(id) {
    return document.getElementById(id);
  }

  /** An element with text and fixed attributes; never HTML. */
  function el(tag, options, children) {
    const node = document.createElement(tag);
    const o = options || {};
    if (o.text !== undefined) node.textContent = String(o.text);
    if (o.className) node.className = o.className;
    if (o.title !== undefined) node.title = String(o.title);
    if (o.attrs) {
      for (const name of Object.keys(o.attrs)) {
        node.setAttribute(name, String(o.attrs[name]));
      }
    }
    for (const child of children || []) {
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function svgEl(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const name of Object.keys(attrs || {})) {
      node.setAttribute(name, String(attrs[name]));
    }
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function num(n) {
    return Number(n).toLocaleString("en-US");
  }

  function tokens(bytes) {
    return Math.round(bytes / BYTES_PER_TOKEN);
  }

  function pct(x) {
    return (x * 100).toFixed(1) + "%";
  }

  function dollars(x) {
    return "$" + (x < 1 ? x.toFixed(4) : x.toFixed(2));
  }

  function label(part) {
    return part.replace(/_/g, " ");
  }

  function swatch(color) {
    const s = el("span", { className: "swatch" });
    s.style.background = color;
    return s;
  }

  /** A table row a click or Enter picks. */
  function pickRow(attrs, pick, cells) {
    const row = el("tr", {
      className: "pick",
      attrs: Object.assign({ tabindex: "0" }, attrs),
    }, cells);
    row.addEventListener("click", pick);
    row.addEventListener("keydown", (e) => {
      if (e.key === "Enter") pick();
    });
    return row;
  }

  function cell(text, numeric) {
    return el("td", { text: text, className: numeric ? "n" : "" });
  }

  // --------------------------------------------------------------- data
  function fileSource(data) {
    const bodies = data.bodies || {};
    return {
      mode: "file",
      runs: () => Promise.resolve(data.runs),
      detail: (id) => Promise.resolve(data.details[id]),
      request: (id, i) => {
        const run = bodies[id];
        const text = run ? run[String(i)] : undefined;
        return Promise.resolve(
          text === undefined
            ? { error: "This file holds no request bodies" }
            : { request: text },
        );
      },
      reply: () => Promise.resolve({ error: "This file holds no replies" }),
      read: () => Promise.resolve({ error: "This file holds no results" }),
      find: () => Promise.resolve({ error: "This file holds no results" }),
    };
  }

  function serverSource(token) {
    async function get(path) {
      const response = await fetch(path, {
        headers: { Authorization: "Bearer " + token },
        cache: "no-store",
        credentials: "omit",
        redirect: "error",
      });
      const body = await response.json();
      if (!response.ok && body.error === undefined) {
        return { error: "HTTP " + response.status };
      }
      return body;
    }
    const run = (id) => "/api/runs/" + encodeURIComponent(id);
    const query = (params) => {
      const q = new URLSearchParams();
      for (const key of Object.keys(params)) {
        if (params[key] !== undefined && params[key] !== "") {
          q.set(key, String(params[key]));
        }
      }
      return q.toString();
    };
    return {
      mode: "served",
      runs: () => get("/api/runs"),
      detail: (id) => get(run(id)),
      request: (id, i) => get(run(id) + "/requests/" + i),
      reply: (id, i) => get(run(id) + "/replies/" + i),
      read: (id, rid, params) =>
        get(
          run(id) + "/results/" + encodeURIComponent(rid) + "/read?" +
            query(params),
        ),
      find: (id, rid, params) =>
        get(
          run(id) + "/results/" + encodeURIComponent(rid) + "/find?" +
            query(params),
        ),
    };
  }

  const embedded = $("loom-data");
  const source = embedded
    ? fileSource(JSON.parse(embedded.textContent))
    : serverSource(new URLSearchParams(location.search).get("token") || "");

  // --------------------------------------------------------------- runs
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
    renderTimeline(detail.timeline);
    renderResults(detail.results);
    renderGateway(detail.gateway);
    if (request !== null && request !== undefined && detail.timeline) {
      await selectRequest(request);
    }
  }

  // ----------------------------------------------------------- timeline
  function renderTimeline(t) {
    const box = $("timeline");
    box.hidden = t === null;
    document.documentElement.removeAttribute("data-timeline");
    if (t === null) return;
    const n = t.bytes.length;
    $("timeline-count").textContent = num(n) +
      (n === 1 ? " request" : " requests");
    const legend = clear($("timeline-legend"));
    t.parts.forEach((p) =>
      legend.append(
        el("span", {}, [swatch(PART_COLORS[p] || "#888"), label(p)]),
      )
    );
    legend.append(
      el("span", {}, [swatch("#000"), "▲ retirement checkpoint"]),
      el("span", {}, [swatch("#1f7a3a"), "● tests passed"]),
      el("span", {}, [swatch("#b3261e"), "● tests failed"]),
    );
    const cost = t.cost;
    $("cost-basis").textContent = "Cache reads and writes " + cost.basis +
      (cost.source === "simulated" ? " (the run recorded no usage)" : "") +
      ". Priced as " + cost.model +
      (cost.assumed ? " (assumed: the run names no priced model)" : "") +
      ", " + cost.prices + ". Cache hit rate " + pct(cost.hit_ratio) +
      ", estimated " + dollars(cost.total_dollars) + " in all.";
    const cacheLegend = clear($("cache-legend"));
    for (const k of Object.keys(CACHE_COLORS)) {
      cacheLegend.append(
        el("span", {}, [
          swatch(CACHE_COLORS[k]),
          k === "uncached" ? "uncached input" : "cache " + k + "s",
        ]),
      );
    }
    cacheLegend.append(el("span", {}, [swatch("#1d2329"), "cumulative $"]));
    drawBytes(t);
    drawCache(t);
    document.documentElement.setAttribute("data-timeline", "ready");
    performance.mark("loom-timeline-ready");
  }

  function chartWidth() {
    return Math.max(600, Math.floor($("timeline").clientWidth || 1000));
  }

  /** Rectangles as one path: many bars draw as one element. */
  function barsPath(n, x, w, bottoms, heights) {
    const out = [];
    for (let i = 0; i < n; i++) {
      const h = heights[i];
      if (!(h > 0)) continue;
      out.push(
        "M" + x(i).toFixed(2) + " " + (bottoms[i] - h).toFixed(2) + "h" +
          w.toFixed(2) + "v" + h.toFixed(2) + "h" + (-w).toFixed(2) + "Z",
      );
    }
    return out.join("");
  }

  /**
   * An SVG chart of stacked bars, one per request: each series is one path
   * of all its bars (thousands of bars stay a handful of elements).
   */
  function stackedChart(n, H, top, axis, series, max, attrs) {
    const W = chartWidth();
    const bw = W / n;
    const w = Math.max(0.6, bw - (bw > 3 ? 1 : 0));
    const x = (i) => i * bw;
    const scale = (axis - top) / Math.max(1, max);
    const svg = svgEl(
      "svg",
      Object.assign(
        { viewBox: "0 0 " + W + " " + H, height: H, role: "img" },
        attrs,
      ),
    );
    const bottoms = new Array(n).fill(axis);
    for (const one of series) {
      const heights = one.values.map((v) => v * scale);
      svg.append(svgEl(
        "path",
        Object.assign({
          d: barsPath(n, x, w, bottoms, heights),
          fill: one.color,
        }, one.attrs),
      ));
      for (let i = 0; i < n; i++) bottoms[i] -= heights[i];
    }
    return { svg: svg, W: W, bw: bw, w: w, x: x };
  }

  function drawBytes(t) {
    const n = t.bytes.length;
    const H = 240;
    const top = 18;
    const axis = H - 30;
    const max = Math.max(1, ...t.bytes);
    const { svg, W, bw, w, x } = stackedChart(
      n,
      H,
      top,
      axis,
      t.parts.map((part, k) => ({
        values: t.by_part[k],
        color: PART_COLORS[part] || "#888",
        attrs: { "data-part": part },
      })),
      max,
      {
        "data-requests": n,
        "aria-label": "Request bytes by part, one bar per request",
      },
    );
    svg.append(
      svgEl("line", { x1: 0, x2: W, y1: axis, y2: axis, stroke: "#999" }),
    );
    // Retirement checkpoints and test runs on the axis.
    let marks = "";
    for (const i of t.checkpoints) {
      const cx = x(i) + w / 2;
      marks += "M" + cx.toFixed(2) + " " + (axis + 3) + "l-4 8h8Z";
    }
    svg.append(
      svgEl("path", { d: marks, fill: "#000", "data-marks": "checkpoints" }),
    );
    for (const pass of [true, false]) {
      let d = "";
      for (const test of t.tests) {
        const ok = test.exit_code === 0 && !test.timed_out;
        if (ok !== pass || test.at < 0) continue;
        const cx = x(test.at) + w / 2;
        d += "M" + (cx - 4).toFixed(2) + " " + (axis + 19) +
          "a4 4 0 1 0 8 0a4 4 0 1 0 -8 0Z";
      }
      svg.append(
        svgEl("path", {
          d: d,
          fill: pass ? "#1f7a3a" : "#b3261e",
          "data-marks": pass ? "tests-passed" : "tests-failed",
        }),
      );
    }
    svg.append(axisLabel(4, 12, num(max) + " bytes"));
    attachHover(svg, t, W, H, bw, (i) => {
      const lines = [
        "request " + (i + 1) + " · step " + t.step[i] + " · " +
        (t.phase[i] === "s" ? "selection" : "arguments"),
        num(t.bytes[i]) + " bytes ≈ " + num(tokens(t.bytes[i])) + " tokens",
      ];
      t.parts.forEach((p, k) => {
        if (t.by_part[k][i] > 0) {
          lines.push(label(p) + ": " + num(t.by_part[k][i]));
        }
      });
      return lines.join("\n");
    });
    clear($("chart-bytes")).append(svg);
  }

  function drawCache(t) {
    const n = t.bytes.length;
    const c = t.cost;
    const H = 140;
    const top = 18;
    const axis = H - 8;
    const totals = c.read.map((r, i) => r + c.write[i] + c.uncached[i]);
    const max = Math.max(1, ...totals);
    const { svg, W, bw, w, x } = stackedChart(
      n,
      H,
      top,
      axis,
      ["read", "write", "uncached"].map((k) => ({
        values: c[k],
        color: CACHE_COLORS[k],
        attrs: { "data-cache": k },
      })),
      max,
      {
        "aria-label":
          "Cache reads, writes and uncached input per request, and cumulative dollars",
      },
    );
    let sum = 0;
    const cumulative = c.dollars.map((d) => (sum += d));
    const dmax = Math.max(1e-9, sum);
    const points = cumulative.map((d, i) =>
      (x(i) + w / 2).toFixed(2) + "," +
      (axis - (d / dmax) * (axis - top)).toFixed(2)
    );
    svg.append(svgEl("polyline", {
      points: points.join(" "),
      fill: "none",
      stroke: "#1d2329",
      "stroke-width": 1.5,
    }));
    svg.append(
      axisLabel(
        4,
        12,
        num(max) + " tokens · " + dollars(sum) + " cumulative",
      ),
    );
    attachHover(svg, t, W, H, bw, (i) =>
      [
        "request " + (i + 1) +
        (c.source === "simulated" ? " (simulated)" : " (recorded)"),
        "cache reads " + num(c.read[i]) + " tokens",
        "cache writes " + num(c.write[i]) + " tokens",
        "uncached " + num(c.uncached[i]) + " tokens",
        dollars(c.dollars[i]) + " · " + dollars(cumulative[i]) + " so far",
      ].join("\n"));
    clear($("chart-cache")).append(svg);
  }

  function axisLabel(x, y, text) {
    const node = svgEl("text", {
      x: x,
      y: y,
      "font-size": 11,
      fill: "#5b6670",
    });
    node.textContent = text;
    return node;
  }

  function attachHover(svg, t, W, H, bw, describe) {
    const n = t.bytes.length;
    const marker = svgEl("rect", {
      x: 0,
      y: 0,
      width: Math.max(1, bw),
      height: H,
      fill: "rgba(47,111,176,0.18)",
      visibility: "hidden",
    });
    const selected = svgEl("rect", {
      x: 0,
      y: 0,
      width: Math.max(1.5, bw),
      height: H,
      fill: "none",
      stroke: "#2f6fb0",
      "stroke-width": 1.5,
      visibility: "hidden",
      class: "selected",
    });
    const hit = svgEl("rect", {
      x: 0,
      y: 0,
      width: W,
      height: H,
      fill: "transparent",
      class: "hit",
    });
    svg.append(marker, selected, hit);
    const tip = $("timeline-tip");
    const indexAt = (event) => {
      const box = svg.getBoundingClientRect();
      const fx = ((event.clientX - box.left) / box.width) * W;
      return Math.min(n - 1, Math.max(0, Math.floor(fx / bw)));
    };
    hit.addEventListener("mousemove", (event) => {
      const i = indexAt(event);
      marker.setAttribute("x", String(i * bw));
      marker.setAttribute("visibility", "visible");
      tip.textContent = describe(i);
      tip.hidden = false;
      const host = $("timeline").getBoundingClientRect();
      tip.style.left =
        Math.min(event.clientX - host.left + 12, host.width - 220) + "px";
      tip.style.top = (event.clientY - host.top + 12) + "px";
    });
    hit.addEventListener("mouseleave", () => {
      marker.setAttribute("visibility", "hidden");
      tip.hidden = true;
    });
    hit.addEventListener(
      "click",
      (event) => void selectRequest(indexAt(event)),
    );
    svg.selectedMark = (i) => {
      selected.setAttribute("x", String(i * bw));
      selected.setAttribute("visibility", "visible");
    };
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
    const count = (list) => {
      const m = new Map();
      for (const x of list) m.set(x, (m.get(x) || 0) + 1);
      return m;
    };
    const left = count(a);
    const right = count(b);
    const appended = b.filter((x) => {
      const k = left.get(x) || 0;
      if (k > 0) {
        left.set(x, k - 1);
        return false;
      }
      return true;
    });
    const retired = a.filter((x) => {
      const k = right.get(x) || 0;
      if (k > 0) {
        right.set(x, k - 1);
        return false;
      }
      return true;
    });
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
})();
