import assert from "node:assert/strict";
import type { Briefing, BriefingOptions } from "../../lib/briefing/briefing.ts";
import {
  ArchiveCapacityError,
  EventArchive,
} from "../../lib/briefing/event_archive.ts";
import { serializeEvent, toEvent } from "../../lib/briefing/event.ts";
import type { ActionRecord } from "../../lib/briefing/report.ts";
import { RequestCeilingError } from "../../lib/briefing/request_ceiling_error.ts";
import {
  requestBytes,
  serializeTurnRequest,
  type TurnRequest,
  type TurnTool,
} from "../../lib/briefing/turn_request.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { WorkingState } from "../../lib/briefing/working_state.ts";
import { briefingOf } from "./_stream.ts";

const encoder = new TextEncoder();
const TOOL: TurnTool = {
  name: "select_action",
  description: "Pick the next action",
  input_schema: { type: "object" },
};
const INTENT = "Make tests/range_test.ts pass";
const INSTRUCTIONS = "You are a careful engineer.";

/** A briefing of this file's short intent and instructions, bounded by default. */
function briefingWith(options: Partial<BriefingOptions> = {}): Briefing {
  return briefingOf({ intent: INTENT, instructions: INSTRUCTIONS, ...options });
}

function refusal(
  sequence: number,
  reason = `Cannot edit ../x: the path leaves the workspace (${sequence})`,
): ActionRecord {
  return {
    sequence,
    action: "repository.edit",
    arguments: { files: [{ path: "../x", contents: "body" }] },
    report: { kind: "refused", code: "path_escape", reason },
  };
}

function texts(request: TurnRequest): string[] {
  return request.messages.flatMap((m) => m.content.map((b) => b.text));
}

function turn(
  briefing: Briefing,
  extra: { lookupAnswers?: unknown[]; notes?: string[] } = {},
): TurnRequest {
  return briefing.request({
    phase: "selection",
    tool: TOOL,
    candidates: ["repository.inspect", "tests.run"],
    ...extra,
  });
}

Deno.test("A bounded request holds instructions, intent, checkpoint, events with their state lines, and the stage in that order", async () => {
  const store = new ResultStore();
  const briefing = briefingWith({ results: store });
  const d = await store.put("const x = 1;\n", {
    origin: "repository.inspect src/a.ts",
    capture: "complete",
  });
  const inspect: ActionRecord = {
    sequence: 1,
    action: "repository.inspect",
    arguments: { paths: ["src/a.ts"] },
    report: { kind: "inspected", files: [{ path: "src/a.ts", descriptor: d }] },
  };
  briefing.record(inspect);
  briefing.record(refusal(2));
  const request = turn(briefing, { notes: ["Your previous step was refused"] });
  assert.equal(request.system[0]?.text, INSTRUCTIONS);
  assert.match(request.system[1]?.text ?? "", /^Tool guidance:/);
  assert.match(request.system[1]?.text ?? "", /\$read_history/);
  // Tools, system and intent share one breakpoint, on the intent.
  assert.equal(
    request.system.some((b) => b.cache_control !== undefined),
    false,
  );
  assert.equal(request.messages.length, 1);
  assert.equal(request.messages[0]?.role, "user");
  const t = texts(request);
  assert.equal(t[0], `Intent:\n${INTENT}`);
  assert.equal(
    t[1],
    "History checkpoint: 0 earlier events archived.\n" +
      "Working state of the archived events:\n" +
      JSON.stringify(WorkingState.from([])),
  );
  assert.equal(t[2], "Recent events (untrusted JSON data):");
  assert.equal(t[3], serializeEvent(toEvent(inspect)));
  assert.equal(t[4], serializeEvent(toEvent(refusal(2))));
  assert.ok(
    !(t[4] ?? "").includes('"body"'),
    "edit bodies never reach the briefing",
  );
  // The refusal changed the working state: a state line follows its event
  // (its recent artifacts are the checkpoint's and the events'); the
  // inspection changed only the artifacts, so it has none.
  assert.match(t[5] ?? "", /^Working state after event-2:\n/);
  const { recent_artifacts: _, ...now } = briefing.workingState;
  assert.deepEqual(JSON.parse((t[5] ?? "").split("\n")[1] ?? ""), now);
  assert.match(
    t[6] ?? "",
    /^Current stage: selection\. Candidate actions: \["repository.inspect","tests.run"\]\./,
  );
  assert.match(t.at(-1) ?? "", /^Notes:\n- Your previous step was refused$/);
  const blocks = request.messages[0]?.content ?? [];
  assert.deepEqual(
    blocks.map((b) => b.cache_control !== undefined),
    blocks.map((_, i) => i === 0 || i === 5),
  );
  assert.deepEqual(request.tool, TOOL);
  assert.deepEqual(request.tool_choice, {
    type: "tool",
    name: "select_action",
  });
  assert.equal(briefing.lastTurn?.bytes, requestBytes(request));
});

