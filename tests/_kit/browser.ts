/**
 * The browser kit of the tests and figure scripts: Debian's chromium
 * driven by playwright-core (its own browser download cannot work here).
 * playwright-core cannot load inside the test runner's scoped permissions,
 * so it runs in a driver subprocess (tests/_kit/browser_driver.ts) and the
 * tests drive pages through it: {@linkcode RemotePage} has the few calls
 * the tests make. One browser per test file: a file's test owns it and
 * closes it in `finally` (`await using`); the driver closes chromium and
 * Playwright removes the fresh profile it made for the launch.
 *
 * Without chromium the browser tests are reported as ignored with one
 * loud line; with `LOOM_REQUIRE_BROWSER=1` (CI, `.ci/run`) they run and
 * fail instead.
 *
 * @module
 */
import { join } from "node:path";
import { REPO_ROOT } from "./repo.ts";
import { type TestBody, testsNeeding } from "./needs.ts";

/** Where chromium is (`LOOM_CHROMIUM` overrides Debian's path). */
export const CHROMIUM: string = Deno.env.get("LOOM_CHROMIUM") ??
  "/usr/bin/chromium";

const REQUIRED = Deno.env.get("LOOM_REQUIRE_BROWSER") === "1";

function haveChromium(): boolean {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
}

/** Whether the browser tests run here (chromium found, or required). */
export const BROWSER_RUNS: boolean = haveChromium() || REQUIRED;

const browserTests = testsNeeding({
  runs: BROWSER_RUNS,
  ignored:
    `!!! chromium (${CHROMIUM}) is not installed here: the browser tests are IGNORED; apt-get install -y chromium, or set LOOM_REQUIRE_BROWSER=1 to make them fail`,
  present: haveChromium,
  presentAfterAll: "chromium is installed after all: rerun the tests",
});

/** `Deno.test` that is ignored (loudly) without chromium, unless required. */
export function browserTest(name: string, fn: TestBody): void {
  browserTests(name, fn);
}

/** What a page did that it must not: errors, dialogs, requests. */
export interface PageWatch {
  /** Uncaught errors in the page. */
  readonly errors: readonly string[];
  /** Dialogs opened (alert, confirm, prompt). */
  readonly dialogs: readonly string[];
  /** Requests the page made, by URL. */
  readonly requests: readonly string[];
  /** Console messages of level error (a blocked script or style shows here). */
  readonly consoleErrors: readonly string[];
}

/** Which element: a CSS selector, its n-th match, or one holding a text. */
export interface Target {
  /** Matches holding this text. */
  readonly hasText?: string;
  /** Matches whose text matches this regular expression. */
  readonly hasTextPattern?: string;
  /** The n-th match, from 0. */
  readonly nth?: number;
}

/** One page of the browser, driven through the driver. */
export interface RemotePage {
  /** Navigates and waits for the load. */
  goto(url: string): Promise<void>;
  /** Replaces the document, as a page that parses the HTML. */
  setContent(html: string): Promise<void>;
  /** Waits until an element is visible (or `attached`). */
  waitFor(
    selector: string,
    options?: Target & { state?: "visible" | "attached"; timeout?: number },
  ): Promise<void>;
  /** Clicks an element. */
  click(selector: string, options?: Target): Promise<void>;
  /** Types a value into an input. */
  fill(selector: string, value: string): Promise<void>;
  /** Clicks at a point of an element (fractions of its box). */
  clickAt(selector: string, fx: number, fy: number): Promise<void>;
  /** Moves the mouse to a point of an element. */
  moveAt(selector: string, fx: number, fy: number): Promise<void>;
  /** An element's text. */
  text(selector: string, options?: Target): Promise<string | null>;
  /** An element's attribute. */
  attribute(
    selector: string,
    name: string,
    options?: Target,
  ): Promise<string | null>;
  /** How many elements match. */
  count(selector: string, options?: Target): Promise<number>;
  /** Opens every `<details>`. */
  openDetails(): Promise<void>;
  /** Waits a while (for what must not happen). */
  wait(ms: number): Promise<void>;
  /** A PNG of an element. */
  screenshot(selector: string): Promise<Uint8Array>;
  /** Milliseconds from navigation to a performance mark and to first paint. */
  timings(mark: string): Promise<{ mark: number | null; paint: number | null }>;
  /** What the page did so far. */
  watch(): Promise<PageWatch>;
  /** Closes the page and its context. */
  close(): Promise<void>;
}

