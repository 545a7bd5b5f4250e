/**
 * Runs to view, made on the spot by the real loop (the tests, the
 * benchmark and the screenshot share them): a generated workspace and a
 * generated `loom-recording/1` of exactly N steps under the bounded policy
 * — files inspected, edited, tests run (passing when the last edit wrote
 * 0 to `status`), result listings as lookups, refused selections — with
 * the run's context report, request log, recording and session. With
 * `hostile`, file names and contents carry markup and script that a page
 * must show as text.
 *
 * @module
 */
import { runSlice } from "../../lib/slice/run.ts";
import { SessionStore } from "../../lib/persist/session_store.ts";
import { sliceSessionHooks } from "../../lib/persist/slice_session.ts";
import type { ContextReport } from "../../lib/briefing/context_report.ts";
import { readContextReport } from "../../lib/briefing/context_report_schema.ts";
import { spawnLoom } from "../_kit.ts";

/** What a generated run left behind, under `dir`. */
export interface MadeRun {
  /** The folder holding everything below. */
  readonly dir: string;
  /** The context report (version 2). */
  readonly reportPath: string;
  /** The report, parsed. */
  readonly report: ContextReport;
  /** The request log. */
  readonly requestsPath: string;
  /** The recording the run replayed. */
  readonly recordingPath: string;
  /** The session folder. */
  readonly sessionPath: string;
  /** The workspace. */
  readonly workspace: string;
}

/** Options of {@linkcode makeRun}. */
export interface MakeRunOptions {
  /** Steps (the recording holds exactly these). */
  readonly steps: number;
  /** Markup in file contents, and a refused action quoting it. */
  readonly hostile?: string;
  /** Markup in file names (no `/`); default none. */
  readonly hostileName?: string;
  /** Keep a session (default true). */
  readonly session?: boolean;
}

const UNITS = 24;

function unitName(i: number, hostileName: string | undefined): string {
  // One file in six has the hostile markup in its name.
  return hostileName !== undefined && i % 6 === 0
    ? `src/${hostileName}_${i}.ts`
    : `src/unit_${String(i).padStart(2, "0")}.ts`;
}

/** The recording of `steps` steps over the generated workspace. */
function recording(
  steps: number,
  hostile: string | undefined,
  hostileName: string | undefined,
): unknown {
  const calls: unknown[] = [];
  const call = (phase: "selection" | "arguments", args: unknown) =>
    calls.push({
      phase,
      tool: phase === "selection" ? "select_action" : "action_arguments",
      arguments: args,
    });
  for (let step = 0; step < steps; step += 1) {
    const unit = step % UNITS;
    switch (step % 8) {
      case 0:
      case 4:
        // Six results every eight steps: 1,202 steps stay within the
        // store's 1,024 results.
        call("selection", { action: "repository.inspect" });
        call("arguments", {
          paths: step % 8 === 0
            ? [
              unitName(unit, hostileName),
              unitName((unit + 1) % UNITS, hostileName),
            ]
            : [unitName(unit, hostileName)],
        });
        break;
      case 1:
      case 5:
        call("selection", { action: "repository.edit" });
        call("arguments", {
          files: [
            {
              path: unitName(unit, hostileName),
              contents: `export const V${step} = ${step};\n// ${
                hostile ?? "edited"
              }\n`,
            },
            { path: "status", contents: step % 16 === 5 ? "0\n" : "1\n" },
          ],
        });
        break;
      case 2:
      case 6:
        call("selection", { action: "tests.run" });
        call("arguments", {});
        break;
      case 3:
        // A lookup first: the answer shows inline in the next request.
        call("selection", { $list_results: 0 });
        call("selection", { action: "repository.inspect" });
        call("arguments", { paths: ["README.md"] });
        break;
      default:
        // Refused: the reason quotes what the model chose.
        call("selection", { action: hostile ?? "no.such_action" });
    }
  }
  return { format: "loom-recording/1", calls };
}

/**
 * Makes a run of exactly `steps` steps.
 *
 * @param dir An empty folder to make it in (the caller removes it).
 * @param options Steps, hostility, session.
 * @returns Where everything is.
 */
