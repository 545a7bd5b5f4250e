/**
 * The second process of the session-store tests: opens the session folder
 * the first process wrote, through one adapter's `sessionStore` (imported
 * from the package's entry point, as a user would), runs one conversation
 * of that adapter's SDK with the retrieval tools against the scripted
 * server, and prints the model's final answer.
 *
 * Usage: `_second_process.ts <ai-sdk|anthropic|openai> <url> <dir> <key file>`
 */
const [adapter, url, dir, keyFile] = Deno.args as [
  string,
  string,
  string,
  string,
];
const system = "You answer from the stored catalogue.";
const prompt = "Which item holds the secret?";

async function aiSdk(): Promise<string> {
  const { loomMiddleware, retrievalTools, sessionStore } = await import(
    "../../ai_sdk.ts"
  );
  const { generateText, stepCountIs, wrapLanguageModel } = await import("ai");
  const { createAnthropic } = await import("@ai-sdk/anthropic");
  await using store = await sessionStore(dir, { keyFile });
  const anthropic = createAnthropic({
    baseURL: `${url}/v1`,
    apiKey: "sk-local",
  });
  const result = await generateText({
    model: wrapLanguageModel({
      model: anthropic("claude-sonnet-4-5"),
      middleware: loomMiddleware({ store }),
    }),
    system,
    prompt,
    tools: retrievalTools(store),
    stopWhen: stepCountIs(8),
  });
  return result.text;
}

async function anthropic(): Promise<string> {
  const { loomMiddleware, retrievalTools, sessionStore } = await import(
    "../../anthropic.ts"
  );
  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  await using store = await sessionStore(dir, { keyFile });
  const client = new Anthropic({
    baseURL: url,
    apiKey: "sk-local",
    maxRetries: 0,
    middleware: [loomMiddleware({ store })],
  });
  const final = await client.beta.messages.toolRunner({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    system,
    messages: [{ role: "user", content: prompt }],
    tools: retrievalTools(store),
    max_iterations: 8,
    thread: false,
  });
  return final.content.map((b) => b.type === "text" ? b.text : "").join("");
}

async function openai(): Promise<string> {
  const { loomInputFilter, retrievalTools, sessionStore } = await import(
    "../../openai.ts"
  );
  const { Agent, OpenAIProvider, Runner, setTracingDisabled } = await import(
    "@openai/agents"
  );
  setTracingDisabled(true);
  await using store = await sessionStore(dir, { keyFile });
  const agent = new Agent({
    name: "catalogue",
    instructions: system,
    model: "gpt-5",
    tools: retrievalTools(store),
  });
  const runner = new Runner({
    modelProvider: new OpenAIProvider({
      baseURL: `${url}/v1`,
      apiKey: "sk-local",
      useResponses: true,
    }),
    tracingDisabled: true,
  });
  const result = await runner.run(agent, prompt, {
    callModelInputFilter: loomInputFilter({ store }),
    maxTurns: 8,
  });
  return String(result.finalOutput);
}

const run = { "ai-sdk": aiSdk, anthropic, openai }[adapter];
if (run === undefined) throw new Error(`Unknown adapter ${adapter}`);
console.log(await run());
