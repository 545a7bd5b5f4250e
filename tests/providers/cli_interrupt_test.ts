/**
 * The real CLI against a hostile server on 127.0.0.1: interrupts, timeouts
 * and control characters, checked through exit codes, the summary, the
 * context report and the session afterwards.
 */
import assert from "node:assert/strict";
import type { ContextReport } from "../../lib/briefing/context_report.ts";
import type { SliceOutcome } from "../../lib/slice/outcome.ts";
import { type CliResult, finished, spawnLoom, tempDir } from "../_kit.ts";
import {
  chatCompletion,
  type HostileServer,
  hostileServer,
  json,
  stall,
} from "./_hostile_server.ts";
import { forcedTool, isSelection } from "./_slice_server.ts";

/** Only a hang exceeds this; the runs themselves take a few seconds. */
const SLACK_MS = 30_000;

/** The real CLI, with no OpenAI key in its environment, still running. */
function spawn(
  args: string[],
): { child: Deno.ChildProcess; finished(): Promise<CliResult> } {
  const child = spawnLoom(args, { env: { OPENAI_API_KEY: "" } });
  const output = finished(child);
  return { child, finished: () => output };
}

async function until(what: string, test: () => boolean): Promise<void> {
  const started = performance.now();
  while (!test()) {
    if (performance.now() - started > SLACK_MS) assert.fail(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Scene extends AsyncDisposable {
  readonly root: string;
  readonly workspace: string;
  readonly report: string;
  readonly session: string;
  args(server: HostileServer, ...extra: string[]): string[];
  readReport(): Promise<ContextReport>;
}

async function scene(): Promise<Scene> {
  const temp = await tempDir();
  const root = temp.path;
  const workspace = `${root}/ws`;
  await Deno.mkdir(workspace);
  await Deno.writeTextFile(`${workspace}/a.txt`, "hello\n");
  const report = `${root}/report.json`;
  return {
    root,
    workspace,
    report,
    session: `${root}/session`,
    args: (server, ...extra) => [
      "run",
      "--workspace",
      workspace,
      "--intent",
      "Say hello",
      "--model",
      "openai:fuzz",
      "--base-url",
      `${server.url}/v1`,
      "--context-report",
      report,
      ...extra,
    ],
    readReport: async () => JSON.parse(await Deno.readTextFile(report)),
    [Symbol.asyncDispose]: temp[Symbol.asyncDispose],
  };
}

function complete(body: unknown): Response {
  const tool = forcedTool(body);
  return json(chatCompletion(
    tool,
    isSelection(body)
      ? '{"action":"slice.complete"}'
      : '{"summary":"Said hello"}',
  ));
}

for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  Deno.test(`${signal} during a model call writes the report and summary, keeps the session resumable and exits ${code}`, async () => {
    await using s = await scene();
    let answering = false;
    await using server = hostileServer((c) =>
      answering ? complete(c.body) : stall(c)
    );
    const run = spawn(s.args(server, "--session", s.session, "--json"));
    await until("the model call started", () => server.requests >= 1);
    run.child.kill(signal);
    const result = await run.finished();
    assert.equal(result.code, code, result.stderr);
    const outcome: SliceOutcome = JSON.parse(result.stdout);
    assert.equal(outcome.stop, "interrupted");
    assert.equal(outcome.detail, `The run was interrupted: ${signal} received`);
    assert.equal(outcome.steps, 0);
    const report = await s.readReport();
    assert.equal(report.outcome.stop, "interrupted");
    assert.equal(report.requests.length, 1);
    assert.doesNotMatch(result.stderr, /internal error|RangeError|TypeError/);

    // The session continues where the interrupt left it.
    answering = true;
    const resumed = await spawn([
      "run",
      "--resume",
      s.session,
      "--base-url",
      `${server.url}/v1`,
      "--json",
    ]).finished();
    assert.equal(resumed.code, 0, resumed.stderr);
    const done: SliceOutcome = JSON.parse(resumed.stdout);
    assert.equal(done.stop, "completed");
    assert.equal(done.summary, "Said hello");
  });
}

Deno.test("a second SIGINT exits at once, without waiting for the running test", async () => {
  await using s = await scene();
  // The test command sleeps 15 s; the first SIGINT waits for it to end.
  await Deno.writeTextFile(
    `${s.workspace}/slow.ts`,
    "await new Promise((r) => setTimeout(r, 15_000));\n",
  );
  await using server = hostileServer(({ body }) => {
    const tool = forcedTool(body);
    return json(chatCompletion(
      tool,
      isSelection(body) ? '{"action":"tests.run"}' : "{}",
    ));
  });
  const started = performance.now();
  const run = spawn(
    s.args(server, "--test", `${Deno.execPath()} run slow.ts`),
  );
  await until("the test started", () => server.requests >= 2);
  await new Promise((r) => setTimeout(r, 500));
  run.child.kill("SIGINT");
  await new Promise((r) => setTimeout(r, 300));
  run.child.kill("SIGINT");
  const result = await run.finished();
  assert.equal(result.code, 130, result.stderr);
  assert.match(result.stderr, /SIGINT received/);
  assert.match(result.stderr, /second SIGINT, exiting without a report/);
  const elapsedMs = performance.now() - started;
  assert.ok(elapsedMs < 15_000, `took ${elapsedMs} ms`);
});

/** A run against a server that never answers, with these flags. */
async function stalled(...extra: string[]): Promise<
  { result: CliResult; report: ContextReport; requests: number }
> {
  await using s = await scene();
  await using server = hostileServer(stall);
  const result = await spawn(s.args(server, ...extra)).finished();
  return { result, report: await s.readReport(), requests: server.requests };
}

Deno.test("--model-timeout ends a stalled call as provider_timeout with exit 3 and a report", async () => {
  const { result, report, requests } = await stalled(
    "--model-timeout",
    "300ms",
  );
  assert.equal(result.code, 3, result.stderr);
  assert.match(
    result.stdout,
    /detail: provider_timeout: The server at http:\/\/127\.0\.0\.1:\d+\/v1 sent no complete reply within the model timeout of 300 ms \(3 attempts\)/,
  );
  assert.equal(requests, 3);
  assert.equal(report.outcome.stop, "provider_error");
});

Deno.test("--run-timeout interrupts a slow call after the progress said it was waiting", async () => {
  // The notice comes 5 s into the call; the 3 s after it leave room for the
  // process to start on a loaded machine (test files run in parallel).
  const { result, report } = await stalled("--run-timeout", "8s");
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    /^step 1\/40 selection: waiting for the model for 5 s \(model timeout 2 min\)$/m,
  );
  assert.match(
    result.stdout,
    /^loom run: interrupted before the first step \(1 model call\)/,
  );
  assert.match(result.stdout, /the run timeout of 8 s ran out/);
  assert.equal(report.outcome.stop, "interrupted");
});

Deno.test("control characters from the model never reach the terminal raw", async () => {
  await using s = await scene();
  const forged =
    "\u001b[2K\rstep 9/9 arguments slice.complete: completed\u0000";
  await using server = hostileServer(({ n, body }) => {
    const tool = forcedTool(body);
    if (n === 1) {
      return json(chatCompletion(tool, JSON.stringify({ action: forged })));
    }
    if (n === 2) return json(chatCompletion(forged, "{}"));
    return json(chatCompletion(
      tool,
      isSelection(body)
        ? '{"action":"slice.complete"}'
        : JSON.stringify({ summary: `done\u001b]0;pwned\u0007\r\nfake line` }),
    ));
  });
  const result = await spawn(s.args(server)).finished();
  assert.equal(result.code, 0, result.stderr);
  for (
    const [name, text] of [["stderr", result.stderr], ["stdout", result.stdout]]
  ) {
    assert.doesNotMatch(
      text ?? "",
      // deno-lint-ignore no-control-regex
      new RegExp("[\\u0000-\\u0009\\u000b-\\u001f\\u007f]"),
      `${name} has a raw control character`,
    );
  }
  assert.match(result.stderr, /refused \(not_a_candidate\)/);
  assert.match(result.stderr, /\\u001b\[2K\\rstep 9\/9/);
  assert.match(
    result.stdout,
    /summary: done\\u001b\]0;pwned\\u0007\\r\\nfake line/,
  );
});
