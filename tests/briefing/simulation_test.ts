/**
 * Simulations without a model: generated report streams drive both
 * policies, and every request is checked against the size, retirement,
 * prefix and archive invariants.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type {
  Briefing,
  BriefingLimits,
  ContextPolicy,
  TurnInfo,
} from "../../lib/briefing/briefing.ts";
import { serializeEvent, toEvent } from "../../lib/briefing/event.ts";
import {
  ArchiveCapacityError,
  EventArchive,
} from "../../lib/briefing/event_archive.ts";
import type { ActionRecord } from "../../lib/briefing/report.ts";
import { serializeTurnRequest } from "../../lib/briefing/turn_request.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { sha256Hex } from "../../lib/store/digest.ts";
import { floorCharBoundary } from "../../lib/store/utf8.ts";
import { LookupSession } from "../../lib/reference/lookup_session.ts";
import { rng } from "../_kit.ts";
import {
  argumentsTurn,
  briefingOf,
  CANDIDATES,
  lookupSessionOf,
  pickKind,
  SELECT_TURN,
  selectTool,
  step,
  STEP_KINDS,
  type StepKind,
  StreamState,
} from "./_stream.ts";

const encoder = new TextEncoder();
const CEILING = 65_536;
const TARGET = 16_384;

interface Observed {
  bytes: Uint8Array;
  info: TurnInfo;
  checkpoints: number;
  omitted: number;
}

/** Checks one request against the previous one; returns the observation. */
function check(
  briefing: Briefing,
  request: ReturnType<Briefing["request"]>,
  previous: Observed | undefined,
  target = TARGET,
): Observed {
  const bytes = encoder.encode(serializeTurnRequest(request));
  const info = briefing.lastTurn;
  assert.ok(info !== undefined);
  assert.equal(info.bytes, bytes.byteLength);
  const markers =
    [...request.system, ...request.messages.flatMap((m) => m.content)]
      .filter((b) => b.cache_control !== undefined).length;
  assert.ok(markers <= 4, `${markers} cache breakpoints`);
  if (briefing.policy === "bounded") {
    assert.ok(
      bytes.byteLength <= CEILING,
      `request of ${bytes.byteLength} bytes`,
    );
    assert.ok(info.retained <= 64, `tail of ${info.retained} events`);
    if (info.retired > 0) {
      assert.ok(
        info.retired % 8 === 0 || info.retained === 0,
        `retired ${info.retired} events, not whole batches of 8`,
      );
      assert.ok(
        bytes.byteLength <= target || info.retained === 0,
        `retirement landed at ${bytes.byteLength} bytes with ${info.retained} events left`,
      );
    }
  } else {
    assert.ok(info.retained <= 64, `${info.retained} transcript entries`);
  }
  const observed = {
    bytes,
    info,
    checkpoints: briefing.checkpoints,
    omitted: briefing.omittedCount,
  };
  if (
    previous !== undefined && previous.checkpoints === observed.checkpoints &&
    previous.omitted === observed.omitted
  ) {
    const n = previous.info.retainedPrefixBytes;
    assert.ok(n > 0);
    assert.deepEqual(
      bytes.subarray(0, n),
      previous.bytes.subarray(0, n),
      "the request does not begin with the previous request's retained prefix",
    );
  }
  return observed;
}

interface RunResult {
  briefing: Briefing;
  records: ActionRecord[];
  store: ResultStore;
  requests: number;
  maxBytes: number;
  capacity: ArchiveCapacityError | undefined;
  /** Lookup answers replaced by `answer_too_large`, over all requests. */
  dropped: number;
}

/** A lookup the model might send: history and result reads and listings. */
function lookupRequest(
  random: () => number,
  briefing: Briefing,
  store: ResultStore,
  heavy = false,
): unknown {
  const history = briefing.history;
  const r = heavy ? 0.6 : random();
  if (history !== undefined && history.count > 0 && r < 0.35) {
    const sequence = history.lastSequence -
      Math.floor(random() * history.count);
    const record = history.record(`event-${sequence}`);
    if (record !== undefined) {
      return {
        $read_history: {
          result: record.id,
          sha256: record.sha256,
          select: { kind: "whole" },
        },
      };
    }
  }
  if (history !== undefined && r < 0.5) {
    return { $list_history: Math.floor(random() * Math.max(1, history.count)) };
  }
  if (store.count > 0 && r < 0.85) {
    const stored = store.get(
      `result-${1 + Math.floor(random() * store.count)}`,
    );
    if (stored !== undefined) {
      const end = floorCharBoundary(
        stored.bytes,
        Math.min(
          stored.bytes.byteLength,
          (heavy ? 7_000 : 5_000) + Math.floor(random() * 1_000),
        ),
      );
      return {
        $read_result: {
          result: stored.id,
          sha256: stored.sha256,
          select: !heavy && random() < 0.5
            ? { kind: "lines", start: 1, end: 1 }
            : { kind: "bytes", start: 0, end },
        },
      };
    }
  }
  return { $list_results: Math.floor(random() * Math.max(1, store.count)) };
}