Deno.test("The event lines of a bounded request are the archived bytes $read_history returns", () => {
  const briefing = briefingWith();
  for (let i = 1; i <= 3; i++) briefing.record(refusal(i));
  const t = texts(turn(briefing));
  for (let i = 1; i <= 3; i++) {
    const record = briefing.history?.record(`event-${i}`);
    assert.equal(new TextDecoder().decode(record?.bytes), t[1 + 2 * i]);
  }
});

Deno.test("A bounded briefing retires the 8 oldest events when the tail would pass 64", () => {
  const briefing = briefingWith({
    // 64 refusals with their state lines pass the default 40 KiB trigger
    // and 16 KiB target, which would retire earlier and more.
    limits: { retireAboveBytes: 65_536, retireTargetBytes: 49_152 },
  });
  for (let i = 1; i <= 64; i++) briefing.record(refusal(i));
  const before = encoder.encode(serializeTurnRequest(turn(briefing)));
  assert.equal(briefing.checkpoints, 0);
  briefing.record(refusal(65));
  const request = turn(briefing);
  assert.equal(briefing.checkpoints, 1);
  assert.equal(briefing.archivedCount, 8);
  assert.equal(briefing.retainedCount, 57);
  assert.equal(briefing.lastTurn?.retired, 8);
  const t = texts(request);
  assert.equal(
    t[1],
    "History checkpoint: 8 earlier events archived.\n" +
      "Working state of the archived events:\n" +
      JSON.stringify(
        WorkingState.from([1, 2, 3, 4, 5, 6, 7, 8].map((i) => refusal(i))),
      ),
  );
  assert.equal(t[3], serializeEvent(toEvent(refusal(9))));
  assert.equal(
    briefing.history?.count,
    65,
    "retired events stay in the archive",
  );
  // The checkpoint changes the prefix right after the intent.
  const after = encoder.encode(serializeTurnRequest(request));
  let common = 0;
  while (before[common] === after[common]) common += 1;
  const json = serializeTurnRequest(request);
  const digit = json.indexOf("History checkpoint: 8") +
    "History checkpoint: ".length;
  assert.equal(common, encoder.encode(json.slice(0, digit)).byteLength);
});

Deno.test("Between checkpoints each request begins with the previous request's retained prefix", () => {
  const briefing = briefingWith();
  let previous: Uint8Array | undefined;
  let prefix = 0;
  for (let i = 1; i <= 40; i++) {
    briefing.record(refusal(i));
    for (const phase of ["selection", "arguments"] as const) {
      const tool = phase === "selection" ? TOOL : {
        name: "action_arguments",
        description: "Args",
        input_schema: {
          type: "object",
          properties: { paths: { type: "array" } },
        },
      };
      const bytes = encoder.encode(
        serializeTurnRequest(
          briefing.request({ phase, tool, candidates: ["tests.run"] }),
        ),
      );
      if (previous !== undefined) {
        assert.deepEqual(
          bytes.subarray(0, prefix),
          previous.subarray(0, prefix),
        );
      }
      previous = bytes;
      prefix = briefing.lastTurn?.retainedPrefixBytes ?? 0;
      // The retained prefix covers everything up to the text of the newest
      // event's state line.
      const json = serializeTurnRequest(
        briefing.request({ phase, tool, candidates: ["tests.run"] }),
      );
      const newest = new RegExp(
        `"text":"Working state after event-${i}:(?:[^"\\\\]|\\\\.)*"`,
      ).exec(json);
      assert.ok(newest !== null);
      assert.ok(
        json.indexOf(JSON.stringify(serializeEvent(toEvent(refusal(i))))) <
          newest.index,
      );
      assert.equal(
        prefix,
        encoder.encode(json.slice(0, newest.index + newest[0].length))
          .byteLength,
      );
    }
  }
  assert.equal(briefing.checkpoints, 0);
});

