/**
 * `loom cost`: prices a recorded run offline — replayed under a context
 * policy on a temporary copy of the workspace, with the bodies the chosen
 * provider would send, tokens counted by a real tokenizer and the
 * provider's cache rules simulated.
 *
 * @module
 */
import type { ContextPolicy } from "../briefing/briefing.ts";
import type { RunOptions } from "../slice/request.ts";
import {
  DEFAULT_PRICES,
  modelPrice,
  parsePriceOverrides,
  type PriceTable,
} from "../cost/prices.ts";
import { DEFAULT_CALL_INTERVAL_MS, replayRecording } from "../cost/replay.ts";
import { type CostReport, priceRun } from "../cost/simulate.ts";
import type { ProviderWire } from "../providers/request_parts.ts";
import { ProviderError } from "../providers/provider_error.ts";
import {
  defined,
  parseDuration,
  parseFlags,
  positiveInteger,
  readFlagFile,
  required,
} from "./_args.ts";
import { type Command, commandOf, help, type Parsed } from "./_command.ts";
import {
  parseSlice,
  SLICE_OPTIONS,
  type SliceArguments,
} from "./_run_flags.ts";
import { type CliIo, ExitCode, UsageError } from "./_io.ts";

/** The help text of `loom cost`. */
export const COST_HELP =
  `Usage: loom cost --recording PATH --workspace DIR (--intent TEXT | --intent-file F) --model SPEC [options]

Replays a recorded run offline on a temporary copy of DIR (DIR is never
changed) and prices the requests the provider of SPEC would receive: input
tokens, cache reads and writes, uncached and output tokens, and dollars, per
request and in total.

Options:
  --recording PATH         The loom-recording/1 file (e.g. from loom run --record)
  --workspace DIR          The workspace the recording was made on
  --intent TEXT            The task the recording was made with
  --intent-file F          Read the task from file F instead
  --model SPEC             anthropic:MODEL or openai:MODEL to price for
  --test "CMD ARGS"        Test command of the recorded run
  --test-timeout DUR       Test timeout (default 120s)
  --max-steps N            Step budget (default 200)
  --context-policy P       legacy (default) or bounded
  --compare                Price legacy and bounded side by side
  --roll-batch N           Legacy entries dropped at once (default 32)
  --retire-target BYTES    Bounded retirement target (default 16384)
  --retire-above BYTES     Bounded retirement trigger (default 32768)
  --prices FILE            Price overrides: {"version", "models": {NAME: {…}}}
  --call-interval DUR      Assumed time between model calls, for cache
                           expiry (default 5s)
  --per-request            Also print one line per request
  --json                   Print the figures as JSON
  -h, --help               Show this help

Claude token counts are an estimate (no official offline tokenizer); the
error bound is printed with the figures. Progress: stderr.
`;

/** Parsed `loom cost` arguments. */
export interface CostArguments
  extends Omit<SliceArguments, "contextPolicy" | "maxSteps"> {
  readonly recording: string;
  readonly wire: ProviderWire;
  readonly maxSteps: number;
  readonly policies: readonly ContextPolicy[];
  readonly limits: NonNullable<RunOptions["briefingLimits"]>;
  readonly prices?: string;
  readonly callIntervalMs: number;
  readonly perRequest: boolean;
  readonly json: boolean;
}

/**
 * Parses `loom cost` arguments; reads nothing.
 *
 * @param args Arguments after `cost`.
 * @returns The arguments, or the help text.
 * @throws {UsageError} On unknown, missing or malformed options.
 */
