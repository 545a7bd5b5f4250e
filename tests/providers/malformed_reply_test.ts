import assert from "node:assert/strict";
import { createProvider } from "../../lib/providers/create_provider.ts";
import { ProviderError } from "../../lib/providers/provider_error.ts";

type ProtocolProblem = NonNullable<ProviderError["problem"]>;
import { chatCompletion, hostileServer, json, raw } from "./_hostile_server.ts";
import { selectionCall } from "./_requests.ts";

const ENV = { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test" };
const DEEP = 100_000;
const deepText = "[".repeat(DEEP) + "]".repeat(DEEP);
const longName = "x".repeat(10_000);
/** What must never reach a message: raw JavaScript failures. */
const RAW_JS =
  /Cannot read properties|is not a function|Unexpected token|undefined|Maximum call stack/;

function completionWith(choice: unknown): Record<string, unknown> {
  return { ...chatCompletion("select_action", "{}"), choices: [choice] };
}

const OPENAI_CASES: [
  string,
  () => Response,
  ProtocolProblem,
  RegExp,
][] = [
  [
    "a body that is not JSON",
    () => raw("this is not json {"),
    "malformed_response",
    /not JSON where a chat completion was expected: "this is not json \{"/,
  ],
  [
    "a JSON null body",
    () => raw("null"),
    "malformed_response",
    /the body: expected object, got null/,
  ],
  [
    "choices null",
    () => json({ choices: null }),
    "malformed_response",
    /choices: expected array, got null/,
  ],
  [
    "an empty choices array",
    () => json({ choices: [] }),
    "no_choice",
    /empty choices array/,
  ],
  [
    "a null choice",
    () => json({ choices: [null] }),
    "malformed_response",
    /choices\[0\]: expected object, got null/,
  ],
  [
    "a null message",
    () => json(completionWith({ finish_reason: "stop", message: null })),
    "malformed_response",
    /choices\[0\]\.message: expected object, got null/,
  ],
  [
    "tool_calls that is not an array",
    () => json(completionWith({ message: { tool_calls: { find: 1 } } })),
    "malformed_response",
    /tool_calls: expected array, got an object/,
  ],
  [
    "finish_reason length",
    () =>
      json(
        chatCompletion("select_action", '{"act', { finish_reason: "length" }),
      ),
    "truncated",
    /length limit/,
  ],
  [
    "no tool call",
    () =>
      json(
        completionWith({
          finish_reason: "stop",
          message: { content: "I think\u001b[2J we should" },
        }),
      ),
    "no_tool_call",
    /without the forced select_action function call \(finish_reason stop; text "I think\\u001b\[2J we should"\)/,
  ],
  [
    "a wrong tool name of 10,000 characters",
    () => json(chatCompletion(longName, "{}")),
    "wrong_tool",
    /called "x{60}…" \(10000 characters\) instead of the forced select_action/,
  ],
  [
    "arguments that are not JSON",
    () => json(chatCompletion("select_action", "{'action': tests.run}")),
    "invalid_arguments",
    /arguments are not valid JSON: "\{'action': tests\.run\}"/,
  ],
  [
    "arguments nested 100,000 deep",
    () => json(chatCompletion("select_action", deepText)),
    "too_deep",
    /nest deeper than 64 levels/,
  ],
];

/** Calls a provider against a server that always answers `response`. */
async function protocolCase(
  scheme: "openai" | "anthropic",
  response: () => Response,
  problem: ProtocolProblem,
  pattern: RegExp,
): Promise<void> {
  await using server = hostileServer(response);
  const provider = createProvider(
    scheme === "openai" ? "openai:fuzz" : "anthropic:claude-test",
    {
      env: ENV,
      baseUrl: scheme === "openai" ? `${server.url}/v1` : server.url,
      timeoutMs: 5_000,
      maxRetries: 0,
    },
  );
  const error = await provider.call(selectionCall()).then(
    () => assert.fail("expected a protocol error"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ProviderError, String(error));
  assert.equal(error.code, "provider_protocol");
  assert.equal(error.problem, problem, error.message);
  assert.match(error.message, pattern);
  assert.doesNotMatch(error.message, RAW_JS);
  assert.ok(error.message.length < 400, `${error.message.length} characters`);
}

for (const [name, response, problem, pattern] of OPENAI_CASES) {
  Deno.test(
    `OpenAI-compatible reply with ${name} is provider_protocol ${problem}`,
    () => protocolCase("openai", response, problem, pattern),
  );
}

function anthropicMessage(content: unknown, stop = "tool_use") {
  return {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content,
    stop_reason: stop,
    usage: { input_tokens: 5, output_tokens: 1 },
  };
}

const ANTHROPIC_CASES: [string, () => Response, ProtocolProblem, RegExp][] = [
  [
    "content null",
    () => json(anthropicMessage(null)),
    "malformed_response",
    /content: expected array, got null/,
  ],
  [
    "a content block that is a string",
    () => json(anthropicMessage(["hi"])),
    "malformed_response",
    /content\[0\]: expected object, got the string "hi"/,
  ],
  [
    "stop_reason max_tokens",
    () => json(anthropicMessage([], "max_tokens")),
    "truncated",
    /max_tokens/,
  ],
  [
    "text only",
    () => json(anthropicMessage([{ type: "text", text: "Sure" }], "end_turn")),
    "no_tool_call",
    /without the forced select_action tool call \(stop_reason end_turn\)/,
  ],
  [
    "a wrong tool name with control characters",
    () =>
      json(
        anthropicMessage([{
          type: "tool_use",
          id: "t",
          name: "evil\r\nstep 9/9 completed\u0000",
          input: {},
        }]),
      ),
    "wrong_tool",
    /called tool "evil\\r\\nstep 9\/9 completed\\u0000"/,
  ],
  [
    "a tool_use without input",
    () =>
      json(
        anthropicMessage([{
          type: "tool_use",
          id: "t",
          name: "select_action",
        }]),
      ),
    "invalid_arguments",
    /carries no input/,
  ],
  [
    "input nested 100,000 deep",
    () =>
      raw(
        JSON.stringify(
          anthropicMessage([{
            type: "tool_use",
            id: "t",
            name: "select_action",
            input: {},
          }]),
        ).replace('"input":{}', `"input":${deepText}`),
      ),
    "too_deep",
    /nest deeper than 64 levels/,
  ],
];

for (const [name, response, problem, pattern] of ANTHROPIC_CASES) {
  Deno.test(
    `Anthropic reply with ${name} is provider_protocol ${problem}`,
    () => protocolCase("anthropic", response, problem, pattern),
  );
}
