import assert from "node:assert/strict";
import { EphemeralSession } from "../../lib/persist/ephemeral_session.ts";
import { openSession } from "../../lib/persist/session_scope.ts";
import { saveSnapshot, SessionStore } from "../../lib/persist/session_store.ts";
import { shouldPersist } from "../../lib/persist/tool_policy.ts";
import { RUN, sampleRun, snapshotTree, tempLayout } from "./_session.ts";

Deno.test("an ephemeral stage with the same session id writes nothing", async (t) => {
  await using layout = await tempLayout();
  const { snapshot } = await sampleRun();
  const owner = await openSession({
    kind: "owner",
    root: layout.root,
    workspace: layout.workspace,
    session: "run-42",
    keyFile: layout.keyFile,
    run: RUN,
  });
  await saveSnapshot(owner, snapshot);
  const before = await snapshotTree(layout.base);

  for (const stage of ["compactor", "summariser", "helper"]) {
    await t.step(
      `a ${stage} opened by scope gets a handle that cannot write`,
      async () => {
        const handle = await openSession({
          kind: "ephemeral",
          stage,
          session: "run-42",
        });
        assert.equal(handle.persists, false);
        assert.equal(handle.session, "run-42");
        assert.equal("save" in handle, false);
        assert.equal("root" in handle, false);
        assert.equal(Object.isFrozen(handle), true);
        // @ts-expect-error: an ephemeral handle has no save() at the type level.
        assert.throws(() => handle.save(snapshot), TypeError);
        assert.equal(
          shouldPersist("tests.run", 1e9, { owner: handle.persists }),
          false,
        );
      },
    );
  }

  await t.step(
    "a stage forked from the owner shares the id but not the root",
    () => {
      const forked = owner.fork("compactor");
      assert.ok(forked instanceof EphemeralSession);
      assert.equal(forked.session, owner.session);
      assert.equal(forked.fork("helper").persists, false);
      assert.throws(
        () => (forked as unknown as { save(): void }).save(),
        TypeError,
      );
    },
  );

  await t.step("a frozen handle cannot be given a root or a writer", () => {
    const forked = owner.fork("summariser");
    assert.throws(() => {
      (forked as unknown as Record<string, unknown>)["save"] = saveSnapshot
        .bind(null, owner);
    }, TypeError);
  });

  await t.step(
    "the owner's session root is byte-identical afterwards",
    async () => {
      assert.deepEqual(await snapshotTree(layout.base), before);
    },
  );

  await t.step("only the owner scope gets a SessionStore", async () => {
    assert.ok(owner instanceof SessionStore);
    await owner.close();
    const again = await openSession({
      kind: "owner",
      root: layout.root,
      workspace: layout.workspace,
      keyFile: layout.keyFile,
      run: RUN,
    });
    assert.ok(again instanceof SessionStore);
    assert.equal(again.session, "run-42");
    await again.close();
  });

  await t.step("an unknown scope kind is refused", async () => {
    await assert.rejects(
      openSession(
        { kind: "shared" } as unknown as Parameters<typeof openSession>[0],
      ),
      TypeError,
    );
  });
});
