import assert from "node:assert/strict";
import { createProvider } from "../../lib/providers/create_provider.ts";
import { providerError } from "./_contract.ts";

Deno.test("createProvider() refuses specs it does not know", async (t) => {
  const cases: [string, RegExp][] = [
    [
      "gpt-4o",
      /Invalid model spec gpt-4o: expected recorded:PATH, anthropic:MODEL or openai:MODEL/,
    ],
    ["gemini:pro", /Invalid model spec gemini:pro/],
    ["anthropic:", /the model name is empty/],
    ["openai:  ", /the model name is empty/],
    ["recorded:", /the recording path is empty/],
    ["", /Invalid model spec/],
  ];
  for (const [spec, pattern] of cases) {
    await t.step(`"${spec}" is bad_spec`, () => {
      assert.throws(
        () =>
          createProvider(spec, {
            env: { ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" },
          }),
        providerError("bad_spec", pattern),
      );
    });
  }
});

Deno.test("createProvider() refuses unusable options before any work", async (t) => {
  const env = { ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" };
  await t.step("a base URL that is not http(s)", () => {
    assert.throws(
      () => createProvider("openai:m", { env, baseUrl: "localhost:8000" }),
      providerError("bad_option", /Invalid base URL localhost:8000/),
    );
  });
  await t.step("a negative retry count", () => {
    assert.throws(
      () => createProvider("anthropic:m", { env, maxRetries: -1 }),
      providerError("bad_option", /maxRetries/),
    );
  });
  await t.step("a zero token limit", () => {
    assert.throws(
      () => createProvider("anthropic:m", { env, maxTokens: 0 }),
      providerError("bad_option", /maxTokens/),
    );
  });
});

Deno.test("createProvider() reads keys from the given env only, not Deno.env", () => {
  // Whatever the process environment holds, an explicit env without the key is missing it.
  assert.throws(
    () => createProvider("anthropic:m", { env: { OPENAI_API_KEY: "k" } }),
    providerError("missing_api_key", /ANTHROPIC_API_KEY/),
  );
  assert.throws(
    () => createProvider("openai:m", { env: { ANTHROPIC_API_KEY: "k" } }),
    providerError("missing_api_key", /OPENAI_API_KEY.*base URL/),
  );
});