/** A launched browser; disposing it closes it and its driver. */
export interface TestBrowser extends AsyncDisposable {
  /** A new page in a fresh context of its own. */
  page(options?: { width?: number; height?: number }): Promise<RemotePage>;
}

/**
 * Starts the driver and chromium.
 *
 * @returns The browser.
 * @throws {Error} When chromium cannot be found or started.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!haveChromium()) {
    throw new Error(
      `chromium is required (LOOM_REQUIRE_BROWSER=1) but ${CHROMIUM} was not found: apt-get install -y chromium`,
    );
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-all",
      join(REPO_ROOT, "tests", "_kit", "browser_driver.ts"),
      CHROMIUM,
    ],
    cwd: REPO_ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void }
  >();
  let stderr = "";
  const errDone = (async () => {
    for await (
      const chunk of child.stderr.pipeThrough(new TextDecoderStream())
    ) stderr += chunk;
  })();
  const outDone = (async () => {
    let buffered = "";
    for await (
      const chunk of child.stdout.pipeThrough(new TextDecoderStream())
    ) {
      buffered += chunk;
      let at: number;
      while ((at = buffered.indexOf("\n")) >= 0) {
        const reply = JSON.parse(buffered.slice(0, at)) as {
          id: number;
          value?: unknown;
          error?: string;
        };
        buffered = buffered.slice(at + 1);
        const waiting = pending.get(reply.id);
        pending.delete(reply.id);
        if (reply.error !== undefined) {
          waiting?.reject(new Error(reply.error));
        } else waiting?.resolve(reply.value);
      }
    }
    for (const waiting of pending.values()) {
      waiting.reject(new Error(`The browser driver ended: ${stderr}`));
    }
  })();
  let next = 1;
  const call = async (op: string, args: unknown = {}): Promise<unknown> => {
    const id = next++;
    const reply = new Promise<unknown>((resolve, reject) =>
      pending.set(id, { resolve, reject })
    );
    await writer.write(
      new TextEncoder().encode(`${JSON.stringify({ id, op, args })}\n`),
    );
    return await reply;
  };
  const close = async () => {
    await call("close").catch(() => {});
    await writer.close().catch(() => {});
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, 10_000);
    await child.status;
    clearTimeout(timer);
    await outDone.catch(() => {});
    await errDone.catch(() => {});
  };
  try {
    await call("launch");
  } catch (error) {
    await close();
    throw error;
  }
  return {
    async page(options = {}) {
      const page = await call("newPage", options) as number;
      const on = (selector: string, target: Target = {}) => ({
        page,
        selector,
        ...target,
      });
      return {
        goto: async (url) => void await call("goto", { page, url }),
        setContent: async (html) =>
          void await call("setContent", { page, html }),
        waitFor: async (selector, o = {}) =>
          void await call("waitFor", { ...on(selector, o), ...o }),
        click: async (selector, o) => void await call("click", on(selector, o)),
        fill: async (selector, value) =>
          void await call("fill", { ...on(selector), value }),
        clickAt: async (selector, fx, fy) =>
          void await call("clickAt", { ...on(selector), fx, fy }),
        moveAt: async (selector, fx, fy) =>
          void await call("moveAt", { ...on(selector), fx, fy }),
        text: async (selector, o) =>
          await call("text", on(selector, o)) as string | null,
        attribute: async (selector, name, o) =>
          await call("attribute", { ...on(selector, o), name }) as
            | string
            | null,
        count: async (selector, o) =>
          await call("count", on(selector, o)) as number,
        openDetails: async () => void await call("openDetails", { page }),
        wait: async (ms) => void await call("wait", { page, ms }),
        screenshot: async (selector) => {
          const base64 = await call("screenshot", on(selector)) as string;
          return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
        },
        timings: async (mark) =>
          await call("evaluateMark", { page, mark }) as {
            mark: number | null;
            paint: number | null;
          },
        watch: async () => await call("watch", { page }) as PageWatch,
        close: async () => void await call("closePage", { page }),
      };
    },
    [Symbol.asyncDispose]: close,
  };
}
