import assert from "node:assert/strict";
import { runStateOf } from "../../lib/persist/session_verify.ts";
import { sliceSessionHooks } from "../../lib/persist/slice_session.ts";
import {
  sessionHookParts,
  SliceSessionHooks,
} from "../../lib/slice/run_state.ts";
import {
  createSession,
  openSession,
  sampleRun,
  tempLayout,
} from "./_session.ts";

Deno.test("sliceSessionHooks() saves every snapshot and resumes from the loaded run state", async (t) => {
  await using layout = await tempLayout();
  const { snapshot } = await sampleRun();
  const session = await createSession(layout);
  const saved: number[] = [];
  const hooks = sliceSessionHooks(session, {
    onSaved: (info, counters) => saved.push(counters.steps, info.persisted),
  });

  await t.step("the hooks show nothing of what they carry", () => {
    assert.ok(hooks instanceof SliceSessionHooks);
    assert.deepEqual(Object.keys(hooks), []);
  });

  await t.step("a snapshot is saved, then reported", async () => {
    const parts = sessionHookParts(hooks);
    assert.deepEqual(parts.forbiddenRoots, session.forbiddenRoots);
    assert.equal(parts.resume, undefined);
    await parts.onSnapshot(snapshot);
    assert.deepEqual(saved, [3, 1]);
  });
  await session.close();

  await t.step(
    "a resume carries the loaded run state, results and unavailable results",
    async () => {
      const store = await openSession(layout);
      const loaded = await store.load();
      const { resume } = sessionHookParts(
        sliceSessionHooks(store, { resume: loaded }),
      );
      await store.close();
      assert.deepEqual(resume?.records, runStateOf(loaded).records);
      assert.equal(resume?.steps, 3);
      assert.equal(resume?.results, loaded.results);
      assert.equal(resume?.unavailable, loaded.unavailable);
    },
  );
});
