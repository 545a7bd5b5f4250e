/**
 * The browser kit of the tests and figure scripts: Debian's chromium
 * driven by playwright-core (its own browser download cannot work here),
 * launched with background networking off and a fresh profile (Playwright
 * makes one per launch and removes it when the browser closes). One browser per test file: a file's test owns
 * it and closes it in `finally` (`await using`).
 *
 * Without chromium the browser tests are reported as ignored with one
 * loud line; with `LOOM_REQUIRE_BROWSER=1` (CI, `.ci/run`) they run and
 * fail instead.
 *
 * @module
 */
import { type Browser, chromium, type Page } from "playwright-core";

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

let warned = false;

/** `Deno.test` that is ignored (loudly) without chromium, unless required. */
export function browserTest(
  name: string,
  fn: (t: Deno.TestContext) => Promise<void>,
): void {
  const ignore = !BROWSER_RUNS;
  if (ignore && !warned) {
    warned = true;
    Deno.test(
      `!!! chromium (${CHROMIUM}) is not installed here: the browser tests are IGNORED; apt-get install -y chromium, or set LOOM_REQUIRE_BROWSER=1 to make them fail`,
      () => {
        if (haveChromium()) {
          throw new Error("chromium is installed after all: rerun the tests");
        }
      },
    );
  }
  Deno.test({ name, ignore, fn });
}

/** A launched browser; disposing it closes it. */
export interface TestBrowser extends AsyncDisposable {
  /** The playwright browser. */
  readonly browser: Browser;
  /** A new page in a fresh context of its own. */
  page(options?: { width?: number; height?: number }): Promise<Page>;
}

/**
 * Launches chromium headless, as root without its sandbox (chromium
 * refuses to run as root otherwise), with no network of its own.
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
  const root = Deno.uid?.() === 0;
  // Playwright gives each launch a fresh profile in a temp folder of its
  // own, and removes it when the browser closes.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      ...(root ? ["--no-sandbox"] : []),
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-gpu",
      "--disable-quic",
      "--disable-dev-shm-usage",
    ],
  });
  const close = async () => {
    await browser.close().catch(() => {});
  };
  return {
    browser,
    async page(options = {}) {
      const context = await browser.newContext({
        viewport: {
          width: options.width ?? 1280,
          height: options.height ?? 900,
        },
        serviceWorkers: "block",
      });
      return await context.newPage();
    },
    [Symbol.asyncDispose]: close,
  };
}

/** What a page did that it must not: errors, dialogs, requests. */
export interface PageWatch {
  /** Uncaught errors in the page. */
  readonly errors: string[];
  /** Dialogs opened (alert, confirm, prompt). */
  readonly dialogs: string[];
  /** Requests the page made, by URL. */
  readonly requests: string[];
  /** Console messages of level error. */
  readonly consoleErrors: string[];
}

/**
 * Watches a page for script errors, dialogs, requests and console errors
 * (a blocked inline script or style is reported there).
 *
 * @param page The page.
 * @returns The lists, filled as it happens.
 */
export function watchPage(page: Page): PageWatch {
  const watch: PageWatch = {
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
  return watch;
}
