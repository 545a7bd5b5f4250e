/**
 * The adapters' cost benchmark (docs/performance.md, docs/cost.md): one
 * scripted 100-turn tool conversation replayed through the AI SDK (`ai` with
 * `@ai-sdk/anthropic`) and through the Anthropic SDK's tool runner, each
 * three ways —
 *
 * - **plain**: the whole history every request, with the cache breakpoints a
 *   careful developer places by hand (the system prompt and the newest
 *   message);
 * - **the library's own trimming**: the AI SDK's `pruneMessages` in
 *   `prepareStep`, and Anthropic's context editing (`clear_tool_uses_20250919`,
 *   sent in the body and applied here as the API documents it, since it runs
 *   on Anthropic's servers), both with the same hand-placed breakpoints;
 * - **Loom's adapter**: `loomTools`, `retrievalTools` and `loomMiddleware` /
 *   `prepare` with their defaults (8 KiB offload, 48 KiB budget).
 *
 * The SDKs send real HTTP bodies to the strict fake server
 * (`tests/adapters/_scripted_server.ts`, which refuses a body that breaks the
 * services' rules); the bodies are priced with `lib/cost` (Claude Sonnet 4.5
 * list prices, Anthropic's cache simulated as documented, 5 s between calls)
 * and every result Loom retired or offloaded is read back by its reference
 * and digest.
 *
 * ```sh
 * deno run --allow-read --allow-write --allow-env --allow-sys=hostname --allow-net=127.0.0.1 tools/bench_adapters.ts [--json] [--dump DIR]
 * ```
 *
 * @module
 */
import {
  generateText,
  jsonSchema,
  type ModelMessage,
  pruneMessages,
  stepCountIs,
  tool,
  wrapLanguageModel,
} from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import Anthropic from "@anthropic-ai/sdk";
import type { Middleware } from "@anthropic-ai/sdk";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";
import {
  loomMiddleware,
  loomTools as aiLoomTools,
  retrievalTools as aiRetrievalTools,
} from "../ai_sdk.ts";
import {
  loomTools as anthropicLoomTools,
  prepare,
  retrievalTools as anthropicRetrievalTools,
} from "../anthropic.ts";
import { ResultStore } from "../lib/store/result_store.ts";
import { Retrieval } from "../lib/reference/retrieval.ts";
import { sha256Hex } from "../lib/store/digest.ts";
import { DEFAULT_PRICES } from "../lib/cost/prices.ts";
import { type CostReport, priceRun } from "../lib/cost/simulate.ts";
import { claudeCounter, type TokenCounter } from "../lib/cost/tokens.ts";
import {
  type Move,
  type ScriptedServer,
  scriptedServer,
  toolResults,
  type Wire,
} from "../tests/adapters/_scripted_server.ts";
import { referencesIn } from "../tests/adapters/_scenario.ts";

/** Tool turns of the conversation. */
export const TURNS = 100;
/** Every tenth turn returns a large result. */
const LARGE_EVERY = 10;
/** The model priced. */
const MODEL = "claude-sonnet-4-5";
/** Assumed time between model calls (the simulator's default). */
const CALL_INTERVAL_MS = 5_000;
const SYSTEM =
  "You are a research assistant. Call probe once per turn with the next turn number, then answer.";
const PROMPT = "Survey the hundred result pages, one probe per turn.";
/** `pruneMessages`: keep the tool calls of the last 10 messages (5 turns). */
export const PRUNE_KEEP_MESSAGES = 10;
/**
 * Context editing as the benchmark configures it. Anthropic's defaults are
 * a 100,000-token trigger, keep 3 tool uses, no `clear_at_least`; the
 * benchmark prices both the defaults and a setting tuned for cost.
 */
export const CONTEXT_EDITS = {
  defaults: { trigger: 100_000, keep: 3, clearAtLeast: 0 },
  tuned: { trigger: 30_000, keep: 3, clearAtLeast: 10_000 },
} as const;
/**
 * What a cleared result reads as (the API's own text is not documented;
 * any short text prices the same within a few tokens).
 */
const CLEARED = "[Tool result cleared to save context]";

