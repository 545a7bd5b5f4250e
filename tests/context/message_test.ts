import assert from "node:assert/strict";
import { CompileOptionsError, type Message, StringEntry } from "../../mod.ts";
import { SECTION_NAMES } from "../../lib/context/section.ts";
import { context, filled, ruled } from "./_helpers.ts";

function texts(message: Message | undefined): string[] {
  return (message?.content ?? []).map((b) =>
    b.type === "text" ? b.text : `<${b.type}>`
  );
}

Deno.test("toMessages() puts the system message first, one block per entry", async (t) => {
  await t.step("a single system message with list content", () => {
    const ctx = context();
    ctx.foundation.add("You are Blue.");
    ctx.topic.add("Python help.");
    const messages = ctx.toMessages();
    assert.equal(messages.length, 1);
    assert.equal(messages[0]!.role, "system");
    assert.deepEqual(texts(messages[0]), ["You are Blue.", "Python help."]);
  });
  await t.step("an empty context is a system message without blocks", () => {
    assert.deepEqual(context().toMessages(), [{ role: "system", content: [] }]);
  });
  await t.step("every message has a string role and a list of content", () => {
    const ctx = context();
    ctx.foundation.add("a");
    ctx.convo.add(new StringEntry("b", { role: "user" }));
    for (const message of ctx.toMessages()) {
      assert.equal(typeof message.role, "string");
      assert.ok(Array.isArray(message.content));
    }
  });
  await t.step("no text block is ever empty", () => {
    const ctx = context();
    ctx.foundation.add("");
    ctx.convo.add(new StringEntry(" ", { role: "user", name: "blank" }));
    ctx.topic.add("real");
    const messages = ctx.toMessages();
    for (const message of messages) {
      for (const block of message.content) {
        if (block.type === "text") assert.notEqual(block.text.trim(), "");
      }
    }
    assert.equal(messages.length, 1);
  });
});

Deno.test("toMessages() turns other roles into their own messages", async (t) => {
  await t.step(
    "an assistant entry follows the system message and leaves the system prompt",
    () => {
      const ctx = ruled("System rule.");
      ctx.convo.add(
        new StringEntry("Prefilled answer.", { role: "assistant" }),
      );
      const messages = ctx.toMessages();
      assert.deepEqual(messages.map((m) => m.role), ["system", "assistant"]);
      assert.deepEqual(texts(messages[0]), ["System rule."]);
      assert.deepEqual(texts(messages[1]), ["Prefilled answer."]);
    },
  );
  await t.step("consecutive entries of one role merge into one message", () => {
    const ctx = context();
    ctx.convo.add(new StringEntry("one", { role: "assistant" }));
    ctx.convo.add(new StringEntry("two", { role: "assistant" }));
    const messages = ctx.toMessages();
    assert.equal(messages.length, 2);
    assert.deepEqual(texts(messages[1]), ["one", "two"]);
  });
  await t.step("a named non-system entry gets its header", () => {
    const ctx = context();
    ctx.convo.add(
      new StringEntry("Sure,", { role: "assistant", name: "Prefill" }),
    );
    assert.deepEqual(texts(ctx.toMessages()[1]), ["# Prefill\nSure,"]);
  });
  await t.step("roles keep compile order: system, assistant, user", () => {
    const ctx = context();
    ctx.foundation.add("s");
    ctx.topic.add(new StringEntry("a", { role: "assistant" }));
    ctx.convo.add(new StringEntry("u", { role: "user" }));
    assert.deepEqual(ctx.toMessages().map((m) => m.role), [
      "system",
      "assistant",
      "user",
    ]);
  });
  await t.step("a user entry alone gives system then user", () => {
    const ctx = context();
    ctx.convo.add(new StringEntry("hi", { role: "user" }));
    assert.deepEqual(ctx.toMessages().map((m) => m.role), ["system", "user"]);
  });
  await t.step("a visitor's non-system entries are collected", () => {
    const ctx = context("main");
    const v = context("vis");
    v.convo.add(new StringEntry("from visitor", { role: "assistant" }));
    ctx.include(v);
    assert.deepEqual(texts(ctx.toMessages()[1]), ["from visitor"]);
  });
  await t.step("an assistant step entry is there once, then gone", () => {
    const ctx = context();
    ctx.foundation.add("s");
    ctx.step.add(new StringEntry("thinking", { role: "assistant" }));
    assert.equal(ctx.toMessages().length, 2);
    assert.equal(ctx.toMessages().length, 1);
  });
  await t.step("sections= also filters non-system entries", () => {
    const ctx = context();
    ctx.foundation.add("s");
    ctx.step.add(new StringEntry("volatile", { role: "user" }));
    const messages = ctx.toMessages({
      sections: ["foundation", "convo"],
      clearVolatile: false,
    });
    assert.equal(messages.length, 1);
    assert.equal(ctx.toMessages({ sections: ["STEP"] }).length, 2);
  });
});

