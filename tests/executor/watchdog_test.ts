import assert from "node:assert/strict";
import { Watchdog } from "../../lib/executor/_watchdog.ts";

const wait = (ms: number) => new Promise((done) => setTimeout(done, ms));

Deno.test("Watchdog names the request a silent worker was serving", async (t) => {
  await t.step(
    "silence past the limit calls back with the oldest request",
    async () => {
      const silent = Promise.withResolvers<string>();
      const dog = new Watchdog(10, silent.resolve);
      dog.watch("inspect");
      assert.equal(await silent.promise, "inspect");
    },
  );

  await t.step("a message re-arms it for the request now oldest", async () => {
    const silent = Promise.withResolvers<string>();
    const dog = new Watchdog(10, silent.resolve);
    dog.watch("inspect");
    dog.watch("survey");
    assert.equal(await silent.promise, "survey");
  });

  await t.step(
    "with nothing waiting, or stopped, it never calls back",
    async () => {
      const calls: string[] = [];
      const idle = new Watchdog(5, (op) => calls.push(op));
      idle.watch("edit");
      idle.watch(undefined);
      const stopped = new Watchdog(5, (op) => calls.push(op));
      stopped.watch("edit");
      stopped.stop();
      await wait(30);
      assert.deepEqual(calls, []);
    },
  );
});
