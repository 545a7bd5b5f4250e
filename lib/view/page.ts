/**
 * The one page of `loom view` and `loom report --html`: a fixed document
 * (no data in its markup), the page's own script and style inline, and a
 * Content-Security-Policy that allows those two by their SHA-256 hashes
 * and nothing else — no other script or style, no inline handler, no
 * `innerHTML` (Trusted Types), nothing loaded from anywhere (the file) or
 * from anywhere but its own origin (served). The file carries its data as
 * JSON in a non-executable script element, every `<`, `>` and `&` escaped,
 * so no string inside can end the element.
 *
 * @module
 */
import { createHash } from "node:crypto";
import DOM from "./page/dom.js" with { type: "text" };
import SOURCE from "./page/source.js" with { type: "text" };
import TIMELINE from "./page/timeline.js" with { type: "text" };
import VIEW from "./page/view.js" with { type: "text" };
import STYLE from "./page/view.css" with { type: "text" };

/**
 * The page's one inline script. Its parts are modules in the repository, so
 * each is linted with what it imports; here they are joined, in dependency
 * order, into one function's body, their imports dropped and their exports
 * made local, so the page runs one script the CSP names by its hash.
 *
 * @param parts The parts' texts, each after the ones it imports.
 * @returns The script.
 * @throws {SyntaxError} When a part imports or exports in another form.
 */
function joinedScript(parts: readonly string[]): string {
  const body = parts.map((part) =>
    part
      .replace(/^import \{[^}]*\} from "\.\/\w+\.js";\n/gm, "")
      .replace(/^export (?=(?:async function|function|const|let) )/gm, "")
  ).join("\n");
  const left = /^(?:import|export)\b.*$/m.exec(body);
  if (left !== null) {
    throw new SyntaxError(
      `Cannot join the page's script: a part still says ${left[0]}`,
    );
  }
  return `"use strict";\n(function () {\n${body}})();\n`;
}

const SCRIPT = joinedScript([DOM, SOURCE, TIMELINE, VIEW]);

/** A page and the policy it must be served with. */
export interface ViewPage {
  /** The HTML document. */
  readonly html: string;
  /** Its Content-Security-Policy. */
  readonly csp: string;
}

function hash(text: string): string {
  return `'sha256-${
    createHash("sha256").update(text, "utf8").digest("base64")
  }'`;
}

/**
 * The policy of the page: its own script and style by hash, and, when
 * served, requests to its own origin only.
 */
function policy(served: boolean): string {
  return [
    "default-src 'none'",
    `script-src ${hash(SCRIPT)}`,
    `style-src ${hash(STYLE)}`,
    "img-src 'none'",
    `connect-src ${served ? "'self'" : "'none'"}`,
    "base-uri 'none'",
    "form-action 'none'",
    ...(served ? ["frame-ancestors 'none'"] : []),
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ].join("; ");
}

/**
 * JSON that can sit inside a `<script type="application/json">`: `<`, `>`
 * and `&` (and the two line separators JSON allows in strings) escaped as
 * `\u` sequences, which `JSON.parse` reads back unchanged.
 *
 * @param value Any JSON value.
 * @returns The escaped JSON text.
 *
 * @example
 * ```ts
 * import { embeddedJson } from "./page.ts";
 * import assert from "node:assert/strict";
 * const text = embeddedJson({ name: "</script><script>alert(1)</script>" });
 * assert.ok(!text.includes("<"));
 * assert.deepEqual(JSON.parse(text), { name: "</script><script>alert(1)</script>" });
 * ```
 */
export function embeddedJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