Deno.test("Cache breakpoints mark the last block of each named section", async (t) => {
  await t.step("foundation and topic are marked, focus is not", () => {
    const ctx = filled({
      foundation: ["f1", "f2"],
      focus: ["focus"],
      topic: ["topic"],
    });
    const [system] = ctx.toMessages({
      cacheBreakpoints: ["foundation", "topic"],
    });
    assert.deepEqual(system!.content, [
      { type: "text", text: "f1" },
      { type: "text", text: "f2", cache_control: { type: "ephemeral" } },
      { type: "text", text: "focus" },
      { type: "text", text: "topic", cache_control: { type: "ephemeral" } },
    ]);
  });
  await t.step("empty sections contribute nothing", () => {
    const ctx = context();
    ctx.foundation.add("only");
    const [system] = ctx.toMessages({
      cacheBreakpoints: ["foundation", "topic"],
    });
    assert.equal(system!.content.length, 1);
  });
  await t.step("names are case insensitive", () => {
    const ctx = context();
    ctx.foundation.add("f");
    assert.ok(
      ctx.toMessages({ cacheBreakpoints: ["FOUNDATION"] })[0]!.content[0]!
        .cache_control,
    );
  });
  await t.step(
    "four sections can be marked; all six sections take five or more and are refused",
    () => {
      const ctx = context();
      for (const name of SECTION_NAMES) {
        ctx[name].add(name);
      }
      const [system] = ctx.toMessages({
        cacheBreakpoints: ["foundation", "focus", "topic", "convo"],
        clearVolatile: false,
      });
      assert.equal(system!.content.filter((b) => b.cache_control).length, 4);
      assert.throws(
        () =>
          ctx.toMessages({
            cacheBreakpoints: SECTION_NAMES,
          }),
        (e) =>
          e instanceof CompileOptionsError && e instanceof RangeError &&
          e.code === "too_many_breakpoints",
      );
      assert.equal(ctx.step.entries.length, 1);
    },
  );
  await t.step("the same section named twice counts once", () => {
    const ctx = context();
    ctx.foundation.add("f");
    const [system] = ctx.toMessages({
      cacheBreakpoints: ["foundation", "Foundation"],
    });
    assert.equal(system!.content.filter((b) => b.cache_control).length, 1);
  });
  await t.step("an unknown section name is a RangeError", () => {
    assert.throws(
      () => context().toMessages({ cacheBreakpoints: ["history" as "convo"] }),
      (e) => e instanceof CompileOptionsError && e.code === "unknown_section",
    );
    assert.throws(
      () => context().toMessages({ sections: ["x" as "convo"] }),
      CompileOptionsError,
    );
  });
  await t.step(
    "step's block is marked on the first call and gone on the second",
    () => {
      const ctx = context();
      ctx.step.add("output");
      assert.equal(
        ctx.toMessages({ cacheBreakpoints: ["step"] })[0]!.content.length,
        1,
      );
      assert.equal(
        ctx.toMessages({ cacheBreakpoints: ["step"] })[0]!.content.length,
        0,
      );
    },
  );
  await t.step(
    "a visitor's blocks count for the section and carry its marker",
    () => {
      const ctx = context("main");
      const v = context("vis");
      ctx.foundation.add("main rule");
      v.foundation.add("visitor rule");
      ctx.include(v);
      const [system] = ctx.toMessages({ cacheBreakpoints: ["foundation"] });
      assert.deepEqual(system!.content, [
        { type: "text", text: "main rule" },
        {
          type: "text",
          text: "visitor rule",
          cache_control: { type: "ephemeral" },
        },
      ]);
    },
  );
  await t.step(
    "a section whose last entry is an assistant message is marked there, not in system",
    () => {
      const ctx = filled({ foundation: ["rule"], convo: ["system note"] });
      ctx.convo.add(new StringEntry("answer", { role: "assistant" }));
      const messages = ctx.toMessages({ cacheBreakpoints: ["convo"] });
      assert.ok(
        messages[0]!.content.every((b) => b.cache_control === undefined),
      );
      assert.deepEqual(messages[1]!.content[0]!.cache_control, {
        type: "ephemeral",
      });
    },
  );
});

Deno.test("cacheTtl is Anthropic's ttl field, never max_age_seconds", async (t) => {
  const cases = [
    ["5m", { type: "ephemeral", ttl: "5m" }],
    ["1h", { type: "ephemeral", ttl: "1h" }],
    [300, { type: "ephemeral", ttl: "5m" }],
    [3600, { type: "ephemeral", ttl: "1h" }],
  ] as const;
  for (const [ttl, expected] of cases) {
    await t.step(
      `${JSON.stringify(ttl)} gives ${JSON.stringify(expected)}`,
      () => {
        const ctx = context();
        ctx.foundation.add("f");
        const messages = ctx.toMessages({
          cacheBreakpoints: ["foundation"],
          cacheTtl: ttl,
        });
        assert.deepEqual(messages[0]!.content[0]!.cache_control, expected);
        assert.ok(!JSON.stringify(messages).includes("max_age_seconds"));
      },
    );
  }
  await t.step("any other TTL is a RangeError", () => {
    for (const ttl of ["2h", 60, 7200, "300"]) {
      assert.throws(
        () => context().toMessages({ cacheTtl: ttl as "5m" }),
        (e) => e instanceof CompileOptionsError && e.code === "invalid_ttl",
      );
    }
  });
});
