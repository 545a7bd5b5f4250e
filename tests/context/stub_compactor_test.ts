import assert from "node:assert/strict";
import { Context, StubCompactor } from "../../mod.ts";

Deno.test("StubCompactor.compact() returns the compiled context and changes nothing", () => {
  const shared = new Context("shared");
  shared.foundation.add("Always validate user input.");
  const ctx = new Context("agent");
  ctx.foundation.add("You are a helpful assistant.");
  ctx.convo.add("Earlier turn");
  ctx.step.add("Current command output");
  ctx.include(shared);
  const expected = ctx.render({ clearVolatile: false });
  const text = ctx.compact(new StubCompactor());
  assert.equal(text, expected);
  assert.ok(text.includes("Always validate user input."));
  assert.ok(text.includes("Current command output"));
  // The volatile step survives, so compacting twice gives the same text.
  assert.equal(ctx.step.entries.length, 1);
  assert.equal(ctx.compact(new StubCompactor()), expected);
});
