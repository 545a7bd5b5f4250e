import assert from "node:assert/strict";
import {
  type Compactor,
  CompileOptionsError,
  Context,
  IncludeCycleError,
  StringEntry,
  UnknownEntryError,
} from "../../mod.ts";
import { SECTION_NAMES } from "../../lib/context/section.ts";
import { context, filled } from "./_helpers.ts";

Deno.test("A new context has a name, six empty sections and no visitors", () => {
  const ctx = context("agent");
  assert.equal(ctx.name, "agent");
  assert.equal(ctx.visitors.length, 0);
  assert.equal([...ctx.entries()].length, 0);
  assert.equal(ctx.render(), "");
  assert.throws(() => new Context(1 as unknown as string), TypeError);
});

Deno.test("Context.render() lays out sections with the upstream headers", async (t) => {
  await t.step("foundation has a > FOUNDATION banner", () => {
    const ctx = context();
    ctx.foundation.add("You are helpful.");
    assert.equal(ctx.render(), "> FOUNDATION\nYou are helpful.");
  });
  await t.step("every section in order, entries joined by a blank line", () => {
    // Added in reverse: render() orders by section, not by addition.
    const ctx = filled({
      attention: ["Remember the deadline."],
      step: ["$ ls\nsrc"],
      convo: ["User said hi."],
      topic: ["Project Loom."],
      focus: ["Review PR #42."],
      foundation: ["Rule one.", "Rule two."],
    });
    assert.equal(
      ctx.render(),
      [
        "> FOUNDATION\nRule one.\n\nRule two.",
        "------\n> FOCUS\nReview PR #42.\n------",
        "------\n> TOPIC\nProject Loom.\n------",
        "> CONVO - what has been said and done and learned?\nUser said hi.",
        "$ ls\nsrc",
        "> ATTENTION\nRemember the deadline.",
      ].join("\n\n"),
    );
  });
  await t.step("a named entry gets a # NAME header", () => {
    const ctx = context();
    ctx.foundation.add(new StringEntry("I am Loom.", { name: "IDENTITY" }));
    assert.match(ctx.render(), /# IDENTITY\nI am Loom\./);
  });
  await t.step("entries of every role are rendered", () => {
    const ctx = context();
    ctx.foundation.add("sys");
    ctx.convo.add(new StringEntry("usr", { role: "user" }));
    ctx.convo.add(new StringEntry("ast", { role: "assistant" }));
    const text = ctx.render();
    for (const word of ["sys", "usr", "ast"]) assert.ok(text.includes(word));
  });
  await t.step("empty and whitespace-only entries are left out", () => {
    const ctx = context();
    ctx.foundation.add("");
    ctx.foundation.add("  \n");
    assert.equal(ctx.render(), "");
    assert.deepEqual(ctx.toMessages(), [{ role: "system", content: [] }]);
  });
});

Deno.test("Visitors interleave in the seed's order, depth first", async (t) => {
  await t.step("include() adds a visitor, exclude() removes it", () => {
    const ctx = context("main");
    const visitor = context("security");
    visitor.foundation.add("Always validate user input.");
    ctx.include(visitor);
    ctx.include(visitor);
    assert.deepEqual(ctx.visitors, [visitor]);
    const text = ctx.render();
    assert.ok(text.toLowerCase().includes("security"));
    assert.ok(text.includes("Always validate user input."));
    assert.equal(ctx.exclude(visitor), true);
    assert.equal(ctx.exclude(visitor), false);
    assert.equal(ctx.visitors.length, 0);
    assert.equal(ctx.render(), "");
  });
  await t.step(
    "the section table: self/visitors order and visitor labels",
    () => {
      const ctx = context("main");
      const v = context("vis");
      ctx.include(v);
      for (const name of SECTION_NAMES) {
        ctx[name].add(`self ${name}`);
        v[name].add(`visitor ${name}`);
      }
      assert.equal(
        ctx.render(),
        [
          "> FOUNDATION\nself foundation\n\n># vis (visitor)\nvisitor foundation",
          "------\n> FOCUS\n># Focus from vis\nvisitor focus\n\nself focus\n------",
          "------\n> TOPIC\nself topic\n\n># Topic from vis\nvisitor topic\n------",
          "> CONVO - what has been said and done and learned?\n># Conversation from vis\nvisitor convo\n\nself convo",
          "self step",
          "> ATTENTION\n># Attention from vis\nvisitor attention\n\nself attention",
        ].join("\n\n"),
      );
    },
  );
  await t.step("a visitor's visitors are interleaved too, depth first", () => {
    const root = context("root");
    const a = context("a");
    const b = context("b");
    const c = context("c");
    root.include(a);
    a.include(b);
    root.include(c);
    for (
      const [ctx, label] of [[root, "root"], [a, "a"], [b, "b"], [
        c,
        "c",
      ]] as const
    ) {
      ctx.foundation.add(`F ${label}`);
      ctx.convo.add(`C ${label}`);
    }
    const texts = root.toMessages()[0]!.content.map((blk) =>
      blk.type === "text" ? blk.text : ""
    );
    assert.deepEqual(texts, [
      "F root",
      "F a",
      "F b",
      "F c",
      "C b",
      "C a",
      "C c",
      "C root",
    ]);
  });
  await t.step("a visitor's step is never compiled", () => {
    const ctx = context("main");
    const v = context("vis");
    v.step.add("visitor output");
    ctx.include(v);
    assert.equal(ctx.render(), "");
    assert.equal(v.step.entries.length, 1);
  });
});

Deno.test("Including a context in itself, directly or through others, throws", () => {
  const a = context("a");
  const b = context("b");
  const c = context("c");
  assert.throws(
    () => a.include(a),
    (e) => e instanceof IncludeCycleError && e.code === "include_cycle",
  );
  a.include(b);
  b.include(c);
  assert.throws(() => c.include(a), IncludeCycleError);
  assert.throws(() => b.include(a), IncludeCycleError);
  assert.deepEqual(c.visitors, []);
});

Deno.test("Duplicate content compiles once across the whole include tree", async (t) => {
  await t.step("the same text in self and a visitor appears once", () => {
    const ctx = context("main");
    const v = context("vis");
    ctx.foundation.add("Shared rule.");
    v.foundation.add("Shared rule.");
    ctx.include(v);
    assert.equal(ctx.render().split("Shared rule.").length - 1, 1);
  });
  await t.step(
    "shared rules included by two agents under one parent compile once",
    () => {
      const shared = context("shared-rules");
      shared.foundation.add("RULES");
      const agentA = context("a");
      const agentB = context("b");
      agentA.include(shared);
      agentB.include(shared);
      const parent = context("parent");
      parent.include(agentA);
      parent.include(agentB);
      assert.equal(parent.render().split("RULES").length - 1, 1);
      assert.equal(parent.toMessages()[0]!.content.length, 1);
    },
  );
  await t.step("identity is the content, not the object or name", () => {
    const ctx = context();
    ctx.foundation.add(new StringEntry("same", { name: "one" }));
    ctx.attention.add(new StringEntry("same", { name: "two" }));
    assert.equal(ctx.render(), "> FOUNDATION\n# one\nsame");
  });
  await t.step(
    "step is never deduplicated: it shows what the command printed",
    () => {
      const ctx = filled({ foundation: ["ok"], step: ["ok"] });
      assert.equal(ctx.render(), "> FOUNDATION\nok\n\nok");
    },
  );
});

Deno.test("Step is volatile: cleared after every compile unless clearVolatile is false", async (t) => {
  for (
    const [label, run] of [
      [
        "render",
        (c: Context, keep: boolean) => c.render({ clearVolatile: !keep }),
      ],
      [
        "toMessages",
        (c: Context, keep: boolean) => c.toMessages({ clearVolatile: !keep }),
      ],
      [
        "toAnthropic",
        (c: Context, keep: boolean) => c.toAnthropic({ clearVolatile: !keep }),
      ],
      [
        "toOpenAI",
        (c: Context, keep: boolean) => c.toOpenAI({ clearVolatile: !keep }),
      ],
    ] as const
  ) {
    await t.step(`${label}() clears step by default`, () => {
      const ctx = context();
      ctx.step.add("tool output");
      assert.ok(JSON.stringify(run(ctx, false)).includes("tool output"));
      assert.equal(ctx.step.entries.length, 0);
      assert.ok(!JSON.stringify(run(ctx, false)).includes("tool output"));
    });
    await t.step(`${label}() keeps step with clearVolatile: false`, () => {
      const ctx = context();
      ctx.step.add("tool output");
      run(ctx, true);
      assert.ok(JSON.stringify(run(ctx, true)).includes("tool output"));
      assert.equal(ctx.step.entries.length, 1);
    });
  }
  await t.step("render() with no options clears step", () => {
    const ctx = context();
    ctx.step.add("x");
    ctx.render();
    assert.equal(ctx.step.entries.length, 0);
  });
  await t.step("bad options throw before anything is cleared", () => {
    const ctx = context();
    ctx.step.add("x");
    assert.throws(
      () => ctx.toMessages({ cacheBreakpoints: ["nope" as "step"] }),
      CompileOptionsError,
    );
    assert.equal(ctx.step.entries.length, 1);
  });
});

Deno.test("Context.remember() keeps entries in convo", async (t) => {
  await t.step("a new entry object is added to convo", () => {
    const ctx = context();
    const entry = ctx.remember(
      new StringEntry("The API returns JSON", { ids: ctx.ids }),
    );
    assert.ok(entry instanceof StringEntry);
    assert.deepEqual(ctx.convo.entries, [entry]);
    assert.ok(ctx.render().includes("The API returns JSON"));
  });
  await t.step("a string is an id, as for redact()", () => {
    const ctx = context();
    const output = ctx.step.add("tests pass");
    assert.equal(ctx.remember(output.id!), output);
    assert.deepEqual(ctx.convo.entries, [output]);
    assert.equal(ctx.step.entries.length, 0);
  });
  await t.step("an unknown id throws UnknownEntryError", () => {
    const ctx = context();
    ctx.step.add("output");
    assert.throws(
      () => ctx.remember("The API returns JSON"),
      (e) =>
        e instanceof UnknownEntryError && e.code === "unknown_entry" &&
        /^Cannot remember entry The API returns JSON: no entry of context .* has that id$/
          .test(e.message),
    );
    assert.equal(ctx.convo.entries.length, 0);
  });
  await t.step("summarize stores Learned: TEXT", () => {
    const ctx = context();
    ctx.remember(ctx.step.add("API returns JSON"), { summarize: true });
    assert.ok(ctx.render().includes("Learned: API returns JSON"));
    ctx.remember(ctx.step.add("Learned: twice"), { summarize: true });
    assert.ok(!ctx.render().includes("Learned: Learned:"));
  });
  await t.step(
    "a step entry moves to convo with the same id and survives the clear",
    () => {
      const ctx = context();
      const result = ctx.step.add("important output");
      const id = result.id;
      assert.equal(ctx.remember(result), result);
      assert.equal(result.id, id);
      assert.equal(ctx.step.entries.length, 0);
      ctx.render();
      assert.equal(result.id, id);
      assert.ok(ctx.render().includes("important output"));
    },
  );
  await t.step(
    "only that object leaves step, not another entry with equal text",
    () => {
      const ctx = context();
      const first = ctx.step.add("same text");
      const second = ctx.step.add("same text");
      ctx.remember(second);
      assert.deepEqual(ctx.step.entries, [first]);
      assert.notEqual(first.id, undefined);
      assert.deepEqual(ctx.convo.entries, [second]);
    },
  );
  await t.step("remembering an entry already in convo changes nothing", () => {
    const ctx = context();
    const entry = ctx.convo.add("kept");
    ctx.remember(entry);
    assert.equal(ctx.convo.entries.length, 1);
  });
});

Deno.test("Context.redact() removes entries by object or id", async (t) => {
  await t.step("removal empties the section and returns the entry", () => {
    const ctx = context();
    const entry = ctx.convo.add("secret");
    assert.equal(ctx.redact(entry), entry);
    assert.equal(ctx.convo.entries.length, 0);
  });
  await t.step("by id: get() no longer finds it", () => {
    const ctx = context();
    const entry = ctx.convo.add("secret");
    const id = entry.id!;
    assert.equal(ctx.redact(id), entry);
    assert.equal(ctx.get(id), undefined);
  });
  await t.step("a tombstone replaces the text in place", () => {
    const ctx = context();
    ctx.convo.add("before");
    const entry = ctx.convo.add("my SSN is 123");
    ctx.convo.add("after");
    assert.equal(ctx.redact(entry, { tombstone: "[REDACTED]" }), entry);
    const text = ctx.render();
    assert.ok(text.includes("[REDACTED]") && !text.includes("123"));
    assert.equal(ctx.convo.entries.length, 3);
    assert.ok(text.indexOf("before") < text.indexOf("[REDACTED]"));
    assert.ok(text.indexOf("[REDACTED]") < text.indexOf("after"));
  });
  await t.step("by id with a tombstone", () => {
    const ctx = context();
    const entry = ctx.convo.add("card 4111");
    assert.equal(ctx.redact(entry.id!, { tombstone: "[REDACTED]" }), entry);
    assert.equal(
      ctx.render(),
      "> CONVO - what has been said and done and learned?\n[REDACTED]",
    );
  });
  await t.step("a tombstone keeps the entry's name and role", () => {
    const ctx = context();
    const entry = ctx.convo.add(
      new StringEntry("password: x", { name: "config.yaml", role: "user" }),
    );
    ctx.redact(entry, { tombstone: "[REDACTED: secrets]" });
    const [tombstone] = ctx.convo.entries;
    assert.equal(tombstone?.name, "config.yaml");
    assert.equal(tombstone?.role, "user");
    assert.match(ctx.render(), /# config\.yaml\n\[REDACTED: secrets\]/);
  });
  await t.step("it searches all six sections", () => {
    const ctx = context();
    const entries =
      (["foundation", "focus", "topic", "convo", "step", "attention"] as const)
        .map((name) => ctx[name].add(`in ${name}`));
    for (const entry of entries) assert.equal(ctx.redact(entry), entry);
    assert.equal(ctx.render(), "");
  });
  await t.step("an entry or id not in the context throws", () => {
    const ctx = context();
    assert.throws(
      () =>
        ctx.redact(new StringEntry("elsewhere", { ids: ctx.ids, name: "x" })),
      (e) =>
        e instanceof UnknownEntryError &&
        /^Cannot redact entry \S+ \(x\): it is not in context /.test(e.message),
    );
    assert.throws(
      () => ctx.redact("zzz"),
      (e) =>
        e instanceof UnknownEntryError &&
        /^Cannot redact entry zzz: no entry of context .* has that id$/.test(
          e.message,
        ),
    );
  });
});

Deno.test("Context.get() and entries() look at the context's own sections", async (t) => {
  const ctx = context();
  const f = ctx.foundation.add("f");
  const c1 = ctx.convo.add("c1");
  const c2 = ctx.convo.add("c2");
  const s = ctx.step.add("s");
  await t.step("entries() lists all in section order", () => {
    assert.deepEqual([...ctx.entries()], [f, c1, c2, s]);
  });
  await t.step("entries() is a read-only array like section.entries", () => {
    const all = ctx.entries();
    assert.ok(Array.isArray(all) && Array.isArray(ctx.convo.entries));
    assert.equal(all.length, 4);
    assert.deepEqual(ctx.entries("convo"), ctx.convo.entries);
    assert.ok(Object.isFrozen(all));
  });
  await t.step("entries(section) filters, in any case", () => {
    assert.equal([...ctx.entries("convo")].length, 2);
    assert.equal([...ctx.entries("foundation")].length, 1);
    assert.equal([...ctx.entries("CONVO")].length, 2);
    assert.equal([...ctx.entries("Convo")].length, 2);
    assert.throws(
      () => [...ctx.entries("nope" as "convo")],
      CompileOptionsError,
    );
  });
  await t.step("get(id) returns the very entry, or undefined", () => {
    assert.equal(ctx.get(c2.id!), c2);
    assert.equal(ctx.get("zzz"), undefined);
  });
});

Deno.test("Context.compact() hands the context to the compactor and returns its result", () => {
  const ctx = context();
  for (let i = 0; i < 5; i++) ctx.convo.add(`turn ${i}`);
  const keepLastTwo: Compactor<number> = {
    compact(target) {
      const old = target.convo.entries.slice(0, -2);
      for (const entry of old) target.convo.remove(entry);
      target.convo.add(`(${old.length} earlier turns)`);
      return old.length;
    },
  };
  assert.equal(ctx.compact(keepLastTwo), 3);
  assert.deepEqual([...ctx.entries("convo")].map((e) => e.compile()), [
    "turn 3",
    "turn 4",
    "(3 earlier turns)",
  ]);
});
