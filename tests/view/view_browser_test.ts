// `loom view` and `loom report --html` in a real browser (chromium through
// playwright-core, one browser for this file): both show every request of
// the report, a clicked request shows the body the request log recorded
// and parts that add up to its bytes; markup, script, `javascript:` links
// and `</textarea>` in tool results, file names, model replies and a
// report's file name stay text — no script runs, no dialog opens, no
// error is thrown, nothing is requested (a listener of this test's own on
// 127.0.0.1 sees no connection); the same strings put into a page the
// naive way do all of that (the control). The timeline of the 212-step run
// is the screenshot of docs/view.md (UPDATE_SCREENSHOT=1 writes it).
import assert from "node:assert/strict";
import {
  browserTest,
  launchBrowser,
  type RemotePage,
} from "../_kit/browser.ts";
import { loom, REPO_ROOT, tempDir } from "../_kit.ts";
import { type MadeRun, makeRun, startView } from "./_runs.ts";

const STEPS = 212;

/** A listener of the test's own: every connection made to it. */
function listener() {
  const server = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: string[] = [];
  const answer = async (conn: Deno.Conn) => {
    try {
      const buffer = new Uint8Array(2048);
      const n = await conn.read(buffer);
      seen.push(
        new TextDecoder().decode(buffer.subarray(0, n ?? 0)).split("\r\n")[0] ??
          "",
      );
      await conn.write(
        new TextEncoder().encode(
          "HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n",
        ),
      );
    } catch {
      // The page went away.
    } finally {
      conn.close();
    }
  };
  const open: Promise<void>[] = [];
  const done = (async () => {
    for await (const conn of server) {
      seen.push("(connection)");
      open.push(answer(conn));
    }
  })();
  const port = (server.addr as Deno.NetAddr).port;
  return {
    port,
    seen,
    [Symbol.asyncDispose]: async () => {
      server.close();
      await done.catch(() => {});
      await Promise.all(open);
    },
  };
}

/** Markup that runs, loads or navigates wherever a page parses it as HTML. */
function hostileText(port: number): string {
  const at = `http://127.0.0.1:${port}`;
  return [
    `<script>fetch("${at}/script")</script>`,
    `<img src=x onerror=alert(1)><img src="${at}/img">`,
    `<a href="javascript:alert(2)" id=js>link</a>`,
    `</textarea><svg onload=alert(3)></svg>`,
    `</script><script>alert(4)</script>`,
    `<style>@import url("${at}/css");</style>`,
    `<iframe src="${at}/frame"></iframe>`,
  ].join(" ");
}

async function requestBody(path: string, index: number): Promise<string> {
  const line = (await Deno.readTextFile(path)).split("\n")[index + 1]!;
  const prefix = line.indexOf(',"request":') + ',"request":'.length;
  return line.slice(prefix, -1);
}

/** Clicks request `index` on the timeline and waits for its body. */
async function clickRequest(page: RemotePage, index: number, n: number) {
  await page.clickAt("#chart-bytes svg", (index + 0.5) / n, 0.5);
  // The title changes and the old body goes in one turn of the page.
  await page.waitFor("#request-title", {
    hasTextPattern: `^Request ${index + 1} `,
  });
  await page.waitFor("#request-raw", { state: "attached" });
}

/** Every request shown; a clicked one's body and parts as recorded. */
async function checkRequests(page: RemotePage, run: MadeRun, index: number) {
  const n = run.report.requests.length;
  assert.equal(
    await page.attribute("#chart-bytes svg", "data-requests"),
    String(n),
  );
  assert.equal(
    await page.text("#timeline-count"),
    `${n.toLocaleString("en-US")} requests`,
  );
  // One bar per request in the tool definitions' path (every request has some).
  const d = await page.attribute(
    '#chart-bytes path[data-part="tool_definitions"]',
    "d",
  );
  assert.equal(d?.match(/M/g)?.length, n);
  await clickRequest(page, index, n);
  const body = await page.text("#request-raw");
  assert.equal(body, await requestBody(run.requestsPath, index));
  const bytes = run.report.requests[index]!.request_bytes;
  assert.equal(new TextEncoder().encode(body!).byteLength, bytes);
  assert.equal(
    await page.attribute("#request-bytes", "data-bytes"),
    String(bytes),
  );
  assert.equal(await page.attribute("#parts-sum", "data-sum"), String(bytes));
}

/** Shows every hostile string the page holds: details open, a tooltip. */
async function exposeEverything(page: RemotePage, n: number) {
  for (const index of [0, 7, 40]) {
    await clickRequest(page, index, n);
    await page.openDetails();
  }
  await page.moveAt("#chart-bytes svg", 0.3, 0.2);
}

