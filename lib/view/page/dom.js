// The page's fixed colours and constants and its DOM helpers, shared by
// its parts (lib/view/page.ts joins them into the page's one script).
// Every string reaches the document as text: no HTML is ever parsed.

export const PART_COLORS = {
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
export const CACHE_COLORS = {
  read: "#55a868",
  write: "#dd8452",
  uncached: "#c44e52",
};
const SVG = "http://www.w3.org/2000/svg";
const BYTES_PER_TOKEN = 4;
export const encoder = new TextEncoder();

export function $(id) {
  return document.getElementById(id);
}

/** An element with text and fixed attributes; never HTML. */
export function el(tag, options, children) {
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

export function svgEl(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const name of Object.keys(attrs || {})) {
    node.setAttribute(name, String(attrs[name]));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

export function num(n) {
  return Number(n).toLocaleString("en-US");
}

export function tokens(bytes) {
  return Math.round(bytes / BYTES_PER_TOKEN);
}

export function pct(x) {
  return (x * 100).toFixed(1) + "%";
}

export function dollars(x) {
  return "$" + (x < 1 ? x.toFixed(4) : x.toFixed(2));
}

export function label(part) {
  return part.replace(/_/g, " ");
}

export function swatch(color) {
  const s = el("span", { className: "swatch" });
  s.style.background = color;
  return s;
}

/** A table row a click or Enter picks. */
export function pickRow(attrs, pick, cells) {
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

export function cell(text, numeric) {
  return el("td", { text: text, className: numeric ? "n" : "" });
}