export async function makeRun(
  dir: string,
  options: MakeRunOptions,
): Promise<MadeRun> {
  const hostile = options.hostile;
  const workspace = `${dir}/workspace`;
  await Deno.mkdir(`${workspace}/src`, { recursive: true });
  await Deno.writeTextFile(
    `${workspace}/README.md`,
    `# Generated workspace\n\n${hostile ?? "Units to edit."}\n`,
  );
  await Deno.writeTextFile(`${workspace}/status`, "1\n");
  for (let i = 0; i < UNITS; i += 1) {
    await Deno.writeTextFile(
      `${workspace}/${unitName(i, options.hostileName)}`,
      `// Unit ${i}. ${hostile ?? ""}\nexport const UNIT_${i} = ${i};\n`
        .repeat(12),
    );
  }
  const recordingPath = `${dir}/recording.json`;
  await Deno.writeTextFile(
    recordingPath,
    JSON.stringify(
      recording(options.steps, hostile, options.hostileName),
      null,
      1,
    ),
  );
  const reportPath = `${dir}/report.json`;
  const requestsPath = `${dir}/requests.jsonl`;
  const sessionPath = `${dir}/session`;
  const request = {
    intent: `Edit every unit and keep the tests passing. ${hostile ?? ""}`,
    workspace,
    test: {
      command: ["sh", "-c", 'exit "$(cat status)"'],
      timeoutMs: 60_000,
    },
    maxSteps: options.steps,
    provider: `recorded:${recordingPath}`,
  };
  const store = options.session === false
    ? undefined
    : await SessionStore.create(sessionPath, {
      workspace,
      run: {
        intent: request.intent,
        policy: "bounded",
        model: request.provider,
        test: request.test,
        maxSteps: options.steps,
      },
    });
  try {
    const outcome = await runSlice(request, {
      contextPolicy: "bounded",
      contextReport: reportPath,
      recordRequests: requestsPath,
      maxConsecutiveRefusals: options.steps,
      ...(store === undefined ? {} : { session: sliceSessionHooks(store) }),
    });
    if (outcome.steps !== options.steps) {
      throw new Error(
        `The generated run took ${outcome.steps} of ${options.steps} steps: ${outcome.stop}: ${outcome.detail}`,
      );
    }
  } finally {
    await store?.close();
  }
  const report = readContextReport(
    await Deno.readTextFile(reportPath),
    reportPath,
  );
  return {
    dir,
    reportPath,
    report,
    requestsPath,
    recordingPath,
    sessionPath,
    workspace,
  };
}

/** A running `loom view`; disposing it stops it (SIGTERM) and waits. */
export interface RunningView extends AsyncDisposable {
  /** The URL it printed, token included. */
  readonly url: string;
  /** Its origin (`http://127.0.0.1:PORT`). */
  readonly origin: string;
  /** The token. */
  readonly token: string;
  /** What it wrote to standard error so far. */
  stderr(): string;
}

/**
 * Starts the real `loom view` as a subprocess and waits for the URL it
 * prints.
 *
 * @param args Arguments after `view`.
 * @returns The running server.
 * @throws {Error} When it exits before printing a URL.
 */
export async function startView(
  args: readonly string[],
): Promise<RunningView> {
  const child = spawnLoom(["view", ...args]);
  let err = "";
  const errDone = (async () => {
    for await (
      const chunk of child.stderr.pipeThrough(new TextDecoderStream())
    ) {
      err += chunk;
    }
  })();
  const reader = child.stdout.pipeThrough(new TextDecoderStream())
    .getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) break;
    out += value;
  }
  const url = out.split("\n")[0] ?? "";
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    await reader.cancel().catch(() => {});
    await child.status;
    await errDone;
  };
  if (!/^http:\/\/\S+\?token=[0-9a-f]{64}$/.test(url)) {
    await stop();
    throw new Error(`loom view printed no URL: ${out}${err}`);
  }
  const parsed = new URL(url);
  return {
    url,
    origin: parsed.origin,
    token: parsed.searchParams.get("token")!,
    stderr: () => err,
    [Symbol.asyncDispose]: stop,
  };
}
