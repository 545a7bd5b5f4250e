import assert from "node:assert/strict";
import { sessionStore } from "../../lib/adapters/session_result_store.ts";
import { retrievalTools } from "../../lib/adapters/ai_sdk.ts";
import { tempDir } from "../_kit.ts";

/** A temp home whose sessions open under one key file, removed when disposed. */
async function sessionHome() {
  const home = await tempDir();
  const keyFile = `${home.path}/key`;
  return {
    /** Opens (or reopens) the session in the folder `name` of the home. */
    open: (name = "s") => sessionStore(`${home.path}/${name}`, { keyFile }),
    [Symbol.asyncDispose]: () => home[Symbol.asyncDispose](),
  };
}

function refusedWith(code: string) {
  return (error: unknown) => (error as { code?: string }).code === code;
}

Deno.test("a session store reopens with every result stored before, by the same ids and digests, and numbers on after them", async () => {
  await using home = await sessionHome();
  const first = await home.open();
  const a = await first.put("alpha\n", { origin: "a", capture: "complete" });
  const b = await first.put("beta\n", { origin: "b", capture: "partial" });
  await first.close();
  await using again = await home.open();
  assert.deepEqual(
    [...again.stored()].map((r) => [r.id, r.sha256, r.origin, r.capture]),
    [
      [a.result, a.sha256, "a", "complete"],
      [b.result, b.sha256, "b", "partial"],
    ],
  );
  const c = await again.put("gamma\n", { origin: "c", capture: "complete" });
  assert.equal(c.result, "result-3");
});

Deno.test("puts made at once are written one after another, so the journal's chain holds", async () => {
  await using home = await sessionHome();
  const store = await home.open();
  const texts = Array.from({ length: 24 }, (_, i) => `result ${i}\n`);
  await Promise.all(
    texts.map((t) => store.put(t, { origin: "x", capture: "complete" })),
  );
  await store.close();
  await using again = await home.open();
  assert.equal(again.count, 24);
});

Deno.test("two stores open on one session at once each read what the other stored, and a closed one refuses to store", async () => {
  await using home = await sessionHome();
  const one = await home.open();
  const two = await home.open();
  const a = await one.put('{"from":"one"}', {
    origin: "a",
    capture: "complete",
  });
  const b = await two.put('{"from":"two"}', {
    origin: "b",
    capture: "complete",
  });
  assert.deepEqual([a.result, b.result], ["result-1", "result-2"]);
  const read = (store: typeof one, d: typeof a) =>
    retrievalTools(store).read_result.execute({
      reference: {
        ...d.reference,
        select: { kind: "json_pointer", pointer: "/from" },
      },
    });
  assert.deepEqual(await read(one, b), { selected_text: "two" });
  assert.deepEqual(await read(two, a), { selected_text: "one" });
  await one.close();
  await assert.rejects(
    one.put("late\n", { origin: "x", capture: "complete" }),
    refusedWith("session_closed"),
  );
  await two.close();
  await using again = await home.open();
  assert.equal(again.count, 2);
});

Deno.test("a reference to a result the session does not hold answers unknown_result with what the model can do, never a crash", async () => {
  await using home = await sessionHome();
  const first = await home.open("one");
  const d = await first.put('{"a":1}', { origin: "x", capture: "complete" });
  await first.close();
  // Another conversation's folder never held it.
  await using other = await home.open("two");
  const tools = retrievalTools(other);
  await assert.rejects(
    tools.read_result.execute({ reference: d.reference }),
    (e: unknown) =>
      refusedWith("unknown_result")(e) &&
      /^unknown_result: .*list_results/.test((e as Error).message) &&
      /call the tool that produced it again/.test((e as Error).message),
  );
});
