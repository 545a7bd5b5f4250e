/**
 * What telemetry costs, the way a user meets it (docs/performance.md,
 * "Telemetry"): the recorded bug-fix slice (`loom run` as a subprocess) and
 * 1,000 small gateway calls (`loom mcp --servers`, the SDK's client, the
 * fault server's `small` tool), each in three variants interleaved round by
 * round so load hits them alike:
 *
 * - **none**: telemetry not compiled in — an import map swaps Loom's
 *   telemetry modules for do-nothing stand-ins (`_no_telemetry/`), so
 *   neither `@opentelemetry/api` nor any span code is loaded;
 * - **off**: the shipped code without `OTEL_DENO` (the API's no-op path);
 * - **on**: `OTEL_DENO=true`, exporting `http/json` to a local receiver.
 *
 * The fastest round per variant (load on a shared machine only adds time;
 * the order of the variants rotates from round to round) and the ratios
 * off/none and on/none; the in-process off path last.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-net=127.0.0.1 tests/bench/telemetry_figures.ts [rounds] [calls]
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { REPO_ROOT, TEST_PERMISSIONS } from "../_kit.ts";
import { connectStdio, denoEntry, FAULT, mcpArgs } from "../_kit/mcp.ts";
import { prepareWorkspace, recordedRunArgs } from "../e2e/_workspace.ts";
import { otlpReceiver } from "../telemetry/_otlp.ts";
import {
  startClientRequest,
  traceServerRequest,
} from "../../lib/telemetry/mcp.ts";
import { CodeRunSpan } from "../../lib/telemetry/code.ts";

const rounds = Number(Deno.args[0] ?? 5);
const calls = Number(Deno.args[1] ?? 1000);
const dir = await Deno.makeTempDir({ prefix: "loom-telemetry-figures-" });
await using receiver = otlpReceiver();

/**
 * deno.json's imports as an import map file, with the stand-ins when
 * `without` is set. Every variant runs with one, so the map itself (which
 * resolves packages a little differently from deno.json) is no difference.
 */
async function importMapFile(without: boolean): Promise<string> {
  const config = JSON.parse(
    await Deno.readTextFile(join(REPO_ROOT, "deno.json")),
  );
  const url = (path: string) => pathToFileURL(resolve(REPO_ROOT, path)).href;
  const stand = (name: string) => url(`tests/bench/_no_telemetry/${name}`);
  // deno.json resolves `pkg/sub/path` of a bare `pkg`; an import map needs
  // the `pkg/` prefix spelled out.
  const prefixes = Object.fromEntries(
    Object.entries(config.imports as Record<string, string>)
      .filter(([, target]) => target.startsWith("npm:"))
      .map(([name, target]) => [`${name}/`, `npm:/${target.slice(4)}/`]),
  );
  const map = {
    imports: {
      ...config.imports,
      ...prefixes,
      ...(without
        ? {
          // A slice loads its span code only when something can record
          // (lib/slice/_slice_trace.ts): nothing to swap there.
          [url("lib/telemetry/mcp.ts")]: stand("mcp.ts"),
          [url("lib/telemetry/code.ts")]: stand("code.ts"),
          [url("lib/telemetry/tracing.ts")]: stand("tracing.ts"),
        }
        : {}),
    },
  };
  const path = join(dir, without ? "no_telemetry.json" : "imports.json");
  await Deno.writeTextFile(path, JSON.stringify(map));
  return path;
}
const maps = {
  without: await importMapFile(true),
  with: await importMapFile(false),
};

type Variant = "none" | "off" | "on";
const VARIANTS: Variant[] = ["none", "off", "on"];
const envOf = (v: Variant): Record<string, string> =>
  v === "on" ? receiver.env() : { OTEL_DENO: "false" };
const flagsOf = (v: Variant): string[] => [
  "--import-map",
  v === "none" ? maps.without : maps.with,
];

/** One `loom run` of the recorded bug-fix slice, in milliseconds. */
async function slice(v: Variant): Promise<number> {
  await using prepared = await prepareWorkspace("bugfix");
  const started = performance.now();
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...TEST_PERMISSIONS,
      ...flagsOf(v),
      join(REPO_ROOT, "cli.ts"),
      ...recordedRunArgs(prepared.workspace, { maxSteps: 20 }),
    ],
    cwd: REPO_ROOT,
    env: envOf(v),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - started;
  if (output.code !== 0) {
    throw new Error(
      `loom run (${v}) exited ${output.code}: ${
        new TextDecoder().decode(output.stderr)
      }`,
    );
  }
  return ms;
}