/** The result of the probe at `turn`: about 30 KB every tenth turn, else 3 KB. */
export function probeResult(turn: number): string {
  const rows = (turn + 1) % LARGE_EVERY === 0 ? 150 : 15;
  return JSON.stringify({
    turn,
    page: `results/${turn}`,
    rows: Array.from({ length: rows }, (_, i) => ({
      id: `${turn}-${i}`,
      title: `Finding ${i} of page ${turn}`,
      summary: `Observation ${i} on page ${turn}: the measured value was ${
        (turn * 37 + i * 11) % 997
      } units, within the expected band for this series.`,
      score: ((turn * 13 + i * 7) % 100) / 100,
      tags: ["survey", i % 2 === 0 ? "even" : "odd", `page-${turn}`],
    })),
  });
}

/** What the model did, call by call (for output tokens). */
type Replies = unknown[];

/**
 * The scripted model: probe turns 0…99, one per request; when the newest
 * tool result is a Loom descriptor of an offloaded result, first read one
 * value of it by pointer (what a model reading a large result would do —
 * requests only Loom's runs pay); then answer.
 */
function conversation(
  replies: Replies,
): (body: Record<string, unknown>, wire: Wire) => Move {
  let probes = 0;
  const read = new Set<string>();
  return (body, wire) => {
    const newest = toolResults(body, wire).at(-1);
    const descriptor = newest === undefined ? undefined : offloaded(newest);
    let move: Move;
    if (descriptor !== undefined && !read.has(descriptor.result)) {
      read.add(descriptor.result);
      move = {
        call: {
          name: "read_result",
          input: {
            reference: {
              ...descriptor,
              select: { kind: "json_pointer", pointer: "/rows/7/summary" },
            },
          },
        },
      };
    } else if (probes < TURNS) {
      move = { call: { name: "probe", input: { turn: probes++ } } };
    } else {
      move = { text: "finished" };
    }
    replies.push("call" in move ? move.call : move.text);
    return move;
  };
}

/** The whole-result reference of a full (not retired) descriptor. */
function offloaded(
  text: string,
): { result: string; sha256: string } | undefined {
  try {
    const value = JSON.parse(text) as {
      preview?: unknown;
      reference?: { result: string; sha256: string };
    };
    if (value.preview === undefined || value.reference === undefined) {
      return undefined;
    }
    return { result: value.reference.result, sha256: value.reference.sha256 };
  } catch {
    return undefined;
  }
}

const PROBE_SCHEMA = {
  type: "object",
  properties: { turn: { type: "integer" } },
  required: ["turn"],
  additionalProperties: false,
} as const;

/** One replayed run: the bodies the fake server received, and the replies. */
interface Run {
  readonly bodies: Record<string, unknown>[];
  readonly replies: Replies;
  readonly store?: ResultStore;
}

type AiWay =
  | "plain"
  | "plain, no breakpoints"
  | "pruneMessages"
  | "pruneMessages, no breakpoints"
  | "loom";
type AnthropicWay = "plain" | "clear_tool_uses" | "loom";

const EPHEMERAL = { anthropic: { cacheControl: { type: "ephemeral" } } };

/** The breakpoint a developer places by hand: on the newest message only. */
function markNewest(messages: ModelMessage[]): ModelMessage[] {
  return messages.map((m, i) => {
    const { providerOptions: _, ...rest } = m;
    return (i === messages.length - 1
      ? { ...rest, providerOptions: EPHEMERAL }
      : rest) as ModelMessage;
  });
}

