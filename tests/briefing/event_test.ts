import assert from "node:assert/strict";
import {
  compactArguments,
  serializeEvent,
  toEvent,
} from "../../lib/briefing/event.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { sha256Hex } from "../../lib/store/digest.ts";
import { testsRunRecord } from "../_kit.ts";

const encoder = new TextEncoder();
const BODY =
  "export const secret = 42; // the body must never reach a briefing\n".repeat(
    50,
  );

Deno.test("toEvent() shows an edit as path, size and digest, never the body", () => {
  const sha256 = sha256Hex(encoder.encode(BODY));
  const event = toEvent({
    sequence: 4,
    action: "repository.edit",
    arguments: {
      files: [{ path: "src/a.ts", contents: BODY }],
      message: "Fix",
    },
    report: {
      kind: "edited",
      revision: "rev-1-0123456789ab",
      files: [{ path: "src/a.ts", utf8_bytes: BODY.length, sha256 }],
    },
  });
  const line = serializeEvent(event);
  assert.ok(!line.includes("secret"));
  assert.deepEqual(event.arguments, {
    message: "Fix",
    files: [{
      path: "src/a.ts",
      utf8_bytes: BODY.length,
      sha256,
      omitted_from_context: true,
    }],
  });
  assert.deepEqual(event.report, {
    kind: "edited",
    revision: "rev-1-0123456789ab",
    files: [{
      path: "src/a.ts",
      utf8_bytes: BODY.length,
      sha256,
      omitted_from_context: true,
    }],
  });
  assert.deepEqual(event.artifacts, []);
});

Deno.test("toEvent() uses the expanded size and digest of a segment edit from the report", () => {
  const sha256 = "c".repeat(64);
  const event = toEvent({
    sequence: 2,
    action: "repository.edit",
    arguments: {
      files: [{
        path: "b.ts",
        contents: {
          segments: [{ literal: BODY }, {
            ref: {
              result: "result-1",
              sha256: "a".repeat(64),
              select: { kind: "whole" },
            },
          }],
        },
      }],
    },
    report: {
      kind: "edited",
      revision: "rev-2-aaaaaaaaaaaa",
      files: [{ path: "b.ts", utf8_bytes: 9_000, sha256 }],
    },
  });
  assert.deepEqual(event.arguments, {
    files: [{
      path: "b.ts",
      utf8_bytes: 9_000,
      sha256,
      omitted_from_context: true,
    }],
  });
});

Deno.test("compactArguments() measures a refused literal edit and counts refused segments", async (t) => {
  await t.step("literal", () => {
    assert.deepEqual(
      compactArguments("repository.edit", {
        files: [{ path: "x", contents: "héllo" }],
      }),
      {
        files: [{
          path: "x",
          utf8_bytes: 6,
          sha256: sha256Hex(encoder.encode("héllo")),
          omitted_from_context: true,
        }],
      },
    );
  });
  await t.step("segments", () => {
    assert.deepEqual(
      compactArguments("repository.edit", {
        files: [{
          path: "x",
          contents: { segments: [{ literal: BODY }, { literal: "y" }] },
        }],
      }),
      {
        files: [{ path: "x", segments: 2, omitted_from_context: true }],
      },
    );
  });
  await t.step("other actions and malformed arguments pass unchanged", () => {
    assert.deepEqual(compactArguments("repository.inspect", { paths: ["a"] }), {
      paths: ["a"],
    });
    assert.equal(compactArguments("repository.edit", "garbage"), "garbage");
    assert.deepEqual(
      compactArguments("repository.edit", {
        files: [{ path: "x", contents: 7 }],
      }),
      {
        files: [{ path: "x", omitted_from_context: true }],
      },
    );
  });
});

Deno.test("toEvent() keeps compact descriptors of inspected files and test output as artifacts", async () => {
  const store = new ResultStore();
  const a = await store.put("alpha\n".repeat(400), {
    origin: "repository.inspect a.txt",
    capture: "complete",
  });
  const out = await store.put("FAILED 1 test\n", {
    origin: "tests.run",
    capture: "partial",
  });
  const inspected = toEvent({
    sequence: 1,
    action: "repository.inspect",
    arguments: { paths: ["a.txt", "gone.txt"] },
    report: {
      kind: "inspected",
      files: [{ path: "a.txt", descriptor: a }, {
        path: "gone.txt",
        missing: true,
      }],
    },
  });
  assert.deepEqual(inspected.report, {
    kind: "inspected",
    files: [{ path: "a.txt" }, { path: "gone.txt", missing: true }],
  });
  assert.equal(inspected.artifacts.length, 1);
  assert.equal(inspected.artifacts[0]?.result, a.result);
  assert.ok(
    !serializeEvent(inspected).includes("alpha"),
    "previews stay out of events",
  );
  const tested = toEvent(testsRunRecord(2, out));
  assert.deepEqual(tested.report, {
    kind: "tests_run",
    exit_code: 1,
    timed_out: false,
    tested_revision: null,
    confinement: "none",
  });
  assert.deepEqual(tested.artifacts.map((d) => d.result), [out.result]);
  assert.ok(!serializeEvent(tested).includes("FAILED"));
});

Deno.test("serializeEvent() writes sequence, action, arguments, report, artifacts with nested keys sorted", () => {
  const line = serializeEvent({
    sequence: 9,
    action: "repository.inspect",
    arguments: { z: 1, a: { y: 2, b: 3 } },
    report: { kind: "inspected", files: [] },
    artifacts: [],
  });
  assert.equal(
    line,
    '{"sequence":9,"action":"repository.inspect","arguments":{"a":{"b":3,"y":2},"z":1},"report":{"files":[],"kind":"inspected"},"artifacts":[]}',
  );
  assert.deepEqual(JSON.parse(line).sequence, 9);
});

Deno.test("toEvent() refuses a sequence that is not a positive integer", () => {
  assert.throws(
    () =>
      toEvent({
        sequence: 0,
        action: "tests.run",
        arguments: {},
        report: { kind: "refused", code: "x", reason: "y" },
      }),
    TypeError,
  );
});