export function parseCostArguments(
  args: readonly string[],
): Parsed<CostArguments> {
  const { values } = parseFlags(args, {
    recording: { type: "string" },
    ...SLICE_OPTIONS,
    compare: { type: "boolean", default: false },
    "roll-batch": { type: "string" },
    "retire-target": { type: "string" },
    "retire-above": { type: "string" },
    prices: { type: "string" },
    "call-interval": { type: "string" },
    "per-request": { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  });
  if (values.help) return help(COST_HELP);
  const recording = required(values.recording, "--recording PATH");
  if (values["context-policy"] !== undefined && values.compare) {
    throw new UsageError(
      "usage",
      "Give --context-policy or --compare, not both",
    );
  }
  const { model: spec, contextPolicy: policy, ...slice } = parseSlice(values);
  const match = /^(anthropic|openai):(.+)$/.exec(spec);
  if (match === null) {
    throw new UsageError(
      "usage",
      `Invalid --model ${spec}: loom cost prices anthropic:MODEL or openai:MODEL`,
    );
  }
  return {
    recording,
    ...slice,
    wire: match[1] as ProviderWire,
    model: match[2]!,
    maxSteps: slice.maxSteps ?? 200,
    policies: values.compare ? ["legacy", "bounded"] : [policy ?? "legacy"],
    limits: defined({
      transcriptRollBatch: positiveInteger(
        values["roll-batch"],
        "--roll-batch",
      ),
      retireTargetBytes: positiveInteger(
        values["retire-target"],
        "--retire-target",
      ),
      retireAboveBytes: positiveInteger(
        values["retire-above"],
        "--retire-above",
      ),
    }),
    ...defined({ prices: values.prices }),
    callIntervalMs: parseDuration(values["call-interval"], "--call-interval") ??
      DEFAULT_CALL_INTERVAL_MS,
    perRequest: values["per-request"],
    json: values.json,
  };
}

/** One priced policy of a `loom cost` run. */
export interface CostRun {
  /** The policy replayed. */
  readonly policy: ContextPolicy;
  /** How the replay ended (`completed` when the recording fits the policy). */
  readonly stop: string;
  /** The figures. */
  readonly cost: CostReport;
}

async function cost(a: CostArguments, io: CliIo): Promise<number> {
  const intent = "text" in a.intent
    ? a.intent.text
    : await readFlagFile(a.intent.file, "--intent-file");
  let prices: PriceTable = DEFAULT_PRICES;
  if (a.prices !== undefined) {
    const text = await readFlagFile(a.prices, "--prices");
    try {
      prices = parsePriceOverrides(text, a.prices);
    } catch (error) {
      throw new UsageError("usage", (error as Error).message);
    }
  }
  const stat = await Deno.stat(a.workspace).catch(() => null);
  if (stat === null || !stat.isDirectory) {
    throw new UsageError(
      "usage",
      `Cannot use --workspace ${a.workspace}: it is not a directory`,
    );
  }
  // Fails on an unknown model before any replay.
  modelPrice(prices, a.model);
  const runs: CostRun[] = [];
  for (const policy of a.policies) {
    const replayed = await replayRecording({
      recording: a.recording,
      workspace: a.workspace,
      intent,
      ...defined({ test: a.test }),
      maxSteps: a.maxSteps,
      policy,
      briefingLimits: a.limits,
      wire: a.wire,
      model: a.model,
      callIntervalMs: a.callIntervalMs,
      onCall: (n) => {
        if (n % 50 === 0) io.err(`loom cost: ${policy}: ${n} calls replayed\n`);
      },
    }).catch((error: unknown) => {
      if (
        error instanceof ProviderError && error.code === "recording_invalid"
      ) {
        throw new UsageError("usage", error.message);
      }
      throw error;
    });
    const { stop, detail } = replayed.outcome;
    io.err(
      `loom cost: ${policy}: ${replayed.calls.length} calls replayed (${stop}${
        stop === "completed" ? "" : `: ${detail}`
      }); pricing\n`,
    );
    runs.push({
      policy,
      stop: replayed.outcome.stop,
      cost: await priceRun(replayed.calls, {
        wire: a.wire,
        model: a.model,
        prices,
      }),
    });
  }
  io.out(
    a.json
      ? `${JSON.stringify({ runs }, null, 2)}\n`
      : costText(runs, a.perRequest),
  );
  return runs.every((r) => r.stop === "completed")
    ? ExitCode.ok
    : ExitCode.stopped;
}

const usd = (n: number): string => `$${n.toFixed(4)}`;
const int = (n: number): string => n.toLocaleString("en-US");

/**
 * The human table of priced runs, one column per policy.
 *
 * @param runs The priced runs.
 * @param perRequest Whether to add one line per request.
 * @returns The text.
 */
export function costText(
  runs: readonly CostRun[],
  perRequest: boolean,
): string {
  const first = runs[0];
  if (first === undefined) return "";
  const c = first.cost;
  const lines = [
    `loom cost: ${c.provider}:${c.model} priced as ${c.priced_as} (${c.prices})`,
    `tokens: ${c.tokenizer.name}${
      c.tokenizer.estimate
        ? `, an estimate within ±${
          c.tokenizer.errorBound * 100
        }% (${c.tokenizer.basis})`
        : ""
    }`,
    "",
  ];
  const rows: [string, (r: CostRun) => string][] = [
    ["replay", (r) => r.stop],
    ["requests", (r) => int(r.cost.requests.length)],
    ["input tokens", (r) => int(r.cost.total.input_tokens)],
    ["cache reads", (r) => int(r.cost.total.cache_read_tokens)],
    ["cache writes", (r) => int(r.cost.total.cache_write_tokens)],
    ["uncached", (r) => int(r.cost.total.uncached_tokens)],
    ["output tokens", (r) => int(r.cost.total.output_tokens)],
    [
      "cache hit ratio",
      (r) => `${(r.cost.total.hit_ratio * 100).toFixed(1)}%`,
    ],
    ["input $", (r) => usd(r.cost.total.input_dollars)],
    ["output $", (r) => usd(r.cost.total.output_dollars)],
    ["total $", (r) => usd(r.cost.total.dollars)],
  ];
  lines.push(
    ["", ...runs.map((r) => r.policy)].map((x, i) =>
      i === 0 ? x.padEnd(16) : x.padStart(16)
    ).join(""),
  );
  for (const [label, value] of rows) {
    lines.push(
      [label.padEnd(16), ...runs.map((r) => ` ${value(r)}`.padStart(16))]
        .join(""),
    );
  }
  if (perRequest) {
    for (const run of runs) {
      lines.push(
        "",
        `${run.policy}: request input read write uncached output $`,
      );
      for (const [i, r] of run.cost.requests.entries()) {
        lines.push(
          `${
            i + 1
          } ${r.input_tokens} ${r.cache_read_tokens} ${r.cache_write_tokens} ${r.uncached_tokens} ${r.output_tokens} ${
            r.dollars.toFixed(6)
          }`,
        );
      }
    }
  }
  return `${lines.join("\n")}\n`;
}

/** `loom cost`: exit 0 when every replay completed as recorded. */
export const costCommand: Command = commandOf(parseCostArguments, cost);