const BODY =
  `<header><h1>Loom view</h1><p id="mode"></p><p id="runs-count"></p></header>
<main>
<section id="runs"><h2>Runs</h2>
<table><thead><tr><th>Kind</th><th>Name</th><th>Status</th><th class="n">Steps</th><th class="n">Requests</th><th class="n">Bytes sent</th><th class="n">Cache hit</th><th class="n">Est. $</th><th class="n">Results</th></tr></thead>
<tbody id="runs-body"></tbody></table></section>
<section id="run" hidden>
<h2 id="run-title"></h2><p class="meta" id="run-meta"></p><p id="run-detail"></p><ul class="notes" id="run-notes"></ul>
<section id="timeline" class="chart" hidden>
<h3>Timeline: <span id="timeline-count"></span>, bytes by part</h3>
<div class="legend" id="timeline-legend"></div>
<div id="chart-bytes"></div>
<h3>Cache and cost per request</h3>
<div class="legend" id="cache-legend"></div>
<div id="chart-cache"></div>
<p class="muted" id="cost-basis"></p>
<div class="tip" id="timeline-tip" hidden></div>
<div class="controls"><label for="request-number">Request</label><input id="request-number" type="number" min="1"><button id="request-go" type="button">Show</button><button id="request-prev" type="button">Previous</button><button id="request-next" type="button">Next</button></div>
</section>
<section id="request" class="panel" hidden>
<h3 id="request-title"></h3>
<p><span id="request-bytes"></span> bytes ≈ <span id="request-tokens"></span> tokens (4 bytes a token)</p>
<div class="cols"><div>
<table><thead><tr><th>Part</th><th class="n">Bytes</th><th class="n">≈ Tokens</th><th class="n">Share</th></tr></thead><tbody id="parts-body"></tbody></table>
</div><div><div class="grid" id="parts-grid"></div><div id="request-cache"></div><div id="request-prefix"></div></div></div>
<div id="request-diff"></div>
<h3>The request as sent</h3>
<div id="request-sent"></div>
<div id="request-reply"></div>
</section>
<section id="results" hidden><h3>Stored results</h3>
<table><thead><tr><th>Id</th><th>Origin</th><th>Tool</th><th>SHA-256</th><th class="n">Bytes</th><th>Media type</th><th>Persisted</th></tr></thead><tbody id="results-body"></tbody></table>
<div id="reader" class="panel" hidden>
<h3 id="reader-title"></h3><p class="mono muted" id="reader-digest"></p>
<div class="controls">
<label for="reader-kind">Select</label><select id="reader-kind"><option value="whole">whole</option><option value="bytes">bytes</option><option value="lines">lines</option><option value="json_pointer">JSON pointer</option></select>
<label for="reader-start">from</label><input id="reader-start" type="number" min="0">
<label for="reader-end">to</label><input id="reader-end" type="number" min="0">
<label for="reader-pointer">pointer</label><input id="reader-pointer" type="text" placeholder="/a/0">
<select id="reader-rendering"><option value="text">text</option><option value="json">json</option></select>
<button id="reader-read" type="button">Read</button>
</div>
<div class="controls"><label for="reader-pattern">Search</label><input id="reader-pattern" type="text"><label><input id="reader-regex" type="checkbox"> regular expression</label><button id="reader-find" type="button">Find</button></div>
<p id="reader-status"></p><button id="reader-next" type="button" hidden>Continue</button>
<pre id="reader-output"></pre>
</div></section>
<section id="gateway" hidden><h3>Gateway: per tool</h3>
<table><thead><tr><th>Tool</th><th class="n">Calls</th><th class="n">Offloaded</th><th class="n">Bytes upstream</th><th class="n">Bytes to the host</th><th class="n">Kept out</th></tr></thead><tbody id="gateway-body"></tbody></table></section>
</section>
</main>`;

/**
 * The page. Served, it reads its data from the server's API with the
 * token of its URL; as a file, from `data`.
 *
 * @param data The file's data, or `undefined` for the served page.
 * @returns The document and its policy (served: send it as the
 *   `Content-Security-Policy` header; the file carries it in a meta tag).
 *
 * @example
 * ```ts
 * import { viewPage } from "./page.ts";
 * import assert from "node:assert/strict";
 * const page = viewPage(undefined);
 * assert.match(page.csp, /script-src 'sha256-/);
 * assert.ok(!page.html.includes('id="loom-data"'));
 * ```
 */
export function viewPage(data: unknown): ViewPage {
  const served = data === undefined;
  const csp = policy(served);
  const meta = served
    ? ""
    : `<meta http-equiv="Content-Security-Policy" content="${csp}">\n`;
  const embedded = served
    ? ""
    : `<script type="application/json" id="loom-data">${
      embeddedJson(data)
    }</script>\n`;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
${meta}<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Loom view</title>
<style>${STYLE}</style>
</head><body>
${BODY}
${embedded}<script>${SCRIPT}</script>
</body></html>
`;
  return { html, csp };
}
