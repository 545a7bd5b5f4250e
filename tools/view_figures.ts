/**
 * Figures of `loom view` and `loom report --html` for docs/performance.md,
 * on the two long bounded runs the issue names (212 and 1,202 steps, made
 * on the spot by the real loop: tests/view/_runs.ts): the time from
 * navigation to first paint and to an interactive timeline (the page's own
 * `loom-timeline-ready` mark, set once the bars are drawn and their
 * handlers attached) in chromium, served by the real `loom view`
 * subprocess over the session and its request log, and for the `--html`
 * file; the time to show one request's body (the first one indexes the
 * request log); and the size of the `--html` file against the context
 * report's. The median of a few rounds, each in a fresh page.
 *
 * ```sh
 * deno run --unstable-worker-options --allow-sys=hostname --allow-read --allow-write --allow-run --allow-net=127.0.0.1 --allow-env tools/view_figures.ts
 * ```
 */
import { launchBrowser, type RemotePage } from "../tests/_kit/browser.ts";
import { loom } from "../tests/_kit.ts";
import { makeRun, startView } from "../tests/view/_runs.ts";

const ROUNDS = 5;

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

async function opened(page: RemotePage, url: string) {
  await page.goto(url);
  await page.waitFor("html[data-timeline=ready]", {
    state: "attached",
    timeout: 60_000,
  });
  return await page.timings("loom-timeline-ready");
}

/** Asks for request `index` and waits for its body as sent. */
async function bodyMs(page: RemotePage, index: number) {
  await page.fill("#request-number", String(index + 1));
  const started = performance.now();
  await page.click("#request-go");
  await page.waitFor("#request-title", {
    hasTextPattern: `^Request ${index + 1} `,
  });
  await page.waitFor("#request-raw", { state: "attached", timeout: 60_000 });
  return performance.now() - started;
}

interface Row {
  steps: number;
  requests: number;
  reportBytes: number;
  htmlBytes: number;
  servedPaint: number;
  servedReady: number;
  filePaint: number;
  fileReady: number;
  firstBody: number;
  laterBody: number;
}

async function measure(steps: number): Promise<Row> {
  const dir = await Deno.makeTempDir({ prefix: "loom-view-figures-" });
  try {
    const run = await makeRun(dir, { steps });
    const n = run.report.requests.length;
    const html = `${dir}/report.html`;
    const written = await loom("report", "--html", run.reportPath, html);
    if (written.code !== 0) throw new Error(written.stderr);
    await using view = await startView([
      run.sessionPath,
      "--requests",
      run.requestsPath,
    ]);
    await using browser = await launchBrowser();
    const served = [];
    const file = [];
    let firstBody = NaN;
    let laterBody = NaN;
    for (let round = 0; round < ROUNDS; round++) {
      const page = await browser.page();
      served.push(await opened(page, `${view.url}#r1`));
      if (round === 0) {
        firstBody = await bodyMs(page, Math.floor(n / 2));
        laterBody = await bodyMs(page, Math.floor(n / 3));
      }
      await page.close();
      const filePage = await browser.page();
      file.push(await opened(filePage, `file://${html}`));
      await filePage.close();
    }
    return {
      steps,
      requests: n,
      reportBytes: (await Deno.stat(run.reportPath)).size,
      htmlBytes: (await Deno.stat(html)).size,
      servedPaint: median(served.map((t) => t.paint ?? NaN)),
      servedReady: median(served.map((t) => t.mark ?? NaN)),
      filePaint: median(file.map((t) => t.paint ?? NaN)),
      fileReady: median(file.map((t) => t.mark ?? NaN)),
      firstBody,
      laterBody,
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const rows: Row[] = [];
  for (const steps of [212, 1_202]) {
    console.error(`making and viewing a ${steps}-step bounded run…`);
    rows.push(await measure(steps));
  }
  const ms = (x: number) => x.toFixed(0);
  const bytes = (x: number) => x.toLocaleString("en-US");
  console.log(
    "| steps | requests | served: first paint ms | served: timeline interactive ms | file: first paint ms | file: timeline interactive ms | first body ms | next body ms | report bytes | --html bytes | ratio |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${bytes(r.steps)} | ${bytes(r.requests)} | ${ms(r.servedPaint)} | ${
        ms(r.servedReady)
      } | ${ms(r.filePaint)} | ${ms(r.fileReady)} | ${ms(r.firstBody)} | ${
        ms(r.laterBody)
      } | ${bytes(r.reportBytes)} | ${bytes(r.htmlBytes)} | ${
        (r.htmlBytes / r.reportBytes).toFixed(2)
      }× |`,
    );
  }
  const last = rows.at(-1)!;
  console.log(
    `\n1,202 steps: timeline interactive in ${
      ms(last.servedReady)
    } ms served, ${
      ms(last.fileReady)
    } ms from the file (target ≤ 2,000 ms); --html ${
      (last.htmlBytes / last.reportBytes).toFixed(2)
    }× its context report (target ≤ 3×)`,
  );
}
