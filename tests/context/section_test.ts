import assert from "node:assert/strict";
import { SECTION_NAMES } from "../../lib/context/section.ts";
import { Section, StringEntry } from "../../mod.ts";
import { context, pool } from "./_helpers.ts";

Deno.test("Section.add() appends entries and wraps strings", async (t) => {
  await t.step(
    "a string becomes a system StringEntry from the section's pool",
    () => {
      const ids = pool();
      const section = new Section("foundation", { ids });
      const entry = section.add("Rule");
      assert.ok(entry instanceof StringEntry);
      assert.equal(entry.role, "system");
      assert.equal(entry.compile(), "Rule");
      assert.ok(ids.has(entry.id!));
      assert.deepEqual(section.entries, [entry]);
    },
  );
  await t.step("an entry object is added as is", () => {
    const ctx = context();
    const entry = new StringEntry("x", { ids: ctx.ids });
    assert.equal(ctx.foundation.add(entry), entry);
    assert.equal(ctx.foundation.entries.length, 1);
  });
  await t.step("anything else is refused", () => {
    assert.throws(
      () => context().foundation.add(42 as unknown as string),
      TypeError,
    );
  });
});

Deno.test("Section.remove() takes an entry or an id", async (t) => {
  const ctx = context();
  const a = ctx.convo.add("a");
  const b = ctx.convo.add("b");
  await t.step("by id", () => {
    assert.equal(ctx.convo.remove(a.id!), true);
    assert.deepEqual(ctx.convo.entries, [b]);
  });
  await t.step("by object", () => {
    assert.equal(ctx.convo.remove(b), true);
    assert.equal(ctx.convo.entries.length, 0);
  });
  await t.step("something not there", () => {
    assert.equal(ctx.convo.remove(b), false);
    assert.equal(ctx.convo.remove("zz"), false);
  });
});

Deno.test("Sections are named in compile order", () => {
  assert.deepEqual(
    SECTION_NAMES,
    "foundation focus topic convo step attention".split(" "),
  );
  assert.ok(Object.isFrozen(SECTION_NAMES));
  const ctx = context();
  for (const name of SECTION_NAMES) assert.equal(ctx[name].name, name);
  assert.equal(ctx.section("CONVO"), ctx.convo);
});
