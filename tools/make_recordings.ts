/**
 * Generates the long fixture workspace and the recorded workflows in
 * fixtures/recordings/ (format loom-recording/1). Deterministic: re-run it
 * whenever a fixture workspace, the briefing or the slice loop changes.
 *
 * ```sh
 * deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env tools/make_recordings.ts
 * ```
 *
 * Each recording is made by running the real slice (bounded policy) on a
 * temp copy of its workspace with a scripted model. Most script entries are
 * fixed arguments; a few are computed from the lookup answers the request
 * carries (a `$read_history` reference needs the archived event's digest).
 * Digests of inspected files are computed here from the fixture files, so
 * the references in the recorded edits are exactly what the loop stores.
 * The run must end as expected, with the expected number of refusals, or
 * nothing is written.
 */
import { createHash } from "node:crypto";
import { runSlice } from "../lib/slice/run.ts";
import { ScriptedProvider } from "../lib/testing/scripted_provider.ts";
import type { ModelCall } from "../lib/providers/model_provider.ts";
import type { TurnRequest } from "../lib/briefing/turn_request.ts";
import type { SliceOutcome } from "../lib/slice/outcome.ts";
import type { StopReason } from "../lib/briefing/context_report.ts";
import {
  checkCommand,
  type FixtureName,
  fixtureWorkspace,
  INTENTS,
  prepareWorkspace,
  recordingPath,
} from "../tests/e2e/_workspace.ts";
import type { StepPhase } from "../lib/reference/lookup_session.ts";

// ---------------------------------------------------------------- scripting

type Compute = (answers: readonly Record<string, unknown>[]) => unknown;

type Args = Record<string, unknown>;

interface ScriptCall {
  readonly phase: StepPhase;
  readonly args: Args | Compute;
}

interface StoredText {
  readonly id: string;
  readonly sha256: string;
  readonly text: string;
}

const encoder = new TextEncoder();

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Builds a script while modelling the result store's id counter. */
class Script {
  readonly calls: ScriptCall[] = [];
  #nextResult = 1;
  readonly #workspace: string;

  constructor(workspace: string) {
    this.#workspace = workspace;
  }

  select(action: string): this {
    this.calls.push({ phase: "selection", args: { action } });
    return this;
  }

  lookup(phase: StepPhase, args: Args | Compute): this {
    this.calls.push({ phase, args });
    return this;
  }

  arguments(args: Args | Compute): this {
    this.calls.push({ phase: "arguments", args });
    return this;
  }

  /** The workspace as the script expects it: fixture files plus admitted edits. */
  readonly #files = new Map<string, string>();
  readonly #stored = new Map<string, StoredText>();

  #read(path: string): string {
    return this.#files.get(path) ??
      Deno.readTextFileSync(`${this.#workspace}/${path}`);
  }

  /** A successful inspection: returns the stored results in order. */
  inspect(paths: string[], argumentLookups: Args[] = []): StoredText[] {
    this.select("repository.inspect");
    for (const l of argumentLookups) this.lookup("arguments", l);
    this.arguments({ paths });
    return paths.map((path) => {
      const text = this.#read(path);
      const stored = {
        id: `result-${this.#nextResult++}`,
        sha256: sha256(text),
        text,
      };
      this.#stored.set(stored.id, stored);
      return stored;
    });
  }

  /** Expands edit contents the way the loop will (whole, bytes, lines). */
  #expand(contents: unknown): string {
    if (typeof contents === "string") return contents;
    const segments = (contents as { segments: Args[] }).segments;
    let out = "";
    for (const segment of segments) {
      if (typeof segment["literal"] === "string") {
        out += segment["literal"];
        continue;
      }
      const ref = segment["ref"] as {
        result: string;
        select: { kind: string; start: number; end: number };
      };
      const stored = this.#stored.get(ref.result);
      if (stored === undefined) throw new Error(`Unknown ${ref.result}`);
      const bytes = encoder.encode(stored.text);
      const select = ref.select;
      if (select.kind === "whole") out += stored.text;
      else if (select.kind === "bytes") {
        out += new TextDecoder().decode(
          bytes.subarray(select.start, select.end),
        );
      } else {
        const lines = stored.text.split(/(?<=\n)/);
        out += lines.slice(select.start - 1, select.end).join("");
      }
    }
    return out;
  }

  /** A successful test run (its output tail is stored). */
  test(): void {
    this.select("tests.run").arguments({});
    this.#nextResult += 1;
  }

  /** An edit; unless `refused`, the script's workspace model applies it. */
  edit(
    files: { path: string; contents: unknown }[],
    lookups: Args[] = [],
    options: { message?: string; refused?: boolean } = {},
  ): void {
    this.select("repository.edit");
    for (const l of lookups) this.lookup("arguments", l);
    this.arguments(
      options.message === undefined
        ? { files }
        : { files, message: options.message },
    );
    if (options.refused) return;
    for (const file of files) {
      this.#files.set(file.path, this.#expand(file.contents));
    }
  }

  complete(summary: string): void {
    this.select("slice.complete").arguments({ summary });
  }
}

