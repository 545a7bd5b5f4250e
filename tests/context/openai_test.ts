import assert from "node:assert/strict";
import fc from "fast-check";
import type OpenAI from "openai";
import { type OpenAIMessage, StringEntry } from "../../mod.ts";
import { breakpoints, randomContext } from "./_arbitrary.ts";
import { context, GREETING, pictureContext, PNG, ruled } from "./_helpers.ts";

/** Compiles only if the output is valid Chat Completions input. */
function request(
  messages: OpenAIMessage[],
): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
  const typed: OpenAI.Chat.ChatCompletionMessageParam[] = messages;
  return { model: "gpt-x", messages: typed };
}

function assertValid(messages: OpenAIMessage[]): void {
  const req = request(messages);
  for (const message of req.messages) {
    assert.ok(Array.isArray(message.content) && message.content.length > 0);
    for (const part of message.content as { type: string; text?: string }[]) {
      if (part.type === "text") assert.notEqual(part.text?.trim(), "");
      else {
        assert.equal(part.type, "image_url");
        assert.equal(message.role, "user", "images only in user messages");
      }
    }
    if (message.role === "system" || message.role === "developer") {
      assert.equal(req.messages.indexOf(message), 0, "system message first");
    }
  }
  assert.ok(!JSON.stringify(req).includes("cache_control"));
}

Deno.test("toOpenAI() output type-checks as Chat Completions messages", () => {
  const ctx = pictureContext("You are helpful.", GREETING);
  const messages = ctx.toOpenAI({ cacheBreakpoints: ["foundation"] });
  assert.deepEqual(request(messages).messages, [
    { role: "system", content: [{ type: "text", text: "You are helpful." }] },
    {
      role: "user",
      content: [
        {
          type: "image_url",
          image_url: { url: `data:image/png;base64,${PNG}` },
        },
        { type: "text", text: "[Image: shot]" },
        { type: "text", text: "Hi" },
      ],
    },
    { role: "assistant", content: [{ type: "text", text: "Hello!" }] },
  ]);
});

Deno.test("toOpenAI() can name the instructions role developer and omits an empty system message", () => {
  const ctx = ruled("Rules.");
  assert.equal(ctx.toOpenAI({ systemRole: "developer" })[0]!.role, "developer");
  assert.deepEqual(context().toOpenAI(), []);
  const userOnly = context();
  userOnly.convo.add(new StringEntry("hi", { role: "user" }));
  assert.deepEqual(userOnly.toOpenAI().map((m) => m.role), ["user"]);
});

Deno.test("toOpenAI() output obeys the API rules for any context", () => {
  fc.assert(
    fc.property(randomContext, breakpoints, (ctx, names) => {
      assertValid(ctx.toOpenAI({ cacheBreakpoints: names }));
    }),
    { numRuns: 300 },
  );
});