async function runAiSdk(way: AiWay): Promise<Run> {
  const replies: Replies = [];
  await using server = scriptedServer(conversation(replies));
  const base = createAnthropic({ baseURL: `${server.url}/v1`, apiKey: "x" })(
    MODEL,
  );
  const probe = tool({
    inputSchema: jsonSchema<{ turn: number }>(PROBE_SCHEMA),
    execute: ({ turn }) => JSON.parse(probeResult(turn)),
  });
  const store = new ResultStore();
  const common = {
    prompt: PROMPT,
    stopWhen: stepCountIs(TURNS + 30),
    maxRetries: 0,
  };
  if (way === "loom") {
    const result = await generateText({
      ...common,
      instructions: SYSTEM,
      model: wrapLanguageModel({
        model: base,
        middleware: loomMiddleware({ store }),
      }),
      tools: {
        ...aiLoomTools({ probe }, { store }),
        ...aiRetrievalTools(store),
      },
    });
    if (result.text !== "finished") throw new Error(`loom: ${result.text}`);
  } else {
    const marks = !way.endsWith("no breakpoints");
    const result = await generateText({
      ...common,
      instructions: marks
        ? { role: "system", content: SYSTEM, providerOptions: EPHEMERAL }
        : SYSTEM,
      model: base,
      tools: { probe },
      prepareStep: ({ messages }) => {
        const kept = way.startsWith("pruneMessages")
          ? pruneMessages({
            messages,
            toolCalls: `before-last-${PRUNE_KEEP_MESSAGES}-messages`,
          })
          : messages;
        return { messages: marks ? markNewest(kept) : kept };
      },
    });
    if (result.text !== "finished") throw new Error(`${way}: ${result.text}`);
  }
  return finishedRun(way, server, replies, store);
}

/** The run's bodies and replies (and Loom's store) once no body was refused. */
function finishedRun(
  way: string,
  server: ScriptedServer,
  replies: Replies,
  store: ResultStore,
): Run {
  if (server.refused.length > 0) {
    throw new Error(`${way}: refused ${JSON.stringify(server.refused[0])}`);
  }
  return {
    bodies: server.received.map((r) => r.body),
    replies,
    ...(way === "loom" ? { store } : {}),
  };
}

type Block = Record<string, unknown>;

/** The hand-placed breakpoints: the system block and the newest block. */
function handMarked(body: Block): Block {
  const messages = (body["messages"] as { role: string; content: unknown }[])
    .map((m, i, all) => {
      const blocks: Block[] = typeof m.content === "string"
        ? [{ type: "text", text: m.content }]
        : (m.content as Block[]).map(({ cache_control: _, ...b }) => b);
      if (i === all.length - 1) {
        blocks[blocks.length - 1] = {
          ...blocks.at(-1),
          cache_control: { type: "ephemeral" },
        };
      }
      return { ...m, content: blocks };
    });
  return {
    ...body,
    system: [{
      type: "text",
      text: SYSTEM,
      cache_control: { type: "ephemeral" },
    }],
    messages,
  };
}

function bodyMiddleware(shape: (body: Block) => Promise<Block>): Middleware {
  return async (request, next) =>
    typeof request.body !== "string" ? next(request) : next({
      ...request,
      body: JSON.stringify(await shape(JSON.parse(request.body))),
    });
}

async function runAnthropic(
  way: AnthropicWay,
  edit: (typeof CONTEXT_EDITS)[keyof typeof CONTEXT_EDITS] =
    CONTEXT_EDITS.defaults,
): Promise<Run> {
  const replies: Replies = [];
  await using server = scriptedServer(conversation(replies));
  const store = new ResultStore();
  const client = new Anthropic({
    baseURL: server.url,
    apiKey: "x",
    maxRetries: 0,
    middleware: [
      bodyMiddleware(async (body) =>
        way === "loom" ? await prepare(body, { store }) : handMarked(body)
      ),
    ],
  });
  const probe = betaTool({
    name: "probe",
    description: "One result page",
    inputSchema: PROBE_SCHEMA,
    run: ({ turn }) => probeResult(turn),
  });
  const tools = way === "loom"
    ? [
      ...anthropicLoomTools([probe], { store }),
      ...anthropicRetrievalTools(store),
    ]
    : [probe];
  const final = await client.beta.messages.toolRunner({
    model: MODEL,
    max_tokens: 1024,
    system: SYSTEM,
    messages: [{ role: "user", content: PROMPT }],
    tools,
    max_iterations: TURNS + 30,
    thread: false,
    ...(way === "clear_tool_uses"
      ? {
        betas: ["context-management-2025-06-27"],
        context_management: {
          edits: [{
            type: "clear_tool_uses_20250919" as const,
            trigger: { type: "input_tokens" as const, value: edit.trigger },
            keep: { type: "tool_uses" as const, value: edit.keep },
            ...(edit.clearAtLeast === 0 ? {} : {
              clear_at_least: {
                type: "input_tokens" as const,
                value: edit.clearAtLeast,
              },
            }),
          }],
        },
      }
      : {}),
  });
  const text = final.content.map((b) => b.type === "text" ? b.text : "").join(
    "",
  );
  if (text !== "finished") throw new Error(`${way}: ${text}`);
  return finishedRun(way, server, replies, store);
}

