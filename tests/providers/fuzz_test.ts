/**
 * A seeded fuzz of a few hundred hostile replies through the real OpenAI
 * client and the slice: every run ends by itself with a valid report, no
 * internal error, and no wait beyond the configured model timeout.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { ACTIONS } from "../../lib/slice/actions.ts";
import {
  chatCompletion,
  drip,
  type HostileContext,
  hostileServer,
  json,
  raw,
  stall,
} from "./_hostile_server.ts";
import { forcedTool, isSelection, runAgainst } from "./_slice_server.ts";

const SEED = 16;
const REPLIES = 300;
const TIMEOUT_MS = 300;
/** Per-run slack beyond the model timeouts, for a loaded 2-core machine. */
const SLACK_MS = 10_000;
const STOPS = new Set([
  "completed",
  "step_budget",
  "refused",
  "suspended",
  "capacity",
  "provider_error",
  "interrupted",
]);
const INTERNAL =
  /Internal failure|internal error|RangeError|TypeError|SyntaxError|Cannot read|is not a function|Maximum call stack/;

type Reply = (
  tool: string,
  context: HostileContext,
) => Response | Promise<Response>;

const text = fc.string({ unit: "binary", maxLength: 80 });
const name = fc.oneof(
  fc.constantFrom(...ACTIONS.map((a) => a.name)),
  text,
  fc.string({ minLength: 1000, maxLength: 5000 }),
);
const deepArgs = fc.integer({ min: 60, max: 100_000 }).map((n) =>
  "[".repeat(n) + "]".repeat(n)
);
const lookup = fc.oneof(
  fc.record({ $list_results: fc.oneof(fc.nat(), fc.jsonValue()) }),
  fc.record({
    $read_result: fc.record({
      result: fc.oneof(fc.constant("result-1"), text),
      sha256: fc.oneof(fc.constant("0".repeat(64)), text),
      select: fc.jsonValue(),
    }),
  }),
  fc.record({ $read_history: fc.jsonValue() }),
);

const reply: fc.Arbitrary<Reply> = fc.oneof(
  // Well-formed calls with odd contents.
  {
    weight: 4,
    arbitrary: name.map((a): Reply => (t) =>
      json(chatCompletion(t, JSON.stringify({ action: a })))
    ),
  },
  {
    weight: 3,
    arbitrary: fc.jsonValue().map((v): Reply => (t) =>
      json(chatCompletion(t, JSON.stringify(v)))
    ),
  },
  {
    weight: 2,
    arbitrary: lookup.map((v): Reply => (t) =>
      json(chatCompletion(t, JSON.stringify(v)))
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant<Reply>((t, c) =>
      json(chatCompletion(
        t,
        isSelection(c.body)
          ? '{"action":"slice.complete"}'
          : '{"summary":"done"}',
      ))
    ),
  },
  // Protocol breaks.
  {
    weight: 2,
    arbitrary: text.map((s): Reply => (t) => json(chatCompletion(t, s))),
  },
  {
    weight: 1,
    arbitrary: deepArgs.map((s): Reply => (t) => json(chatCompletion(t, s))),
  },
  {
    weight: 1,
    arbitrary: name.map((n): Reply => () => json(chatCompletion(n, "{}"))),
  },
  {
    weight: 1,
    arbitrary: fc.constant<Reply>((t) =>
      json(chatCompletion(t, '{"act', { finish_reason: "length" }))
    ),
  },
  { weight: 1, arbitrary: fc.constant<Reply>(() => json({ choices: [] })) },
  { weight: 2, arbitrary: fc.jsonValue().map((v): Reply => () => json(v)) },
  {
    weight: 1,
    arbitrary: fc.jsonValue().map((v): Reply => () =>
      json({ choices: [{ message: v, finish_reason: "stop" }] })
    ),
  },
  {
    weight: 1,
    arbitrary: fc.jsonValue().map((v): Reply => () =>
      json({ choices: [{ message: { tool_calls: v } }] })
    ),
  },
  {
    weight: 1,
    arbitrary: fc.jsonValue().map((v): Reply => (t) =>
      json({
        choices: [{
          message: {
            tool_calls: [{
              type: "function",
              function: { name: t, arguments: v },
            }],
          },
        }],
      })
    ),
  },
  { weight: 2, arbitrary: text.map((s): Reply => () => raw(s)) },
  // Transport trouble.
  {
    weight: 1,
    arbitrary: fc.constantFrom(400, 404, 429, 500, 503).map(
      (status): Reply => () =>
        new Response("{}", { status, headers: { "retry-after": "59" } }),
    ),
  },
  { weight: 1, arbitrary: fc.constant<Reply>((_t, c) => stall(c)) },
  {
    weight: 1,
    arbitrary: fc.constant<Reply>((t, c) =>
      drip(c, JSON.stringify(chatCompletion(t, "{}")), 40)
    ),
  },
);

Deno.test(`a seeded fuzz of ${REPLIES} hostile replies never crashes, hangs or loses the report`, async () => {
  const replies = fc.sample(reply, { seed: SEED, numRuns: REPLIES });
  let next = 0;
  await using server = hostileServer((context) => {
    const r = replies[next++ % replies.length]!;
    return r(forcedTool(context.body), context);
  });
  let runs = 0;
  let refusals = 0;
  const stops = new Map<string, number>();
  while (next < REPLIES) {
    const before = server.requests;
    const { outcome, report, progress, elapsedMs } = await runAgainst(server, {
      maxSteps: 6,
      timeoutMs: TIMEOUT_MS,
    });
    runs += 1;
    const calls = server.requests - before;
    const where = `run ${runs} (replies ${before + 1}–${server.requests})`;
    assert.ok(STOPS.has(outcome.stop), `${where}: stop ${outcome.stop}`);
    assert.doesNotMatch(outcome.detail, INTERNAL, where);
    assert.equal(report.outcome.stop, outcome.stop, where);
    assert.equal(report.outcome.detail, outcome.detail, where);
    assert.equal(report.requests.length, calls, where);
    for (const line of progress) {
      // deno-lint-ignore no-control-regex
      assert.doesNotMatch(line, /[\u0000-\u001f\u007f-\u009f]/, where);
    }
    assert.ok(
      elapsedMs < calls * TIMEOUT_MS + SLACK_MS,
      `${where}: ${elapsedMs} ms for ${calls} calls`,
    );
    stops.set(outcome.stop, (stops.get(outcome.stop) ?? 0) + 1);
    refusals += outcome.refusals;
  }
  // The fuzz reaches more than one ending, refusals included.
  assert.ok(stops.size >= 2, JSON.stringify([...stops]));
  assert.ok(refusals > 0, "no reply was refused");
});