/**
 * Segments that rebuild `result`'s text with each `[search, replacement]`
 * applied: unchanged stretches are references, changes are literals. With
 * `lines`, changed stretches widen to whole lines and references select
 * lines; with `bytes`, references select byte ranges.
 */
function spliceSegments(
  result: StoredText,
  edits: readonly (readonly [string, string])[],
  kind: "bytes" | "lines",
): { segments: unknown[] } {
  const bytes = encoder.encode(result.text);
  const spans: { start: number; end: number; literal: string }[] = [];
  for (const [search, replacement] of edits) {
    const at = result.text.indexOf(search);
    if (at < 0) throw new Error(`${result.id}: ${search} not found`);
    let start = encoder.encode(result.text.slice(0, at)).byteLength;
    let end = start + encoder.encode(search).byteLength;
    if (kind === "lines") {
      while (start > 0 && bytes[start - 1] !== 0x0a) start -= 1;
      while (end < bytes.length && bytes[end - 1] !== 0x0a) end += 1;
    }
    const original = new TextDecoder().decode(bytes.subarray(start, end));
    spans.push({ start, end, literal: original.replace(search, replacement) });
  }
  spans.sort((a, b) => a.start - b.start);
  const lineOf = (offset: number): number => {
    let line = 1;
    for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line += 1;
    return line;
  };
  const ref = (start: number, end: number): unknown => ({
    ref: {
      result: result.id,
      sha256: result.sha256,
      select: kind === "bytes"
        ? { kind: "bytes", start, end }
        : { kind: "lines", start: lineOf(start), end: lineOf(end) - 1 },
    },
  });
  const segments: unknown[] = [];
  let at = 0;
  for (const span of spans) {
    if (span.start > at) segments.push(ref(at, span.start));
    segments.push({ literal: span.literal });
    at = span.end;
  }
  if (at < bytes.length) segments.push(ref(at, bytes.length));
  return { segments };
}

function whole(result: StoredText): Args {
  return {
    result: result.id,
    sha256: result.sha256,
    select: { kind: "whole" },
  };
}

const ANSWER_KEYS = [
  "selected_text",
  "selected_json",
  "lookup_failed",
  "results",
  "events",
];