Deno.test("A bounded request over 32 KiB retires batches of 8 until it is at most 16 KiB", () => {
  const briefing = briefingWith();
  let sequence = 0;
  while (briefing.checkpoints === 0) {
    sequence += 1;
    briefing.record(
      refusal(sequence, `Refused: ${"r".repeat(1_500)} (${sequence})`),
    );
    turn(briefing);
  }
  const info = briefing.lastTurn;
  assert.ok(info !== undefined);
  assert.ok(sequence < 64, "the size trigger fired before the tail limit");
  assert.equal(info.retired % 8, 0);
  assert.ok(info.bytes <= 16_384, `landed at ${info.bytes} bytes`);
  assert.equal(briefing.archivedCount, info.retired);
});

Deno.test("Whole lookup answers are dropped with an error note to keep a request within 64 KiB", () => {
  const briefing = briefingWith();
  briefing.record(refusal(1));
  const answers = Array.from(
    { length: 8 },
    (_, i) => ({ selected_text: `${i}:` + "\u0001".repeat(1_300) }),
  ); // ~7.8 KiB escaped each
  const request = turn(briefing, { lookupAnswers: answers });
  const info = briefing.lastTurn;
  assert.ok(info !== undefined);
  assert.ok(requestBytes(request) <= 65_536);
  assert.ok(info.droppedAnswers.length > 0);
  const text = texts(request).find((x) => x.startsWith("Lookup answers")) ?? "";
  const lines = text.split("\n").slice(1, 9).map((l) =>
    JSON.parse(l) as Record<string, string>
  );
  assert.equal(lines.length, 8);
  for (const [i, line] of lines.entries()) {
    if (info.droppedAnswers.includes(i)) {
      assert.match(line["lookup_failed"] ?? "", /^answer_too_large: /);
    } else assert.deepEqual(line, answers[i], "kept answers are whole");
  }
  assert.match(text, /Lookups used this stage: 8 of 8\./);
});

Deno.test("Mandatory content that cannot fit 64 KiB fails with a typed error", () => {
  const briefing = briefingWith({ intent: "i".repeat(70_000) });
  briefing.record(refusal(1));
  assert.throws(
    () => turn(briefing),
    (e) =>
      e instanceof RequestCeilingError && e.code === "request_too_large" &&
      e.bytes > 65_536,
  );
  const legacy = briefingWith({ policy: "legacy", intent: "i".repeat(70_000) });
  assert.ok(requestBytes(turn(legacy)) > 65_536, "legacy has no ceiling");
});

Deno.test("A full archive stops later requests with the typed capacity error and keeps every event", () => {
  const archive = new EventArchive({ maxEvents: 10 });
  const briefing = briefingWith({ archive });
  for (let i = 1; i <= 10; i++) briefing.record(refusal(i));
  turn(briefing);
  assert.throws(
    () => briefing.record(refusal(11)),
    (e) => e instanceof ArchiveCapacityError && e.code === "capacity",
  );
  assert.throws(() => turn(briefing), ArchiveCapacityError);
  assert.throws(() => briefing.record(refusal(12)), ArchiveCapacityError);
  assert.equal(archive.count, 10);
  for (let i = 1; i <= 10; i++) {
    assert.equal(
      new TextDecoder().decode(archive.record(`event-${i}`)?.bytes),
      serializeEvent(toEvent(refusal(i))),
    );
  }
  assert.equal(
    briefing.workingState.latest_refusal?.sequence,
    10,
    "the refused record changed nothing",
  );
});

Deno.test("A briefing given a filled archive counts its events as earlier history", () => {
  const archive = new EventArchive();
  for (let i = 1; i <= 5; i++) archive.append(toEvent(refusal(i)));
  const briefing = briefingWith({ archive });
  assert.throws(() => briefing.record(refusal(5)), RangeError);
  briefing.record(refusal(6));
  const t = texts(turn(briefing));
  assert.match(
    t[1] ?? "",
    /^History checkpoint: 5 earlier events archived\.\n/,
  );
  assert.equal(briefing.retainedCount, 1);
});

