// The compiler keeps each section's texts and identity numbers between
// compiles; these tests change a context between renders in every way the
// API allows and check that the next render shows exactly the change.
import assert from "node:assert/strict";
import {
  Context,
  Entry,
  FileEntry,
  IdPool,
  type Role,
  StringEntry,
} from "../../mod.ts";
import { tempDir } from "../_kit.ts";
import { sharedEntry } from "./_helpers.ts";

function fresh(): Context {
  return new Context("agent", { ids: new IdPool({ seed: 1 }) });
}

Deno.test("render() after a change shows the change, whatever the change", async (t) => {
  await t.step("appending after a render", () => {
    const ctx = fresh();
    ctx.convo.add("one");
    assert.match(ctx.render(), /one$/);
    ctx.convo.add(new StringEntry("two", { name: "n" }));
    assert.match(ctx.render(), /one\n\n# n\ntwo$/);
  });
  await t.step("removing, clearing, redacting and remembering", () => {
    const ctx = fresh();
    const a = ctx.convo.add("alpha");
    const b = ctx.convo.add("beta");
    ctx.render();
    ctx.convo.remove(a);
    assert.equal(
      ctx.render(),
      "> CONVO - what has been said and done and learned?\nbeta",
    );
    ctx.redact(b, { tombstone: "[gone]" });
    assert.match(ctx.render(), /\[gone\]$/);
    const step = ctx.step.add("$ ls");
    ctx.remember(step);
    assert.match(ctx.render(), /\[gone\]\n\n\$ ls$/);
    ctx.convo.clear();
    assert.equal(ctx.render(), "");
  });
  await t.step("dedup follows removal of the first copy", () => {
    const ctx = fresh();
    const visitor = fresh();
    ctx.include(visitor);
    const first = ctx.foundation.add("same");
    visitor.foundation.add("same");
    assert.equal(ctx.render(), "> FOUNDATION\nsame");
    ctx.foundation.remove(first);
    assert.equal(ctx.render(), "> FOUNDATION\n># agent (visitor)\nsame");
  });
  await t.step(
    "an entry held by two sections keeps compiling after one lets go",
    () => {
      const ctx = fresh();
      const shared = sharedEntry(ctx, "topic", "attention");
      assert.doesNotMatch(ctx.render(), /ATTENTION/);
      ctx.topic.remove(shared);
      assert.equal(ctx.render(), "> ATTENTION\nshared");
    },
  );
  await t.step("a file edited between renders", async () => {
    await using dir = await tempDir();
    const path = `${dir.path}/f.md`;
    Deno.writeTextFileSync(path, "v1");
    const ctx = fresh();
    ctx.topic.add(new FileEntry(path, { name: "f", ids: ctx.ids }));
    assert.match(ctx.render(), /# f\nv1/);
    Deno.writeTextFileSync(path, "v2");
    assert.match(ctx.render(), /# f\nv2/);
  });
});

class Mutable extends Entry {
  text: string;
  constructor(text: string, ids: IdPool) {
    super({ ids });
    this.text = text;
  }
  get role(): Role {
    return "system";
  }
  compile(): string {
    return this.text;
  }
  identity(): string {
    return `mutable:${this.text}`;
  }
}

Deno.test("a custom entry whose text and identity change compiles as it is now", () => {
  const ctx = fresh();
  const entry = new Mutable("a", ctx.ids);
  ctx.foundation.add(entry);
  ctx.foundation.add(new Mutable("b", ctx.ids));
  assert.equal(ctx.render(), "> FOUNDATION\na\n\nb");
  entry.text = "b"; // now a duplicate of the second entry
  assert.equal(ctx.render(), "> FOUNDATION\nb");
  entry.text = "c";
  assert.equal(ctx.render(), "> FOUNDATION\nc\n\nb");
});

Deno.test("step is cleared after render() and shows each entry as added", () => {
  const ctx = fresh();
  ctx.step.add("x");
  ctx.step.add("x");
  assert.equal(ctx.render(), "x\n\nx");
  assert.equal(ctx.render(), "");
  ctx.step.add("y");
  assert.equal(ctx.render(), "y");
});