/**
 * Context editing as Anthropic documents it, applied to one body the way
 * the API applies it before the prompt reaches the model (and its cache):
 * when the prompt passes `trigger` input tokens, the oldest tool results —
 * all but the newest `keep` — are replaced by a placeholder, provided that
 * clears at least `clearAtLeast` tokens; the client keeps the full history,
 * so every request is edited afresh.
 *
 * @returns The edited body and how many results it cleared.
 */
function contextEdited(
  body: Block,
  edit: { trigger: number; keep: number; clearAtLeast: number },
  counter: TokenCounter,
): { body: Block; cleared: number } {
  const { context_management: _, ...sent } = body;
  if (promptTokens(sent, counter) <= edit.trigger) {
    return { body: sent, cleared: 0 };
  }
  const messages = sent["messages"] as { role: string; content: unknown }[];
  const results: Block[] = [];
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Block[]) {
      if (b["type"] === "tool_result") results.push(b);
    }
  }
  const clear = new Set(
    results.slice(0, Math.max(0, results.length - edit.keep)),
  );
  let freed = 0;
  for (const b of clear) {
    freed += counter.count(String(b["content"])) - counter.count(CLEARED);
  }
  if (clear.size === 0 || freed < edit.clearAtLeast) {
    return { body: sent, cleared: 0 };
  }
  return {
    body: {
      ...sent,
      messages: messages.map((m) =>
        Array.isArray(m.content)
          ? {
            ...m,
            content: (m.content as Block[]).map((b) =>
              clear.has(b) ? { ...b, content: CLEARED } : b
            ),
          }
          : m
      ),
    },
    cleared: clear.size,
  };
}

/**
 * The input tokens of an Anthropic body as `lib/cost` counts them (tools,
 * system, and each block's text, tool call or tool result content), for
 * the context-editing trigger.
 */
function promptTokens(body: Block, counter: TokenCounter): number {
  let tokens = counter.count(JSON.stringify(body["tools"] ?? []));
  const system = body["system"];
  tokens += counter.count(
    typeof system === "string" ? system : JSON.stringify(system ?? ""),
  );
  for (const m of body["messages"] as { content: unknown }[]) {
    const blocks = Array.isArray(m.content)
      ? m.content as Block[]
      : [{ text: String(m.content) }];
    for (const b of blocks) {
      tokens += counter.count(
        typeof b["text"] === "string"
          ? b["text"]
          : typeof b["content"] === "string"
          ? b["content"]
          : JSON.stringify(b["input"] ?? b["content"] ?? ""),
      );
    }
  }
  return tokens;
}

function price(
  bodies: readonly Block[],
  replies: readonly unknown[],
): Promise<CostReport> {
  return priceRun(
    bodies.map((body, i) => ({
      body,
      atMs: i * CALL_INTERVAL_MS,
      reply: replies[i] ?? null,
    })),
    { wire: "anthropic", model: MODEL, prices: DEFAULT_PRICES },
  );
}

/** One row of the table. */
export interface Row {
  readonly sdk: string;
  readonly way: string;
  readonly requests: number;
  readonly lastRequestTokens: number;
  readonly inputTokens: number;
  readonly hitRatio: number;
  readonly dollars: number;
  /** Results whose content is gone from the last request. */
  readonly outOfPrompt: number;
  /** Of those, how many read back by reference and digest. */
  readonly retrievable: number;
}

/**
 * Reads back every result that is not in the last request: by its
 * reference and digest when Loom retired or offloaded it; a result
 * trimmed or cleared by the library is simply gone.
 */
