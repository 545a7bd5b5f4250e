// `loom view`'s server: what a network peer or a web page can try — no
// token, a wrong one, a foreign Host (DNS rebinding), another method —
// refused before anything is read; the real CLI serving a session and a
// report read-only, its API reading results through the digest-checked
// retrieval code, and the session left byte-identical.
import assert from "node:assert/strict";
import { ViewApi } from "../../lib/view/view_api.ts";
import { loadRuns } from "../../lib/view/load_runs.ts";
import { ownHost, viewHandler } from "../../lib/view/view_server.ts";
import { makeRun, startView } from "./_runs.ts";
import { tempDir } from "../_kit.ts";

const TOKEN = "0123456789abcdef".repeat(4);
const HOST = "127.0.0.1:8123";

function handler() {
  return viewHandler({
    token: TOKEN,
    hostname: "127.0.0.1",
    port: 8123,
    api: new ViewApi([]),
  });
}

async function status(
  handle: (r: Request) => Promise<Response>,
  path: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<number> {
  const response = await handle(
    new Request(`http://${HOST}${path}`, {
      method: init.method ?? "GET",
      headers: { host: HOST, ...init.headers },
    }),
  );
  await response.body?.cancel();
  return response.status;
}

Deno.test("The view server refuses a request without the token, with a wrong one, for a foreign Host, or by another method than GET", async (t) => {
  const handle = handler();
  await t.step("no token: 401", async () => {
    assert.equal(await status(handle, "/"), 401);
    assert.equal(await status(handle, "/api/runs"), 401);
  });
  await t.step("a wrong, a shorter or an empty token: 401", async () => {
    for (const wrong of [TOKEN.replace("0", "1"), TOKEN.slice(1), ""]) {
      assert.equal(await status(handle, `/?token=${wrong}`), 401);
      assert.equal(
        await status(handle, "/api/runs", {
          headers: { authorization: `Bearer ${wrong}` },
        }),
        401,
      );
    }
  });
  await t.step("the token in the URL or as a bearer: 200", async () => {
    assert.equal(await status(handle, `/?token=${TOKEN}`), 200);
    assert.equal(
      await status(handle, "/api/runs", {
        headers: { authorization: `Bearer ${TOKEN}` },
      }),
      200,
    );
  });
  await t.step(
    "a foreign or missing Host, even with the token: 403",
    async () => {
      for (
        const host of [
          "evil.example:8123",
          "127.0.0.1.evil.example:8123",
          "127.0.0.1:8124",
          "127.0.0.1",
          "",
        ]
      ) {
        assert.equal(
          await status(handle, `/?token=${TOKEN}`, { headers: { host } }),
          403,
          host,
        );
      }
      // Any loopback name of the same port is this server.
      assert.equal(
        await status(handle, `/?token=${TOKEN}`, {
          headers: { host: "localhost:8123" },
        }),
        200,
      );
    },
  );
  await t.step(
    "POST, PUT, DELETE, PATCH, HEAD with the token: 405",
    async () => {
      for (const method of ["POST", "PUT", "DELETE", "PATCH", "HEAD"]) {
        assert.equal(
          await status(handle, `/api/runs?token=${TOKEN}`, { method }),
          405,
          method,
        );
      }
    },
  );
});

Deno.test("The page is served with its hash-based policy and no framing, sniffing, caching or referrer", async () => {
  const response = await handler()(
    new Request(`http://${HOST}/?token=${TOKEN}`, { headers: { host: HOST } }),
  );
  const csp = response.headers.get("content-security-policy") ?? "";
  const html = await response.text();
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
  assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
  assert.match(csp, /connect-src 'self'/);
  assert.match(csp, /require-trusted-types-for 'script'/);
  assert.doesNotMatch(csp, /unsafe/);
  assert.equal(response.headers.get("x-frame-options"), "DENY");
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
  assert.equal(response.headers.get("cache-control"), "no-store");
  assert.equal(response.headers.get("referrer-policy"), "no-referrer");
  // One script, one style, no handler attribute, nothing loaded.
  assert.equal(html.match(/<script/g)?.length, 1);
  assert.equal(html.match(/<style/g)?.length, 1);
  assert.doesNotMatch(html, /\son[a-z]+=/i);
  assert.doesNotMatch(html, /\s(src|href)=/i);
});

/** One HTTP/1.1 request written by hand; the status line and headers. */
async function rawGet(
  origin: string,
  path: string,
  headers: Record<string, string>,
): Promise<string> {
  const url = new URL(origin);
  const conn = await Deno.connect({
    hostname: url.hostname,
    port: Number(url.port),
  });
  try {
    const head = Object.entries({ ...headers, Connection: "close" })
      .map(([k, v]) => `${k}: ${v}\r\n`).join("");
    await conn.write(
      new TextEncoder().encode(`GET ${path} HTTP/1.1\r\n${head}\r\n`),
    );
    let text = "";
    const buffer = new Uint8Array(4096);
    while (!text.includes("\r\n\r\n")) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
    return text;
  } finally {
    conn.close();
  }
}

Deno.test("ownHost() accepts the bound address or, on loopback, any loopback name, at the bound port only", () => {
  assert.equal(ownHost("[::1]:80", "127.0.0.1", 80), true);
  assert.equal(ownHost("10.0.0.5:80", "10.0.0.5", 80), true);
  assert.equal(ownHost("localhost:80", "10.0.0.5", 80), false);
  assert.equal(ownHost("10.0.0.5:81", "10.0.0.5", 80), false);
  assert.equal(ownHost(null, "127.0.0.1", 80), false);
});

Deno.test("loom view serves a session and its report read-only: reads through the retrieval code, checks digests, refuses the rest, writes nothing", async () => {
  await using dir = await tempDir();
  const run = await makeRun(dir.path, { steps: 10 });
  const journal = `${run.sessionPath}/journal.jsonl`;
  const before = await Deno.readFile(journal);
  const beforeFiles = [...Deno.readDirSync(run.sessionPath)].map((e) => e.name)
    .sort();
  await using view = await startView([
    run.sessionPath,
    "--requests",
    run.requestsPath,
    "--report",
    run.reportPath,
    "--record",
    run.recordingPath,
  ]);
  assert.match(view.origin, /^http:\/\/127\.0\.0\.1:\d+$/);
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${view.origin}${path}`, {
      headers: { authorization: `Bearer ${view.token}`, ...headers },
    });
    return { status: response.status, body: await response.json() };
  };
  const runs = await get("/api/runs");
  assert.equal(runs.status, 200);
  assert.deepEqual(runs.body.map((r: { kind: string }) => r.kind), [
    "slice",
    "report",
  ]);
  const [session, report] = runs.body;
  assert.equal(session.requests, run.report.requests.length);
  assert.equal(session.bodies, true);
  assert.equal(report.replies, true);
  // A request as sent, equal to the log and to the report's bytes.
  const request = await get(`/api/runs/${session.id}/requests/3`);
  assert.equal(request.status, 200);
  assert.equal(
    new TextEncoder().encode(request.body.request).byteLength,
    run.report.requests[3]!.request_bytes,
  );
  // A stored result read and searched through the retrieval code.
  const detail = await get(`/api/runs/${session.id}`);
  const result = detail.body.results.find((r: { origin: string }) =>
    r.origin.endsWith("README.md")
  );
  const base = `/api/runs/${session.id}/results/${result.id}`;
  const lines = await get(
    `${base}/read?kind=lines&start=3&end=3&sha256=${result.sha256}`,
  );
  assert.equal(lines.status, 200, JSON.stringify(lines.body));
  assert.equal(lines.body.structured.selected_text, "Units to edit.\n");
  const found = await get(`${base}/find?pattern=edit&sha256=${result.sha256}`);
  assert.equal(found.body.structured.total_matches, 1);
  // A file edited after it was inspected: its body is not shown.
  const stale = detail.body.results.find((r: { origin: string }) =>
    r.origin.endsWith("unit_01.ts")
  );
  const changed = await get(
    `/api/runs/${session.id}/results/${stale.id}/read?kind=whole&sha256=${stale.sha256}`,
  );
  assert.equal(changed.status, 404);
  assert.match(changed.body.error, /changed since it was inspected/);
  const forged = await get(
    `${base}/read?kind=whole&sha256=${"0".repeat(64)}`,
  );
  assert.equal(forged.status, 422);
  assert.match(forged.body.error, /^digest_mismatch/);
  // The refusals, end to end.
  assert.equal((await fetch(`${view.origin}/api/runs`)).status, 401);
  await (await fetch(`${view.origin}/`, {})).body?.cancel();
  // What a page on a rebound DNS name sends (fetch cannot set Host).
  assert.match(
    await rawGet(view.origin, "/api/runs", {
      Host: `rebound.example:${new URL(view.origin).port}`,
      Authorization: `Bearer ${view.token}`,
    }),
    /^HTTP\/1\.1 403 /,
  );
  assert.match(
    await rawGet(view.origin, "/api/runs", {
      Host: new URL(view.origin).host,
      Authorization: `Bearer ${view.token}`,
    }),
    /^HTTP\/1\.1 200 /,
  );
  const post = await fetch(`${view.origin}/api/runs?token=${view.token}`, {
    method: "POST",
    body: "{}",
  });
  assert.equal(post.status, 405);
  await post.body?.cancel();
  // Nothing written: the journal and the folder are as they were.
  assert.deepEqual(await Deno.readFile(journal), before);
  assert.deepEqual(
    [...Deno.readDirSync(run.sessionPath)].map((e) => e.name).sort(),
    beforeFiles,
  );
});

Deno.test("A run opens without reading its request log: each request is read when it is asked for", async () => {
  await using dir = await tempDir();
  const run = await makeRun(dir.path, { steps: 6, session: false });
  await using loaded = await loadRuns([
    { report: run.reportPath, requests: run.requestsPath },
  ]);
  const api = new ViewApi(loaded.runs);
  const moved = `${run.requestsPath}.away`;
  await Deno.rename(run.requestsPath, moved);
  // With the log gone, the run still opens, every request in its timeline.
  const detail = api.detail("r1");
  assert.equal(detail.status, 200);
  const timeline = (detail.body as { timeline: { bytes: number[] } }).timeline;
  assert.equal(timeline.bytes.length, run.report.requests.length);
  assert.equal((await api.request("r1", 0)).status, 500);
  await Deno.rename(moved, run.requestsPath);
  const request = await api.request("r1", 4);
  assert.equal(request.status, 200);
  assert.equal(
    new TextEncoder().encode((request.body as { request: string }).request)
      .byteLength,
    run.report.requests[4]!.request_bytes,
  );
});
