// The run's timeline: bytes by part and cache and cost per request, as
// SVG charts; a click on a request selects it.
import {
  $,
  CACHE_COLORS,
  clear,
  dollars,
  el,
  label,
  num,
  PART_COLORS,
  pct,
  svgEl,
  swatch,
  tokens,
} from "./dom.js";

export function renderTimeline(t, select) {
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
  drawBytes(t, select);
  drawCache(t, select);
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

function drawBytes(t, select) {
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
  attachHover(svg, t, W, H, bw, select, (i) => {
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

function drawCache(t, select) {
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
  attachHover(svg, t, W, H, bw, select, (i) =>
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

function attachHover(svg, t, W, H, bw, select, describe) {
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
    (event) => void select(indexAt(event)),
  );
  svg.selectedMark = (i) => {
    selected.setAttribute("x", String(i * bw));
    selected.setAttribute("visibility", "visible");
  };
}