const servers = join(dir, "servers.json");
await Deno.writeTextFile(
  servers,
  JSON.stringify({ mcpServers: { fault: denoEntry(FAULT) } }),
);

/** `calls` small gateway calls after a warm-up, in milliseconds per call. */
async function gateway(v: Variant): Promise<number> {
  await using g = await connectStdio(
    Deno.execPath(),
    mcpArgs(["--servers", servers], flagsOf(v)),
    { env: envOf(v) },
  );
  const call = () =>
    g.client.request({
      method: "tools/call",
      params: { name: "fault__small", arguments: {} },
    }, CallToolResultSchema);
  for (let i = 0; i < 50; i++) await call();
  const started = performance.now();
  for (let i = 0; i < calls; i++) await call();
  return (performance.now() - started) / calls;
}

const median = (list: number[]) =>
  [...list].sort((a, b) => a - b)[list.length >> 1]!;
const sliceTimes: Record<Variant, number[]> = { none: [], off: [], on: [] };
const callTimes: Record<Variant, number[]> = { none: [], off: [], on: [] };
for (const v of VARIANTS) await slice(v); // warm the module cache
for (let round = 0; round < rounds; round++) {
  const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % 3]!);
  for (const v of order) sliceTimes[v].push(await slice(v));
  for (const v of order) callTimes[v].push(await gateway(v));
}
await Deno.remove(dir, { recursive: true });

const row = (
  what: string,
  times: Record<Variant, number[]>,
  unit: (ms: number) => string,
) => {
  const [none, off, on] = VARIANTS.map((v) => Math.min(...times[v]));
  console.log(
    `| ${what} | ${unit(none!)} | ${unit(off!)} (${
      ((off! / none! - 1) * 100).toFixed(1)
    }%) | ${unit(on!)} (${((on! / none! - 1) * 100).toFixed(1)}%) |`,
  );
};
console.log(
  `${rounds} rounds, variants rotated; fastest round; % against telemetry not compiled in`,
);
console.log("| workload | not compiled in | off | on, to a local receiver |");
console.log("| -------- | --------------: | --: | ----------------------: |");
row(
  "recorded bug-fix slice (`loom run`, whole process)",
  sliceTimes,
  (ms) => `${ms.toFixed(0)} ms`,
);
row(
  `small gateway call (mean of ${calls})`,
  callTimes,
  (ms) => `${(ms * 1000).toFixed(0)} µs`,
);
console.log(
  `spans received while on: ${receiver.spans().length}; OTLP requests: ${receiver.bodies.length}`,
);

// The off path alone, in this process (no provider registered): what one
// host request's SERVER span and its upstream CLIENT span cost when nothing
// records, against the same handler called bare. Steadier than the
// subprocess rows on a loaded machine.
const N = 200_000;
const handler = () => Promise.resolve({ content: [] });
const bare = async () => {
  const started = performance.now();
  for (let i = 0; i < N; i++) await handler();
  return (performance.now() - started) / N;
};
const traced = async () => {
  const started = performance.now();
  for (let i = 0; i < N; i++) {
    await traceServerRequest(
      "tools/call",
      { params: { name: "fault__small", arguments: {}, _meta: {} } },
      { requestId: i },
      "stdio",
      () => {
        const call = startClientRequest("tools/call", {
          name: "small",
          arguments: {},
        }, { server: "fault", transport: "stdio" });
        call.end({ result: {} });
        return handler();
      },
    );
  }
  return (performance.now() - started) / N;
};
/** Microseconds `run` adds per request over `bare`: medians of three runs. */
const addedUs = async (run: () => Promise<number>) => {
  await run();
  return (median([await run(), await run(), await run()]) -
    median([await bare(), await bare(), await bare()])) * 1000;
};
await bare();
const spent = await addedUs(traced);
console.log(
  `off path, in-process: ${
    spent.toFixed(2)
  } µs per host request (server and client span, no provider)`,
);

// The same for a run_code run (its span, its deadline, its end) with one
// call from code through the run's span: what the runner adds to a run
// when nothing records (a run itself takes milliseconds: a process).
const codeRun = async () => {
  const started = performance.now();
  for (let i = 0; i < N; i++) {
    const run = CodeRunSpan.start("bubblewrap");
    run.began(30_000);
    await run.within(handler);
    run.end({ calls: 1, ms: 1, logBytes: 0 });
  }
  return (performance.now() - started) / N;
};
const perRun = await addedUs(codeRun);
console.log(
  `off path, in-process: ${
    perRun.toFixed(2)
  } µs per run_code run (run span and one call, no provider)`,
);
