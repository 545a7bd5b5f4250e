/** A slice run in-process against a hostile OpenAI-compatible server. */
import type { ContextReport } from "../../lib/briefing/context_report.ts";
import { createProvider } from "../../lib/providers/create_provider.ts";
import type { RunOptions } from "../../lib/slice/request.ts";
import { runSlice } from "../../lib/slice/run.ts";
import type { SliceOutcome } from "../../lib/slice/outcome.ts";
import type { HostileServer } from "./_hostile_server.ts";
import { tempDir } from "../_kit.ts";

/** The forced tool a Chat Completions request body names. */
export function forcedTool(body: unknown): string {
  const choice = (body as { tool_choice?: { function?: { name?: unknown } } })
    ?.tool_choice?.function?.name;
  return typeof choice === "string" ? choice : "";
}

/** Whether a request asks for the selection stage (not the arguments). */
export function isSelection(body: unknown): boolean {
  return /Current stage: selection\./.test(JSON.stringify(body));
}

/** Everything a run left behind. */
export interface SliceRunResult {
  readonly outcome: SliceOutcome;
  readonly report: ContextReport;
  readonly progress: string[];
  readonly waiting: string[];
  readonly elapsedMs: number;
}

/**
 * Runs a slice over a fresh workspace (one file, no test command, so
 * `slice.complete` is admissible at once) against `server`.
 */
export async function runAgainst(
  server: HostileServer,
  options: RunOptions & {
    readonly maxSteps?: number;
    readonly timeoutMs?: number;
  } = {},
): Promise<SliceRunResult> {
  await using dir = await tempDir();
  const workspace = `${dir.path}/workspace`;
  const reportPath = `${dir.path}/report.json`;
  await Deno.mkdir(workspace);
  await Deno.writeTextFile(`${workspace}/a.txt`, "hello\n");
  const progress: string[] = [];
  const waiting: string[] = [];
  const provider = createProvider("openai:fuzz", {
    env: {},
    baseUrl: `${server.url}/v1`,
    // Generous unless a test is about timeouts: a loaded machine must not
    // turn an ordinary reply into a timeout.
    timeoutMs: options.timeoutMs ?? 20_000,
    maxRetries: 0,
  });
  const started = performance.now();
  const outcome = await runSlice({
    intent: "Say hello",
    workspace,
    maxSteps: options.maxSteps ?? 6,
    provider,
  }, {
    contextReport: reportPath,
    onProgress: (line) => progress.push(line),
    onWaiting: (line) => waiting.push(line),
    ...options,
  });
  const elapsedMs = performance.now() - started;
  const report = JSON.parse(await Deno.readTextFile(reportPath));
  return { outcome, report, progress, waiting, elapsedMs };
}
