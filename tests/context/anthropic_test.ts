import assert from "node:assert/strict";
import type Anthropic from "@anthropic-ai/sdk";
import fc from "fast-check";
import { type AnthropicMessages, StringEntry } from "../../mod.ts";
import { breakpoints, randomContext } from "./_arbitrary.ts";
import { context, GREETING, pictureContext, PNG, ruled } from "./_helpers.ts";

/** Compiles only if the output is a valid Messages API request body. */
function request(
  parts: AnthropicMessages,
): Anthropic.MessageCreateParamsNonStreaming {
  const params: Anthropic.MessageCreateParamsNonStreaming = {
    model: "claude-sonnet-4-5",
    max_tokens: 1,
    ...parts,
  };
  const system: Anthropic.TextBlockParam[] = parts.system;
  const messages: Anthropic.MessageParam[] = parts.messages;
  assert.ok(system && messages);
  return params;
}

/** The API's structural rules, checked at runtime. */
function assertValid(parts: AnthropicMessages): void {
  const req = request(parts);
  const system = req.system as Anthropic.TextBlockParam[];
  let markers = 0;
  for (const block of system) {
    assert.equal(block.type, "text");
    assert.notEqual(block.text.trim(), "");
    if (block.cache_control) markers += 1;
  }
  assert.ok(req.messages.length >= 1, "at least one message");
  assert.equal(req.messages[0]!.role, "user", "starts with user");
  for (const [i, message] of req.messages.entries()) {
    if (i > 0) {
      assert.notEqual(
        message.role,
        req.messages[i - 1]!.role,
        "roles alternate",
      );
    }
    assert.ok(Array.isArray(message.content) && message.content.length > 0);
    for (const block of message.content as Anthropic.ContentBlockParam[]) {
      if (block.type === "text") assert.notEqual(block.text.trim(), "");
      else {
        assert.equal(block.type, "image");
        assert.equal(message.role, "user", "images only in user turns");
      }
      if ("cache_control" in block && block.cache_control) markers += 1;
    }
  }
  assert.ok(markers <= 4, "at most 4 cache_control markers");
  assert.ok(!JSON.stringify(req).includes("max_age_seconds"));
}

Deno.test("toAnthropic() output type-checks as a Messages API request", () => {
  const ctx = pictureContext("You are helpful.", GREETING);
  const params = request(
    ctx.toAnthropic({
      cacheBreakpoints: ["foundation", "topic"],
      cacheTtl: "1h",
    }),
  );
  const msg: Anthropic.MessageParam[] = params.messages;
  assert.equal(msg.length, 2);
});

Deno.test("toAnthropic() keeps the system text only and moves images to user content", () => {
  const ctx = pictureContext("Rules.", [["user", "What is in the picture?"]]);
  const out = ctx.toAnthropic({ cacheBreakpoints: ["foundation", "topic"] });
  assert.deepEqual(out, {
    system: [{
      type: "text",
      text: "Rules.",
      cache_control: { type: "ephemeral" },
    }],
    messages: [{
      role: "user",
      content: [
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: PNG },
        },
        {
          type: "text",
          text: "[Image: shot]",
          cache_control: { type: "ephemeral" },
        },
        { type: "text", text: "What is in the picture?" },
      ],
    }],
  });
  assertValid(out);
});

Deno.test("toAnthropic() makes roles alternate from user", async (t) => {
  await t.step(
    "a context of system entries only gets a filler user turn",
    () => {
      const ctx = ruled("Rules.");
      assert.deepEqual(ctx.toAnthropic().messages, [
        { role: "user", content: [{ type: "text", text: "Continue." }] },
      ]);
      assert.deepEqual(
        ctx.toAnthropic({ fillerText: "Go on." }).messages[0]!.content,
        [
          { type: "text", text: "Go on." },
        ],
      );
    },
  );
  await t.step("a leading assistant turn gets a user turn before it", () => {
    const ctx = context();
    ctx.convo.add(new StringEntry("I recall…", { role: "assistant" }));
    ctx.step.add(new StringEntry("Now?", { role: "user" }));
    assert.deepEqual(ctx.toAnthropic().messages.map((m) => m.role), [
      "user",
      "assistant",
      "user",
    ]);
  });
  await t.step(
    "neighbours of one role merge, so user, user, assistant gives two turns",
    () => {
      const ctx = context();
      ctx.focus.add(new StringEntry("Task", { role: "user" }));
      ctx.convo.add(new StringEntry("More", { role: "user" }));
      ctx.convo.add(new StringEntry("Answer", { role: "assistant" }));
      const { messages } = ctx.toAnthropic();
      assert.deepEqual(messages.map((m) => m.content.length), [2, 1]);
    },
  );
  await t.step(
    "an empty filler is refused rather than sending an empty block",
    () => {
      assert.throws(
        () => context().toAnthropic({ fillerText: " " }),
        TypeError,
      );
    },
  );
});

Deno.test("toAnthropic() output obeys the API rules for any context", () => {
  fc.assert(
    fc.property(
      randomContext,
      breakpoints,
      fc.constantFrom(undefined, "5m", "1h"),
      (ctx, names, ttl) => {
        const out = ctx.toAnthropic({
          cacheBreakpoints: names,
          ...(ttl === undefined ? {} : { cacheTtl: ttl }),
        });
        assertValid(out);
        const markers = JSON.stringify(out).match(/"cache_control"/g)?.length ??
          0;
        assert.ok(markers <= names.length);
        if (ttl !== undefined && markers > 0) {
          assert.ok(JSON.stringify(out).includes(`"ttl":"${ttl}"`));
        }
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("toAnthropic() keeps the cached prefix byte-identical when only step changes", () => {
  const ctx = context();
  ctx.foundation.add("Stable rules.");
  ctx.convo.add(new StringEntry("Earlier turn", { role: "user" }));
  ctx.step.add(new StringEntry("Output A", { role: "user" }));
  const first = ctx.toAnthropic({ cacheBreakpoints: ["foundation", "convo"] });
  ctx.step.add(new StringEntry("Output B", { role: "user" }));
  const second = ctx.toAnthropic({ cacheBreakpoints: ["foundation", "convo"] });
  assert.deepEqual(first.system, second.system);
  assert.deepEqual(
    first.messages[0]!.content[0],
    second.messages[0]!.content[0],
  );
  assert.deepEqual(first.messages[0]!.content[0]!.cache_control, {
    type: "ephemeral",
  });
});