/** Drives a briefing through `kinds`, with lookups answered for real. */
async function drive(
  policy: ContextPolicy,
  kinds: readonly StepKind[],
  seed: number,
  options: {
    lookups?: boolean | "heavy";
    archive?: EventArchive;
    limits?: Partial<BriefingLimits>;
  } = {},
): Promise<RunResult> {
  const random = rng(seed);
  const store = new ResultStore();
  const briefing = briefingOf({
    policy,
    results: store,
    ...(options.archive === undefined ? {} : { archive: options.archive }),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  const state = new StreamState();
  const records: ActionRecord[] = [];
  let previous: Observed | undefined;
  let requests = 0;
  let maxBytes = 0;
  let capacity: ArchiveCapacityError | undefined;
  let dropped = 0;
  const observe = (request: ReturnType<Briefing["request"]>) => {
    previous = check(
      briefing,
      request,
      previous,
      options.limits?.retireTargetBytes,
    );
    requests += 1;
    maxBytes = Math.max(maxBytes, previous.bytes.byteLength);
    dropped += previous.info.droppedAnswers.length;
  };
  for (const kind of kinds) {
    // Selection, sometimes with lookups answered by a real session.
    const answers: unknown[] = [];
    const selection = lookupSessionOf(briefing, store, "selection");
    observe(briefing.request(SELECT_TURN));
    const heavy = options.lookups === "heavy";
    if (heavy || (options.lookups !== false && random() < 0.2)) {
      const lookups = heavy ? 8 : 1 + Math.floor(random() * 8);
      for (let i = 0; i < lookups; i++) {
        answers.push(
          await selection.answer(lookupRequest(random, briefing, store, heavy)),
        );
        observe(briefing.request({ ...SELECT_TURN, lookupAnswers: answers }));
      }
    }
    const record = await step(kind, state, { store, random });
    observe(briefing.request(argumentsTurn(record.action)));
    try {
      briefing.record(record);
    } catch (error) {
      if (!(error instanceof ArchiveCapacityError)) throw error;
      capacity = error;
      break;
    }
    records.push(record);
  }
  if (capacity === undefined) observe(briefing.request(SELECT_TURN));
  return { briefing, records, store, requests, maxBytes, capacity, dropped };
}

function kindsOf(seed: number, steps: number): StepKind[] {
  const random = rng(seed);
  return Array.from({ length: steps }, () => pickKind(random));
}

/** Reads every archived event back through `$read_history`. */
async function readAllHistory(run: RunResult): Promise<void> {
  const history = run.briefing.history;
  assert.ok(history !== undefined);
  assert.equal(history.count, run.records.length);
  let session: LookupSession | undefined;
  for (const [i, record] of run.records.entries()) {
    if (i % 8 === 0) {
      session = new LookupSession({
        results: run.store,
        history,
        stage: "arguments",
      });
    }
    const expected = serializeEvent(toEvent(record));
    const sha256 = sha256Hex(encoder.encode(expected));
    const answer = await session!.answer({
      $read_history: {
        result: `event-${record.sequence}`,
        sha256,
        select: { kind: "whole" },
      },
    }) as Record<string, unknown>;
    if (encoder.encode(expected).byteLength <= 8192) {
      assert.deepEqual(answer, { selected_text: expected });
    } else {
      assert.match(String(answer["lookup_failed"]), /^answer_too_large/);
    }
  }
}

Deno.test("Bounded briefings stay within 64 KiB over generated streams of 10 to 5,000 steps", async (t) => {
  for (const steps of [10, 150, 1_000]) {
    await t.step(`${steps} steps`, async () => {
      const run = await drive("bounded", kindsOf(steps, steps), steps);
      assert.equal(run.capacity, undefined);
      assert.ok(run.maxBytes <= CEILING);
      assert.equal(
        run.briefing.archivedCount + run.briefing.retainedCount,
        steps,
      );
      if (steps >= 150) {
        assert.ok(run.briefing.checkpoints > 0, "no checkpoint in a long run");
      }
      await readAllHistory(run);
    });
  }
  await t.step("5,000 steps with an archive of 8,192 events", async () => {
    const archive = new EventArchive({ maxEvents: 8_192 });
    const run = await drive("bounded", kindsOf(5, 5_000), 5_000, { archive });
    assert.equal(run.capacity, undefined);
    assert.ok(run.maxBytes <= CEILING);
    assert.equal(archive.count, 5_000);
  });
});

Deno.test("Stages of eight large lookups drop whole answers and stay within 64 KiB", async () => {
  const run = await drive(
    "bounded",
    kindsOf(9, 120).map((k) => k === "small_inspect" ? "large_inspect" : k),
    9,
    { lookups: "heavy" },
  );
  assert.ok(run.maxBytes <= CEILING);
  assert.ok(run.dropped > 0, "no answer was dropped");
});

Deno.test("A 5,000-step bounded run stops at the 4,096-event archive limit and loses nothing archived", async () => {
  const run = await drive("bounded", kindsOf(5, 5_000), 5_000, {
    lookups: false,
  });
  assert.ok(run.capacity instanceof ArchiveCapacityError);
  assert.equal(run.capacity.code, "capacity");
  assert.equal(run.records.length, 4_096);
  assert.throws(
    () =>
      run.briefing.request({
        phase: "selection",
        tool: selectTool(CANDIDATES),
      }),
    ArchiveCapacityError,
  );
  await readAllHistory(run);
});

Deno.test("A 5,000-step legacy run keeps its 64-entry window, rolled in batches", async () => {
  const random = rng(6);
  const store = new ResultStore();
  const briefing = briefingOf({ policy: "legacy", results: store });
  const state = new StreamState();
  for (let i = 1; i <= 5_000; i++) {
    briefing.record(await step(pickKind(random), state, { store, random }));
    if (i % 250 !== 0) continue;
    const request = briefing.request(SELECT_TURN);
    const entries = request.messages.flatMap((m) =>
      m.content.map((b) => b.text)
    ).filter((x) => x.startsWith("Step "));
    assert.ok(entries.length <= 64 && entries.length > 64 - 32);
    for (const entry of entries) {
      assert.ok(encoder.encode(entry).byteLength <= 16_384);
    }
    assert.equal(briefing.omittedCount, i - entries.length);
    assert.equal(briefing.omittedCount % 32, 0);
  }
});

Deno.test("Bounded retirement retires whole batches of 8 and lands at or below 16 KiB", async () => {
  // Large inspections only: every event carries up to 16 descriptors.
  const run = await drive("bounded", Array(300).fill("large_inspect"), 7, {
    lookups: false,
  });
  assert.ok(run.briefing.checkpoints >= 2);
  assert.ok(run.maxBytes <= CEILING);
});

Deno.test("Bounded retirement triggers when the tail would pass 64 small events", async () => {
  const run = await drive("bounded", Array(65).fill("refusal"), 3, {
    lookups: false,
    // Small events with their state lines stay under a 64 KiB trigger and
    // a 48 KiB target; the tail count triggers.
    limits: { retireAboveBytes: 65_536, retireTargetBytes: 49_152 },
  });
  assert.equal(run.briefing.checkpoints, 1);
  assert.equal(run.briefing.archivedCount, 8);
  assert.equal(run.briefing.retainedCount, 57);
});

Deno.test("Legacy briefings keep at most 64 transcript entries and count the rest in one line", async () => {
  const run = await drive("legacy", kindsOf(11, 200), 11, { lookups: true });
  // Rolls of 32 at entries 65, 97, 129, 161 and 193.
  assert.equal(run.briefing.retainedCount, 40);
  assert.equal(run.briefing.omittedCount, 160);
  assert.equal(run.briefing.history, undefined);
  const request = run.briefing.request(SELECT_TURN);
  const texts = request.messages.flatMap((m) => m.content.map((b) => b.text));
  assert.ok(texts.includes("(160 earlier entries are not shown)"));
  const steps = texts.filter((x) => x.startsWith("Step "));
  assert.equal(steps.length, 40);
  for (const entry of steps) {
    assert.ok(encoder.encode(entry).byteLength <= 16_384);
  }
});

Deno.test("Archived events stay readable through $read_history with correct digests", async () => {
  const run = await drive("bounded", kindsOf(5, 400), 5, { lookups: false });
  assert.ok(run.briefing.archivedCount > 0);
  await readAllHistory(run);
});

Deno.test("Random report streams keep the bounded and legacy invariants", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.constantFrom(...STEP_KINDS), {
        minLength: 1,
        maxLength: 160,
      }),
      fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      fc.constantFrom("legacy" as const, "bounded" as const),
      async (kinds, seed, policy) => {
        const run = await drive(policy, kinds, seed);
        assert.equal(
          run.briefing.workingState.latest_revision !== null,
          kinds.includes("edit"),
        );
        if (policy === "bounded") {
          assert.equal(
            run.briefing.archivedCount + run.briefing.retainedCount,
            kinds.length,
          );
          assert.equal(run.briefing.history?.count, kinds.length);
        } else {
          assert.equal(
            run.briefing.omittedCount + run.briefing.retainedCount,
            kinds.length,
          );
        }
      },
    ),
    { numRuns: 40 },
  );
});