async function assertInert(page: RemotePage, requests: (u: string) => boolean) {
  await page.wait(300);
  const watch = await page.watch();
  assert.deepEqual(watch.errors, []);
  assert.deepEqual(watch.dialogs, []);
  assert.deepEqual(watch.consoleErrors, []);
  assert.deepEqual(watch.requests.filter((u) => !requests(u)), []);
}

browserTest(
  "loom view and loom report --html show every request, a request's recorded body and parts, and keep hostile text inert",
  async (t) => {
    await using dir = await tempDir();
    await using listen = listener();
    const hostile = hostileText(listen.port);
    const run = await makeRun(dir.path, {
      steps: STEPS,
      hostile,
      hostileName: "<img src=x onerror=alert(1)>",
    });
    const n = run.report.requests.length;
    // A report whose very file name is markup.
    const named = `${dir.path}/<img src=x onerror=alert(5)>.json`;
    await Deno.copyFile(run.reportPath, named);
    const gateway = `${dir.path}/gateway.json`;
    await Deno.writeTextFile(
      gateway,
      JSON.stringify({
        format: "loom-gateway-report/1",
        tools: {
          [`fs/${hostile}`]: {
            calls: 3,
            offloaded: 1,
            bytes_received: 90_000,
            bytes_to_host: 2_000,
          },
        },
      }),
    );
    const html = `${dir.path}/report.html`;
    const written = await loom(
      "report",
      "--html",
      named,
      html,
      "--requests",
      run.requestsPath,
    );
    assert.equal(written.code, 0, written.stderr);
    await using view = await startView([
      run.sessionPath,
      "--requests",
      run.requestsPath,
      "--record",
      run.recordingPath,
      "--report",
      named,
      "--report",
      gateway,
    ]);
    await using browser = await launchBrowser();

    await t.step("the served page", async () => {
      const page = await browser.page();
      await page.goto(`${view.url}#r1`);
      await page.waitFor("html[data-timeline=ready]", { state: "attached" });
      assert.equal(await page.count("#runs-body tr"), 3);
      await checkRequests(page, run, 150);
      await exposeEverything(page, n);
      // The model's reply, from the recording.
      await page.waitFor("#request-reply pre");
      // A stored result whose name and content are hostile, read whole.
      await page.click("#results-body tr", { hasText: "onerror", nth: 0 });
      await page.click("#reader-read");
      await page.waitFor("#reader-output", { hasText: "<script>" });
      // The other runs: the hostile file name, the gateway's hostile tool.
      await page.click("#runs-body tr", { nth: 1 });
      await page.waitFor("html[data-timeline=ready]", { state: "attached" });
      await page.click("#runs-body tr", { nth: 2 });
      await page.waitFor("#gateway-body tr");
      assert.match(await page.text("#gateway-body") ?? "", /<script>fetch/);
      assert.match(
        await page.text("#runs-body") ?? "",
        /<img src=x onerror=alert\(5\)>\.json/,
      );
      await assertInert(page, (u) => u.startsWith(`${view.origin}/`));
      await page.close();
    });

    await t.step("the --html file, offline", async () => {
      const page = await browser.page();
      await page.goto(`file://${html}`);
      await page.waitFor("html[data-timeline=ready]", { state: "attached" });
      await checkRequests(page, run, 301);
      await exposeEverything(page, n);
      await assertInert(page, (u) => u === `file://${encodeURI(html)}`);
      await page.close();
    });

    await t.step("no connection reached the test's listener", () => {
      assert.deepEqual(listen.seen, []);
    });

    await t.step(
      "control: the same text parsed as HTML runs, loads and opens dialogs",
      async () => {
        const page = await browser.page();
        await page.setContent(`<body><textarea>${hostile}</textarea></body>`);
        await page.wait(500);
        assert.ok((await page.watch()).dialogs.length > 0, "a dialog opened");
        assert.ok(listen.seen.length > 0, "the listener was reached");
        await page.close();
      },
    );

    await t.step(
      "the screenshot of a long bounded run's timeline",
      async () => {
        const page = await browser.page({ width: 1100, height: 900 });
        await page.goto(`${view.url}#r1`);
        await page.waitFor("html[data-timeline=ready]", { state: "attached" });
        const shot = await page.screenshot("#timeline");
        assert.deepEqual([...shot.subarray(1, 4)], [0x50, 0x4e, 0x47]);
        if (Deno.env.get("UPDATE_SCREENSHOT") === "1") {
          await Deno.writeFile(`${REPO_ROOT}/docs/view-timeline.png`, shot);
        }
        await page.close();
      },
    );
  },
);