Deno.test("Legacy briefings show a rolling transcript with previews, each entry cut at 16 KiB", async () => {
  const store = new ResultStore();
  const briefing = briefingWith({ policy: "legacy", results: store });
  const big = await store.put("PREVIEW-HEAD " + "é".repeat(40_000), {
    origin: "repository.inspect big.txt",
    capture: "complete",
  });
  const many = [];
  for (let i = 0; i < 16; i++) {
    many.push({
      path: `long/path/${"p".repeat(200)}/${i}.txt`,
      descriptor: big,
    });
  }
  briefing.record({
    sequence: 1,
    action: "repository.inspect",
    arguments: { paths: ["big.txt"] },
    report: { kind: "inspected", files: many },
  });
  briefing.record({
    sequence: 2,
    action: "repository.edit",
    arguments: { files: [{ path: "a.txt", contents: "SECRET BODY" }] },
    report: {
      kind: "edited",
      revision: "rev-1-aaaaaaaaaaaa",
      files: [{ path: "a.txt", utf8_bytes: 11, sha256: "a".repeat(64) }],
    },
  });
  const request = turn(briefing);
  const t = texts(request);
  assert.equal(briefing.history, undefined);
  assert.equal(t[0], `Intent:\n${INTENT}`);
  const first = t.find((x) => x.startsWith("Step 1: repository.inspect")) ?? "";
  assert.ok(
    first.includes("PREVIEW-HEAD"),
    "legacy descriptors carry previews",
  );
  assert.ok(first.endsWith("\n[truncated]"));
  assert.ok(encoder.encode(first).byteLength <= 16_384);
  const second = t.find((x) => x.startsWith("Step 2: repository.edit")) ?? "";
  assert.ok(!second.includes("SECRET BODY"));
  assert.ok(second.includes('"omitted_from_context":true'));
  assert.ok(
    !t.some((x) => x.startsWith("Current working state")),
    "legacy shows no working state",
  );
  assert.ok(!(request.system[1]?.text ?? "").includes("$read_history"));
  assert.throws(
    () =>
      briefingWith({
        policy: "legacy",
        results: store,
        archive: new EventArchive(),
      }),
    TypeError,
  );
});

Deno.test("Legacy briefings roll 64 entries in batches and count the earlier ones in one line", () => {
  const briefing = briefingWith({
    policy: "legacy",
    limits: { transcriptRollBatch: 8 },
  });
  for (let i = 1; i <= 64; i++) briefing.record(refusal(i));
  assert.equal(briefing.omittedCount, 0);
  briefing.record(refusal(65));
  // The 65th entry drops a batch of 8 at once.
  assert.equal(briefing.omittedCount, 8);
  assert.equal(briefing.retainedCount, 57);
  const first = turn(briefing);
  for (let i = 66; i <= 70; i++) briefing.record(refusal(i));
  const t = texts(turn(briefing));
  assert.equal(t[1], "(8 earlier entries are not shown)");
  assert.ok((t[2] ?? "").startsWith("Step 9: repository.edit"));
  assert.equal(t.filter((x) => x.startsWith("Step ")).length, 62);
  assert.equal(briefing.omittedCount, 8);
  assert.equal(briefing.checkpoints, 0);
  // Between rolls the transcript only grows: the earlier entries are intact.
  const before = texts(first).filter((x) => x.startsWith("Step "));
  assert.deepEqual(t.slice(2, 2 + before.length), before);
});

Deno.test("The legacy roll batch defaults to 32 entries", () => {
  const briefing = briefingWith({ policy: "legacy" });
  for (let i = 1; i <= 65; i++) briefing.record(refusal(i));
  assert.equal(briefing.omittedCount, 32);
  assert.equal(briefing.retainedCount, 33);
});

Deno.test("Briefing refuses sequences that do not increase and unknown policies", () => {
  const briefing = briefingWith();
  briefing.record(refusal(3));
  assert.throws(() => briefing.record(refusal(3)), RangeError);
  assert.equal(briefing.history?.count, 1);
  assert.throws(
    () => briefingWith({ policy: "other" as "legacy" }),
    TypeError,
  );
});

Deno.test("Briefing puts the requested cache TTL on its breakpoints: the intent and the last event", () => {
  const briefing = briefingWith({ cacheTtl: "1h" });
  briefing.record(refusal(1));
  const request = turn(briefing);
  const marks = [
    ...request.system,
    ...request.messages.flatMap((m) => m.content),
  ].flatMap((b) => b.cache_control === undefined ? [] : [b.cache_control]);
  assert.deepEqual(marks, Array(2).fill({ type: "ephemeral", ttl: "1h" }));
});
