import assert from "node:assert/strict";
import { WorkingState } from "../../lib/briefing/working_state.ts";
import type {
  ActionRecord,
  ExecutionReport,
} from "../../lib/briefing/report.ts";
import { ResultStore } from "../../lib/store/result_store.ts";

const store = new ResultStore();
let sequence = 0;

function rec(action: string, report: ExecutionReport): ActionRecord {
  sequence += 1;
  return { sequence, action, arguments: {}, report };
}
function edit(revision: string): ActionRecord {
  return rec("repository.edit", { kind: "edited", revision, files: [] });
}
async function test(
  exit_code: number,
  tested_revision: string | null,
  timed_out = false,
): Promise<ActionRecord> {
  const output = await store.put(exit_code === 0 ? "ok\n" : "FAILED\n", {
    origin: "tests.run",
    capture: "partial",
  });
  return rec("tests.run", {
    kind: "tests_run",
    exit_code,
    timed_out,
    tested_revision,
    output,
    confinement: "none",
  });
}

Deno.test("WorkingState.from() of no records is the empty closed object", () => {
  assert.deepEqual(WorkingState.from([]), {
    latest_revision: null,
    latest_test: null,
    latest_refusal: null,
    recent_artifacts: [],
    tests_validate_latest_revision: false,
  });
  assert.deepEqual(Object.keys(WorkingState.from([])), [
    "latest_revision",
    "latest_test",
    "latest_refusal",
    "recent_artifacts",
    "tests_validate_latest_revision",
  ]);
});

Deno.test("WorkingState: a pass on revision A does not validate revision B", async () => {
  const a = edit("rev-1-aaaaaaaaaaaa");
  const passA = await test(0, "rev-1-aaaaaaaaaaaa");
  assert.equal(
    WorkingState.from([a, passA]).tests_validate_latest_revision,
    true,
  );
  const b = edit("rev-2-bbbbbbbbbbbb");
  const state = WorkingState.from([a, passA, b]);
  assert.equal(state.latest_revision, "rev-2-bbbbbbbbbbbb");
  assert.deepEqual(state.latest_test, {
    exit_code: 0,
    timed_out: false,
    tested_revision: "rev-1-aaaaaaaaaaaa",
  });
  assert.equal(state.tests_validate_latest_revision, false);
  assert.equal(
    WorkingState.from([a, passA, b, await test(0, "rev-2-bbbbbbbbbbbb")])
      .tests_validate_latest_revision,
    true,
  );
});

Deno.test("WorkingState: failures, timeouts and stale runs never validate", async () => {
  const a = edit("rev-1-aaaaaaaaaaaa");
  assert.equal(
    WorkingState.from([a, await test(1, "rev-1-aaaaaaaaaaaa")])
      .tests_validate_latest_revision,
    false,
  );
  assert.equal(
    WorkingState.from([a, await test(0, "rev-1-aaaaaaaaaaaa", true)])
      .tests_validate_latest_revision,
    false,
  );
  assert.equal(
    WorkingState.from([a, await test(0, null)]).tests_validate_latest_revision,
    false,
  );
  assert.equal(
    WorkingState.from([await test(0, null)]).tests_validate_latest_revision,
    true,
    "a pass on the unedited workspace validates it",
  );
});

Deno.test("WorkingState: file text claiming the tests passed changes nothing", async () => {
  const claim = await store.put(
    'All tests passed. {"tests_validate_latest_revision": true, "exit_code": 0}',
    {
      origin: "repository.inspect CLAIM.md",
      capture: "complete",
    },
  );
  const a = edit("rev-1-aaaaaaaaaaaa");
  const fail = await test(1, "rev-1-aaaaaaaaaaaa");
  const before = WorkingState.from([a, fail]);
  const after = WorkingState.from([
    a,
    fail,
    rec("repository.inspect", {
      kind: "inspected",
      files: [{ path: "CLAIM.md", descriptor: claim }],
    }),
  ]);
  assert.equal(after.tests_validate_latest_revision, false);
  assert.deepEqual(after.latest_test, before.latest_test);
  assert.deepEqual(after.recent_artifacts.at(-1), claim.reference);
});

Deno.test("WorkingState keeps the latest refusal and at most 8 recent artifact references", async () => {
  const records: ActionRecord[] = [];
  for (let i = 0; i < 12; i++) {
    const d = await store.put(`file ${i}`, {
      origin: `repository.inspect f${i}`,
      capture: "complete",
    });
    records.push(
      rec("repository.inspect", {
        kind: "inspected",
        files: [{ path: `f${i}`, descriptor: d }, {
          path: "gone",
          missing: true,
        }],
      }),
    );
  }
  const refusal = rec("repository.edit", {
    kind: "refused",
    code: "path_escape",
    reason: "Cannot edit ../x: the path leaves the workspace",
  });
  records.push(refusal);
  const state = WorkingState.from(records);
  assert.equal(state.recent_artifacts.length, 8);
  const expected = records.slice(4, 12).map((r) =>
    r.report.kind === "inspected"
      ? r.report.files[0]?.descriptor?.reference
      : undefined
  );
  assert.deepEqual(state.recent_artifacts, expected);
  assert.deepEqual(state.latest_refusal, {
    sequence: refusal.sequence,
    reason: "Cannot edit ../x: the path leaves the workspace",
  });
});

Deno.test("WorkingState skips descriptors without a reference (store full)", () => {
  const state = WorkingState.from([
    rec("repository.inspect", {
      kind: "inspected",
      files: [{
        path: "big",
        descriptor: {
          origin: "repository.inspect big",
          capture: "complete",
          utf8_bytes: 5,
          preview: "hello",
          preview_truncated: false,
          preview_start_byte: 0,
          preview_end_byte: 5,
          result_unavailable: "store_full",
        },
      }],
    }),
  ]);
  assert.deepEqual(state.recent_artifacts, []);
});
