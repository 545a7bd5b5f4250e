// render() reuses a section's last joined text, and a root's last whole
// text, while every entry would show or hide exactly as before. Dedup can
// flip an entry's visibility without its own section changing, so these
// tests change something elsewhere and check the reused parts follow.
import assert from "node:assert/strict";
import { Context, IdPool, StringEntry } from "../../mod.ts";

const ids = new IdPool({ seed: 7 });
const keep = { clearVolatile: false } as const;

Deno.test("render() shows a duplicate again once the copy that hid it goes", () => {
  const root = new Context("root", { ids });
  const visitor = new Context("helper", { ids });
  root.include(visitor);
  const first = root.foundation.add("shared rule");
  visitor.convo.add("shared rule");
  visitor.convo.add("own line");
  const before = root.render(keep);
  assert.equal(before.match(/shared rule/g)?.length, 1);
  assert.equal(root.render(keep), before);
  root.foundation.remove(first);
  const after = root.render(keep);
  assert.match(after, /># Conversation from helper\nshared rule\n\nown line/);
  root.foundation.add("shared rule");
  assert.equal(root.render(keep), before);
});

Deno.test("render() of two roots sharing a visitor dedups each against its own entries", () => {
  const a = new Context("a", { ids });
  const b = new Context("b", { ids });
  const shared = new Context("shared", { ids });
  a.include(shared);
  b.include(shared);
  a.foundation.add("only in a");
  shared.topic.add("only in a");
  shared.topic.add("common");
  for (let round = 0; round < 3; round++) {
    assert.doesNotMatch(a.render(keep), /># Topic from shared\nonly in a/);
    assert.match(b.render(keep), /># Topic from shared\nonly in a\n\ncommon/);
  }
});

Deno.test("render() after a render shows appends, new visitors and a cleared step", () => {
  const root = new Context("root", { ids });
  root.convo.add("one");
  root.step.add("$ ls");
  const first = root.render(keep);
  assert.match(first, /one\n\n\$ ls$/);
  assert.equal(root.render(), first);
  assert.doesNotMatch(root.render(keep), /\$ ls/);
  root.convo.add(new StringEntry("two", { ids, name: "n" }));
  assert.match(root.render(keep), /one\n\n# n\ntwo$/);
  const visitor = new Context("late", { ids });
  visitor.focus.add("from the visitor");
  root.include(visitor);
  assert.match(root.render(keep), /># Focus from late\nfrom the visitor/);
});