function retrievability(
  last: Block,
  store: ResultStore | undefined,
): { outOfPrompt: number; retrievable: number } {
  const text = JSON.stringify(last);
  const references = referencesIn(text);
  const byDigest = new Map(
    references.map((r) => [String(r["sha256"]), r] as const),
  );
  const retrieval = store === undefined ? undefined : new Retrieval(store);
  let outOfPrompt = 0;
  let retrievable = 0;
  for (let turn = 0; turn < TURNS; turn++) {
    const original = probeResult(turn);
    // Inline: its last row (never in a descriptor's preview) is there.
    const rows = (JSON.parse(original) as { rows: { summary: string }[] })
      .rows;
    if (text.includes(rows.at(-1)!.summary)) continue;
    outOfPrompt += 1;
    const digest = sha256Hex(new TextEncoder().encode(original));
    const reference = byDigest.get(digest);
    if (reference === undefined || retrieval === undefined) continue;
    const read = retrieval.read({ reference });
    if (!read.ok) continue;
    let whole = String(read.structured["selected_text"]);
    let next = read.structured["next"];
    while (next !== undefined) {
      const more = retrieval.read({ reference: next });
      if (!more.ok) break;
      whole += String(more.structured["selected_text"]);
      next = more.structured["next"];
    }
    if (whole === original) retrievable += 1;
  }
  return { outOfPrompt, retrievable };
}

/** `--dump DIR`: where each variant's bodies (as priced) are written. */
const DUMP = Deno.args.includes("--dump")
  ? Deno.args[Deno.args.indexOf("--dump") + 1]
  : undefined;

async function row(
  sdk: string,
  way: string,
  run: Run,
  bodies: readonly Block[] = run.bodies,
): Promise<Row> {
  if (DUMP !== undefined) {
    await Deno.mkdir(DUMP, { recursive: true });
    await Deno.writeTextFile(
      `${DUMP}/${sdk}-${way.replaceAll(/[^a-z_]+/gi, "-")}.jsonl`,
      bodies.map((b) => JSON.stringify(b)).join("\n") + "\n",
    );
  }
  const report = await price(bodies, run.replies);
  const last = report.requests.at(-1)!;
  return {
    sdk,
    way,
    requests: bodies.length,
    lastRequestTokens: last.input_tokens,
    inputTokens: report.total.input_tokens,
    hitRatio: report.total.hit_ratio,
    dollars: report.total.dollars,
    ...retrievability(bodies.at(-1)!, run.store),
  };
}

/** Runs every variant and prices it. */
export async function benchmark(): Promise<Row[]> {
  const counter = await claudeCounter();
  const rows: Row[] = [];
  const aiWays = [
    "plain",
    "plain, no breakpoints",
    "pruneMessages",
    "pruneMessages, no breakpoints",
    "loom",
  ] as const;
  for (const way of aiWays) {
    rows.push(await row("ai", way, await runAiSdk(way)));
  }
  for (const way of ["plain", "clear_tool_uses", "loom"] as const) {
    if (way !== "clear_tool_uses") {
      rows.push(await row("anthropic", way, await runAnthropic(way)));
      continue;
    }
    for (const [name, edit] of Object.entries(CONTEXT_EDITS)) {
      const run = await runAnthropic(way, edit);
      const edited: Block[] = [];
      for (const body of run.bodies) {
        edited.push(contextEdited(body, edit, counter).body);
      }
      rows.push(await row("anthropic", `${way} (${name})`, run, edited));
    }
  }
  return rows;
}

function table(rows: readonly Row[]): string {
  const plain = new Map(
    rows.filter((r) => r.way === "plain").map((r) => [r.sdk, r.dollars]),
  );
  const lines = [
    "| SDK | way | requests | last request (tokens) | input tokens | cache hits | $ | × plain | results out of the prompt | retrievable |",
    "| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: |",
  ];
  const n = (x: number) => x.toLocaleString("en-US");
  for (const r of rows) {
    lines.push(
      `| ${
        r.sdk === "ai" ? "AI SDK" : "Anthropic SDK"
      } | ${r.way} | ${r.requests} | ${n(r.lastRequestTokens)} | ${
        n(r.inputTokens)
      } | ${(r.hitRatio * 100).toFixed(1)}% | $${r.dollars.toFixed(3)} | ${
        (r.dollars / plain.get(r.sdk)!).toFixed(2)
      }× | ${r.outOfPrompt} | ${r.retrievable} |`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const rows = await benchmark();
  if (Deno.args.includes("--json")) console.log(JSON.stringify(rows, null, 2));
  else console.log(table(rows));
}