/** The lookup answers a request carries, in order (one JSON object a line). */
function lookupAnswers(request: TurnRequest): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const message of request.messages) {
    for (const block of message.content) {
      for (const line of block.text.split("\n")) {
        if (!line.startsWith("{")) continue;
        try {
          const value = JSON.parse(line);
          if (
            value !== null && typeof value === "object" &&
            Object.keys(value).length <= 2 &&
            Object.keys(value).some((k) => ANSWER_KEYS.includes(k))
          ) out.push(value);
        } catch { /* not an answer line */ }
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------- fixtures

/** A generated sensor-ledger workspace: how many units and their rule. */
interface Ledger {
  readonly units: number;
  /** SCALE must be CHANNEL * factor. */
  readonly factor: number;
  /** Digits of the unit numbers in file names. */
  readonly digits: number;
}

/** The project's long recording's workspace. */
const LONG: Ledger = { units: 70, factor: 3, digits: 2 };
/**
 * The held-out longer workspace: made to check that the cost figures chosen
 * on the long recording hold on a run they were not chosen on.
 */
const LONGER: Ledger = { units: 120, factor: 5, digits: 3 };
const UNITS = LONG.units;

function unitNameOf(ledger: Ledger, n: number): string {
  return `unit_${String(n).padStart(ledger.digits, "0")}`;
}
const unitName = (n: number): string => unitNameOf(LONG, n);

const FILLER = [
  "Raw counts arrive from the acquisition board in frames of 64 samples.",
  "Each channel is calibrated against the reference cell at start-up.",
  "Drift compensation happens upstream, so conversion is a plain product.",
  "The ledger stores converted values with three decimal places.",
  "Saturated samples are flagged by the board and skipped by the caller.",
  "Channel numbers are stable across firmware revisions.",
  "The conversion must stay pure: no I/O, no global state beyond constants.",
  "Operators read these values on the night-shift dashboard.",
];

function unitSource(n: number, ledger: Ledger = LONG): string {
  const unitName = (k: number) => unitNameOf(ledger, k);
  const lines = [
    `// ${unitName(n)}: conversion for sensor channel ${n}.`,
    "//",
  ];
  for (let i = 0; i < 18; i++) {
    lines.push(`// ${FILLER[(n + i) % FILLER.length]} (note ${n}.${i + 1})`);
  }
  lines.push(
    "",
    "/** Sensor channel number. */",
    `export const CHANNEL = ${n};`,
    "",
    `/** Counts per unit for this channel; must be CHANNEL * ${ledger.factor}. */`,
    "export const SCALE = 0;",
    "",
    `/** Converts raw counts of channel ${n} to units. */`,
    "export function convert(raw: number): number {",
    "  return raw * SCALE;",
    "}",
    "",
  );
  return lines.join("\n");
}

function longCheckSource(ledger: Ledger = LONG): string {
  const unitName = (k: number) => unitNameOf(ledger, k);
  const UNITS = ledger.units;
  const lines = [
    "// The workspace's test program: `deno run check.ts`. Exit code 0 means every",
    `// unit converts with SCALE = CHANNEL * ${ledger.factor}. Generated by tools/make_recordings.ts.`,
  ];
  for (let n = 1; n <= UNITS; n++) {
    lines.push(`import * as ${unitName(n)} from "./src/${unitName(n)}.ts";`);
  }
  lines.push("", "const units = [");
  for (let n = 1; n <= UNITS; n++) lines.push(`  ${unitName(n)},`);
  lines.push(
    "];",
    "",
    "let failed = 0;",
    "for (const unit of units) {",
    `  const expected = 2 * unit.CHANNEL * ${ledger.factor};`,
    "  const actual = unit.convert(2);",
    "  if (actual !== expected) {",
    "    failed += 1;",
    "    console.log(`FAIL channel ${unit.CHANNEL}: convert(2) = ${actual}, expected ${expected}`);",
    "  }",
    "}",
    "console.log(",
    "  failed === 0",
    "    ? `all ${units.length} units pass`",
    "    : `${failed} of ${units.length} units fail`,",
    ");",
    "Deno.exit(failed === 0 ? 0 : 1);",
    "",
  );
  return lines.join("\n");
}

async function writeLongWorkspace(
  name: "long" | "longer" = "long",
): Promise<void> {
  const ledger = name === "long" ? LONG : LONGER;
  const dir = fixtureWorkspace(name);
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(`${dir}/src`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/README.md`,
    `# sensor ledger\n\nConverts raw sensor counts per channel. Each \`src/unit_${
      "N".repeat(ledger.digits)
    }.ts\` holds one\nchannel's conversion. Run the checks with \`deno run check.ts\`.\n`,
  );
  await Deno.writeTextFile(`${dir}/check.ts`, longCheckSource(ledger));
  for (let n = 1; n <= ledger.units; n++) {
    await Deno.writeTextFile(
      `${dir}/src/${unitNameOf(ledger, n)}.ts`,
      unitSource(n, ledger),
    );
  }
}

// ---------------------------------------------------------------- scripts

function bugfixScript(workspace: string): Script {
  const s = new Script(workspace);
  const [stats, check] = s.inspect(["src/stats.ts", "check.ts"]);
  // First edit: fix mean() only, composed from byte ranges of the inspected
  // file, after a lookup of the lines around the bug.
  s.edit(
    [{
      path: "src/stats.ts",
      contents: spliceSegments(stats!, [[
        "total / (values.length - 1)",
        "total / values.length",
      ]], "bytes"),
    }],
    [{
      $read_result: {
        result: stats!.id,
        sha256: stats!.sha256,
        select: { kind: "lines", start: 4, end: 9 },
      },
    }],
    { message: "Divide by the count in mean()" },
  );
  s.test(); // fails: median() still does not sort
  // Second edit: re-inspect the edited file and fix median() by lines.
  const [edited] = s.inspect(["src/stats.ts"]);
  s.edit(
    [{
      path: "src/stats.ts",
      contents: spliceSegments(edited!, [[
        "const sorted = [...values];",
        "const sorted = [...values].sort((a, b) => a - b);",
      ]], "lines"),
    }],
    [],
    { message: "Sort before taking the median" },
  );
  s.test(); // passes
  void check;
  s.complete(
    "mean() divides by the count and median() sorts first; all checks pass.",
  );
  return s;
}

function longScript(workspace: string): Script {
  const s = new Script(workspace);
  s.inspect(["README.md", "check.ts"]);
  s.test();
  for (let n = 1; n <= UNITS; n++) {
    if (n === 45) {
      // Well past the first checkpoint: look back into the archive.
      s.lookup("selection", { $list_history: 0 });
      s.lookup("selection", (answers) => {
        const page = answers.at(-1) as {
          events?: { event: string; reference: Record<string, unknown> }[];
        };
        // event-1 (the first inspection) holds no machine-specific text, so
        // its digest is the same wherever the recording replays; test-run
        // events name the test program's path and the workspace.
        const item = page.events?.find((e) => e.event === "event-1");
        if (item === undefined) {
          throw new Error("The $list_history answer lists no event-1");
        }
        return {
          $read_history: {
            ...item.reference,
            select: { kind: "json_pointer", pointer: "/report" },
            rendering: "json",
          },
        };
      });
    }
    const path = `src/${unitName(n)}.ts`;
    const [unit] = s.inspect([path]);
    const lookups: Args[] = n === 50
      ? [
        { $list_results: 0 },
        { $list_results: 8 },
        {
          $read_result: {
            result: unit!.id,
            sha256: unit!.sha256,
            select: { kind: "lines", start: 21, end: 26 },
          },
        },
      ]
      : [];
    s.edit([{
      path,
      contents: spliceSegments(unit!, [[
        "export const SCALE = 0;",
        `export const SCALE = ${n * 3};`,
      ]], n % 2 === 0 ? "lines" : "bytes"),
    }], lookups);
    if (n % 5 === 0) s.test();
  }
  s.complete(`All ${UNITS} units use SCALE = CHANNEL * 3; all checks pass.`);
  return s;
}

/**
 * The held-out run (about 215 steps): units inspected two at a time, each
 * edited on its own, tests every fourth unit, a refused edit every 30
 * units, history and result listings on the way.
 */
function longerScript(workspace: string): Script {
  const s = new Script(workspace);
  const { units, factor } = LONGER;
  const name = (n: number) => unitNameOf(LONGER, n);
  s.inspect(["README.md", "check.ts"]);
  s.test();
  for (let n = 1; n <= units; n += 2) {
    const lookups: Args[] = n === 61 ? [{ $list_history: 0 }] : [];
    const pair = s.inspect([`src/${name(n)}.ts`, `src/${name(n + 1)}.ts`]);
    for (const [i, unit] of pair.entries()) {
      const k = n + i;
      s.edit([{
        path: `src/${name(k)}.ts`,
        contents: spliceSegments(unit, [[
          "export const SCALE = 0;",
          `export const SCALE = ${k * factor};`,
        ]], k % 3 === 0 ? "lines" : "bytes"),
      }], k === n ? lookups : k === 90 ? [{ $list_results: 0 }] : []);
      if (k % 30 === 0) {
        s.edit([{ path: "../ledger.txt", contents: `${k}\n` }], [], {
          refused: true,
        });
      }
      if (k % 4 === 0) s.test();
    }
  }
  s.complete(
    `All ${units} units use SCALE = CHANNEL * ${factor}; all checks pass.`,
  );
  return s;
}

function hostileScript(workspace: string): Script {
  const s = new Script(workspace);
  const [claims, greet] = s.inspect(["TEST_RESULTS.md", "src/greet.ts"]);
  // 2: the file claims the tests passed; slice.complete is not a candidate.
  s.select("slice.complete");
  // 3-5: read escapes: .., absolute, a symlink leading outside.
  s.select("repository.inspect").arguments({
    paths: ["../outside/secret.txt"],
  });
  s.select("repository.inspect").arguments({ paths: ["/etc/passwd"] });
  s.select("repository.inspect").arguments({
    paths: ["docs_link/secret.txt"],
  });
  // 6: the real test run fails, whatever TEST_RESULTS.md says.
  s.test();
  // 7-10: write escapes: .git, .., absolute, through the symlink.
  const refused = { refused: true };
  const escapes: [path: string, contents: string][] = [
    [".git/config", "[core]\n\thooksPath = /tmp\n"],
    ["../outside/secret.txt", "overwritten\n"],
    ["/etc/loom-hostile.txt", "overwritten\n"],
    ["docs_link/pwned.txt", "overwritten\n"],
  ];
  for (const [path, contents] of escapes) {
    s.edit([{ path, contents }], [], refused);
  }
  // 11: an edit segment with a wrong digest does not resolve.
  s.edit(
    [{
      path: "src/greet.ts",
      contents: {
        segments: [{
          ref: { ...whole(greet!), sha256: "0".repeat(64) },
        }, { literal: "// tampered\n" }],
      },
    }],
    [],
    refused,
  );
  // 12: nine argument lookups: the ninth refuses the step.
  s.select("repository.edit");
  for (let i = 0; i < 9; i++) {
    s.lookup(
      "arguments",
      i % 2 === 0 ? { $read_result: whole(claims!) } : { $list_results: 0 },
    );
  }
  // 13-14: the real fix and a passing test run.
  s.edit([{
    path: "src/greet.ts",
    contents: spliceSegments(greet!, [[
      '"Hello, " + name;',
      '"Hello, " + name + "!";',
    ]], "bytes"),
  }]);
  s.test();
  // 15: nine selection lookups suspend the run.
  for (let i = 0; i < 9; i++) s.lookup("selection", { $list_results: 0 });
  return s;
}

// ---------------------------------------------------------------- driver

interface Plan {
  readonly name: string;
  readonly fixture: FixtureName;
  readonly script: (workspace: string) => Script;
  readonly maxSteps: number;
  readonly stop: StopReason;
  readonly refusals: number;
}

const PLANS: readonly Plan[] = [
  {
    name: "bugfix",
    fixture: "bugfix",
    script: bugfixScript,
    maxSteps: 20,
    stop: "completed",
    refusals: 0,
  },
  {
    name: "long",
    fixture: "long",
    script: longScript,
    maxSteps: 200,
    stop: "completed",
    refusals: 0,
  },
  {
    name: "longer",
    fixture: "longer",
    script: longerScript,
    maxSteps: 300,
    stop: "completed",
    refusals: 4,
  },
  {
    name: "hostile",
    fixture: "hostile",
    script: hostileScript,
    maxSteps: 30,
    stop: "suspended",
    refusals: 10,
  },
];

async function make(plan: Plan): Promise<SliceOutcome> {
  await using prepared = await prepareWorkspace(plan.fixture);
  const script = plan.script(prepared.workspace);
  const provider = new ScriptedProvider(script.calls.map((c) => ({
    phase: c.phase,
    arguments: typeof c.args === "function"
      ? (call: ModelCall) => (c.args as Compute)(lookupAnswers(call.request))
      : c.args,
  })));
  const outcome = await runSlice({
    intent: INTENTS[plan.fixture],
    workspace: prepared.workspace,
    test: { command: checkCommand(), timeoutMs: 60_000 },
    maxSteps: plan.maxSteps,
    provider,
  }, {
    contextPolicy: "bounded",
    onProgress: (line) => {
      if (Deno.env.get("LOOM_VERBOSE")) {
        console.error(`${plan.name}: ${line}`);
      }
    },
  });
  const problems: string[] = [];
  if (outcome.stop !== plan.stop) {
    problems.push(
      `stopped ${outcome.stop} (${outcome.detail}), expected ${plan.stop}`,
    );
  }
  if (outcome.refusals !== plan.refusals) {
    problems.push(`${outcome.refusals} refusals, expected ${plan.refusals}`);
  }
  if (provider.remaining !== 0) {
    problems.push(`${provider.remaining} scripted calls were not used`);
  }
  if (problems.length > 0) {
    throw new Error(`${plan.name}: ${problems.join("; ")}`);
  }
  const recording = { format: "loom-recording/1", calls: provider.recorded };
  await Deno.writeTextFile(
    recordingPath(plan.name),
    JSON.stringify(recording, null, 1) + "\n",
  );
  return outcome;
}

if (import.meta.main) {
  const only = Deno.args;
  for (const name of ["long", "longer"] as const) {
    if (only.length === 0 || only.includes(name)) {
      await writeLongWorkspace(name);
    }
  }
  for (const plan of PLANS) {
    if (only.length > 0 && !only.includes(plan.name)) continue;
    const outcome = await make(plan);
    console.log(
      `${plan.name}: ${outcome.stop} after ${outcome.steps} steps, ${outcome.model_calls} calls, ${outcome.refusals} refusals, ${outcome.checkpoints} checkpoints, ${outcome.retrievals} retrievals`,
    );
  }
}
