import assert from "node:assert/strict";
import {
  ArchiveCapacityError,
  EventArchive,
} from "../../lib/briefing/event_archive.ts";
import {
  type BriefingEvent,
  serializeEvent,
} from "../../lib/briefing/event.ts";
import { sha256Hex } from "../../lib/store/digest.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { LookupSession } from "../../lib/reference/lookup_session.ts";

const encoder = new TextEncoder();

function event(
  sequence: number,
  reason = `Refused step ${sequence}`,
): BriefingEvent {
  return {
    sequence,
    action: "repository.edit",
    arguments: { files: [] },
    report: { kind: "refused", code: "path_escape", reason },
    artifacts: [],
  };
}

Deno.test("EventArchive.record() gives the serialized event and its SHA-256 under event-<n>", () => {
  const archive = new EventArchive();
  archive.append(event(3));
  const record = archive.record("event-3");
  assert.ok(record !== undefined);
  const expected = encoder.encode(serializeEvent(event(3)));
  assert.deepEqual(record.bytes, expected);
  assert.equal(record.sha256, sha256Hex(expected));
  assert.equal(record.id, "event-3");
  assert.equal(archive.record("event-4"), undefined);
  assert.equal(archive.record("event-03"), undefined);
  assert.equal(archive.record("result-3"), undefined);
  assert.deepEqual(archive.get(3), event(3));
  assert.equal(archive.bytes, expected.byteLength);
});

Deno.test("EventArchive.list() pages at most 8 items, oldest first, with whole references", () => {
  const archive = new EventArchive();
  for (let i = 1; i <= 20; i++) archive.append(event(i));
  const first = archive.list(0);
  assert.equal(first.events.length, 8);
  assert.equal(first.next_offset, 8);
  assert.deepEqual(first.events[0], {
    event: "event-1",
    action: "repository.edit",
    utf8_bytes: archive.record("event-1")?.bytes.byteLength,
    reference: {
      result: "event-1",
      sha256: archive.record("event-1")?.sha256,
      select: { kind: "whole" },
    },
  });
  const last = archive.list(16);
  assert.deepEqual(last.events.map((e) => e.event), [
    "event-17",
    "event-18",
    "event-19",
    "event-20",
  ]);
  assert.equal(last.next_offset, null);
  assert.deepEqual(archive.list(20), { events: [], next_offset: null });
  assert.throws(() => archive.list(-1), RangeError);
});

Deno.test("EventArchive.list() keeps a page within 8 KiB when actions are long", () => {
  const archive = new EventArchive();
  for (let i = 1; i <= 8; i++) {
    archive.append({ ...event(i), action: "é".repeat(2_000) });
  }
  const page = archive.list(0);
  assert.ok(encoder.encode(JSON.stringify(page)).byteLength <= 8_192);
  assert.ok(page.events.length >= 1);
  for (const item of page.events) {
    assert.ok(encoder.encode(item.action).byteLength <= 256);
  }
});

Deno.test("EventArchive refuses an event past its limits and loses nothing archived", async (t) => {
  await t.step("event count", () => {
    const archive = new EventArchive({ maxEvents: 5 });
    for (let i = 1; i <= 5; i++) archive.append(event(i));
    const before = [...archive.records()].map((r) => r.sha256);
    assert.throws(
      () => archive.append(event(6)),
      (e) =>
        e instanceof ArchiveCapacityError && e.code === "capacity" &&
        e.limit === "events",
    );
    assert.equal(archive.count, 5);
    assert.deepEqual([...archive.records()].map((r) => r.sha256), before);
    assert.equal(archive.record("event-6"), undefined);
  });
  await t.step("serialized bytes", () => {
    const size = encoder.encode(serializeEvent(event(1))).byteLength;
    const archive = new EventArchive({ maxBytes: size * 2 + 5 });
    archive.append(event(1));
    archive.append(event(2));
    assert.throws(
      () => archive.append(event(3)),
      (e) => e instanceof ArchiveCapacityError && e.limit === "bytes",
    );
    assert.equal(archive.count, 2);
    assert.ok(archive.bytes <= archive.maxBytes);
  });
  await t.step("defaults are 4,096 events and 16 MiB", () => {
    const archive = new EventArchive();
    assert.equal(archive.maxEvents, 4_096);
    assert.equal(archive.maxBytes, 16 * 1024 * 1024);
    for (let i = 1; i <= 4_096; i++) archive.append(event(i));
    assert.throws(() => archive.append(event(4_097)), ArchiveCapacityError);
    assert.equal(archive.count, 4_096);
  });
});

Deno.test("EventArchive refuses sequences that do not increase", () => {
  const archive = new EventArchive();
  archive.append(event(2));
  assert.throws(() => archive.append(event(2)), RangeError);
  assert.throws(() => archive.append(event(1)), RangeError);
  assert.equal(archive.count, 1);
});

Deno.test("LookupSession reads and lists the archive with the result selection rules", async () => {
  const archive = new EventArchive();
  for (let i = 1; i <= 10; i++) archive.append(event(i, `Refused ✓ step ${i}`));
  const session = new LookupSession({
    results: new ResultStore(),
    history: archive,
    stage: "selection",
  });
  const record = archive.record("event-7");
  assert.ok(record !== undefined);
  const text = serializeEvent(event(7, "Refused ✓ step 7"));
  // Each selection of event-7 and the answer it gets.
  const reads = [{
    select: { kind: "whole" },
    answer: { selected_text: text },
  }, {
    select: { kind: "json_pointer", pointer: "/report/reason" },
    answer: { selected_text: "Refused ✓ step 7" },
  }, {
    select: { kind: "json_pointer", pointer: "/sequence" },
    rendering: "json",
    answer: { selected_json: "7" },
  }, {
    select: { kind: "bytes", start: 0, end: 13 },
    answer: { selected_text: text.slice(0, 13) },
  }];
  for (const { answer, ...selection } of reads) {
    assert.deepEqual(
      await session.answer({
        $read_history: {
          result: "event-7",
          sha256: record.sha256,
          ...selection,
        },
      }),
      answer,
      JSON.stringify(selection),
    );
  }
  const wrong = await session.answer({
    $read_history: {
      result: "event-7",
      sha256: "0".repeat(64),
      select: { kind: "whole" },
    },
  }) as Record<string, string>;
  assert.match(wrong["lookup_failed"] ?? "", /^digest_mismatch/);
  const unknown = await session.answer({
    $read_history: {
      result: "event-99",
      sha256: record.sha256,
      select: { kind: "whole" },
    },
  }) as Record<string, string>;
  assert.match(unknown["lookup_failed"] ?? "", /^unknown_result/);
  const page = await session.answer({ $list_history: 8 }) as {
    events: { event: string }[];
    next_offset: number | null;
  };
  assert.deepEqual(page.events.map((e) => e.event), ["event-9", "event-10"]);
  assert.equal(page.next_offset, null);
});
