/**
 * The browser driver of tests/_kit/browser.ts, run as a subprocess of the
 * tests: playwright-core cannot load inside the test runner's permissions
 * (at import it reads `/proc/sys/fs/binfmt_misc/WSLInterop`, which Deno
 * grants only with every permission), so it runs here, as the issue
 * allows a Node driver to: with every permission, like Node, driving
 * Debian's chromium. It reads one JSON command a line on stdin and answers
 * each with one JSON line on stdout: `{id, value}` or `{id, error}`.
 *
 * @module
 */
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Locator,
  type Page,
} from "playwright-core";

interface Watch {
  errors: string[];
  dialogs: string[];
  requests: string[];
  consoleErrors: string[];
}

interface Command {
  readonly id: number;
  readonly op: string;
  // deno-lint-ignore no-explicit-any
  readonly args: any;
}

const executable = Deno.args[0] ?? "/usr/bin/chromium";
let browser: Browser | undefined;
const pages = new Map<
  number,
  { page: Page; context: BrowserContext; watch: Watch }
>();
let nextPage = 1;

async function launch(): Promise<Browser> {
  browser ??= await chromium.launch({
    executablePath: executable,
    headless: true,
    args: [
      ...(Deno.uid?.() === 0 ? ["--no-sandbox"] : []),
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-gpu",
      "--disable-quic",
      "--disable-dev-shm-usage",
    ],
  });
  return browser;
}

function pageOf(id: number) {
  const entry = pages.get(id);
  if (entry === undefined) throw new Error(`No page ${id}`);
  return entry;
}

/** A locator: a selector, optionally its n-th match or one holding text. */
function locate(
  page: Page,
  a: {
    selector: string;
    hasText?: string;
    hasTextPattern?: string;
    nth?: number;
  },
): Locator {
  let locator = page.locator(a.selector, {
    ...(a.hasText === undefined ? {} : { hasText: a.hasText }),
    ...(a.hasTextPattern === undefined
      ? {}
      : { hasText: new RegExp(a.hasTextPattern) }),
  });
  if (a.nth !== undefined) locator = locator.nth(a.nth);
  return locator;
}

async function run(c: Command): Promise<unknown> {
  const a = c.args ?? {};
  switch (c.op) {
    case "launch":
      await launch();
      return null;
    case "newPage": {
      const context = await (await launch()).newContext({
        viewport: { width: a.width ?? 1280, height: a.height ?? 900 },
        serviceWorkers: "block",
      });
      const page = await context.newPage();
      const watch: Watch = {
        errors: [],
        dialogs: [],
        requests: [],
        consoleErrors: [],
      };
      page.on("pageerror", (e) => watch.errors.push(e.message));
      page.on("dialog", (d) => {
        watch.dialogs.push(d.message());
        void d.dismiss().catch(() => {});
      });
      page.on("request", (r) => watch.requests.push(r.url()));
      page.on("console", (m) => {
        if (m.type() === "error") watch.consoleErrors.push(m.text());
      });
      const id = nextPage++;
      pages.set(id, { page, context, watch });
      return id;
    }
    case "goto":
      await pageOf(a.page).page.goto(a.url);
      return null;
    case "setContent":
      await pageOf(a.page).page.setContent(a.html);
      return null;
    case "waitFor":
      await locate(pageOf(a.page).page, a).waitFor({
        state: a.state ?? "visible",
        timeout: a.timeout ?? 30_000,
      });
      return null;
    case "click":
      await locate(pageOf(a.page).page, a).click();
      return null;
    case "fill":
      await locate(pageOf(a.page).page, a).fill(a.value);
      return null;
    case "clickAt":
    case "moveAt": {
      const { page } = pageOf(a.page);
      const box = await locate(page, a).boundingBox();
      if (box === null) throw new Error(`${a.selector} is not visible`);
      const x = box.x + a.fx * box.width;
      const y = box.y + a.fy * box.height;
      if (c.op === "clickAt") await page.mouse.click(x, y);
      else await page.mouse.move(x, y);
      return null;
    }
    case "text":
      return await locate(pageOf(a.page).page, a).textContent();
    case "attribute":
      return await locate(pageOf(a.page).page, a).getAttribute(a.name);
    case "count":
      return await locate(pageOf(a.page).page, a).count();
    case "openDetails":
      await pageOf(a.page).page.$$eval("details", (all) => {
        for (const d of all) (d as unknown as { open: boolean }).open = true;
      });
      return null;
    case "wait":
      await pageOf(a.page).page.waitForTimeout(a.ms);
      return null;
    case "screenshot": {
      const shot = await locate(pageOf(a.page).page, a).screenshot({
        animations: "disabled",
      });
      let binary = "";
      for (const b of shot) binary += String.fromCharCode(b);
      return btoa(binary);
    }
    case "evaluateMark":
      // The time from navigation to a performance mark, and first paint.
      return await pageOf(a.page).page.evaluate(
        `(() => {
          const mark = performance.getEntriesByName(${
          JSON.stringify(a.mark)
        })[0];
          const paint = performance.getEntriesByName("first-contentful-paint")[0];
          return { mark: mark ? mark.startTime : null, paint: paint ? paint.startTime : null };
        })()`,
      );
    case "watch":
      return pageOf(a.page).watch;
    case "closePage": {
      const entry = pageOf(a.page);
      pages.delete(a.page);
      await entry.context.close();
      return null;
    }
    default:
      throw new Error(`Unknown command ${c.op}`);
  }
}

const encoder = new TextEncoder();
function answer(line: unknown): void {
  Deno.stdout.writeSync(encoder.encode(`${JSON.stringify(line)}\n`));
}

let buffered = "";
try {
  for await (
    const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())
  ) {
    buffered += chunk;
    let at: number;
    while ((at = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      const command = JSON.parse(line) as Command;
      if (command.op === "close") {
        answer({ id: command.id, value: null });
        throw new Error("closed");
      }
      try {
        answer({ id: command.id, value: await run(command) });
      } catch (error) {
        answer({
          id: command.id,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }
} catch (error) {
  if (!(error instanceof Error && error.message === "closed")) throw error;
} finally {
  await browser?.close().catch(() => {});
}
