import assert from "node:assert/strict";
import { parseRenderArguments } from "../../lib/cli/render.ts";
import { loomIn as loom, loomWith } from "../_kit.ts";
import { checkParser } from "./_arguments.ts";

const AGENT = "fixtures/contexts/agent.yaml";

function demoRun(...args: string[]) {
  // The demo's own permissions: read access to fixtures only, no env.
  return loomWith({ flags: ["--allow-read=fixtures"] }, ...args);
}

Deno.test("loom render prints the agent fixture as text with sections, visitors and names", async () => {
  const { code, stdout, stderr } = await loom("render", AGENT);
  assert.equal(stderr, "");
  assert.equal(code, 0);
  assert.ok(stdout.startsWith("> FOUNDATION\n# Identity\n"));
  for (
    const part of [
      "># house-rules (visitor)",
      "># style (visitor)",
      "------\n> FOCUS\n# Task\nReview PR #42",
      "[Image: retry-diagram]",
      "# memory.md\nLast session",
      "># Attention from house-rules\n# Rule\n",
    ]
  ) assert.ok(stdout.includes(part), part);
  assert.ok(!stdout.includes("role: assistant"), "frontmatter is stripped");
  assert.equal(
    stdout.split("Always name the file and line").length - 1,
    1,
    "dedup across includes",
  );
});

Deno.test("loom render --format anthropic prints a valid system and messages pair", async () => {
  const { code, stdout } = await loom(
    "render",
    AGENT,
    "--format",
    "anthropic",
    "--breakpoints",
    "foundation,convo",
    "--ttl",
    "1h",
  );
  assert.equal(code, 0);
  const out = JSON.parse(stdout);
  assert.ok(out.system.every((b: { type: string }) => b.type === "text"));
  assert.deepEqual(out.messages.map((m: { role: string }) => m.role), [
    "user",
    "assistant",
    "user",
  ]);
  assert.equal(out.messages[0].content[0].type, "image");
  assert.equal(
    out.messages[1].content[0].text.startsWith("# memory.md\n"),
    true,
  );
  assert.equal(stdout.match(/"cache_control"/g)?.length, 2);
  assert.equal(stdout.match(/"ttl": "1h"/g)?.length, 2);
  assert.ok(!stdout.includes("max_age_seconds"));
});

Deno.test("loom render prints messages and openai JSON too", async (t) => {
  await t.step("messages: the system message first", async () => {
    const { code, stdout } = await loom(
      "render",
      "fixtures/contexts/minimal.json",
      "--format",
      "messages",
    );
    assert.equal(code, 0);
    assert.deepEqual(JSON.parse(stdout), [
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: [{ type: "text", text: "Hello" }] },
    ]);
  });
  await t.step("openai: images as data URLs in user content", async () => {
    const { code, stdout } = await loom("render", AGENT, "--format", "openai");
    assert.equal(code, 0);
    const messages = JSON.parse(stdout);
    assert.equal(messages[0].role, "system");
    assert.match(
      messages[1].content[0].image_url.url,
      /^data:image\/png;base64,/,
    );
  });
});

Deno.test("The demo's two commands work with read access to fixtures only", async () => {
  const text = await demoRun("render", AGENT, "--format", "text");
  assert.equal(text.stderr, "");
  assert.equal(text.code, 0);
  assert.ok(text.stdout.includes("> FOUNDATION"));
  // Frontmatter is parsed (and stripped) even without env permission.
  assert.ok(text.stdout.includes("# memory.md\nLast session"));
  assert.ok(!text.stdout.includes("role: assistant"));
  const anthropic = await demoRun("render", AGENT, "--format", "anthropic");
  assert.equal(anthropic.code, 0);
  assert.ok(Array.isArray(JSON.parse(anthropic.stdout).messages));
});

Deno.test("loom render refuses bad files and options with exit code 2", async (t) => {
  const cases: [string, string[], RegExp[]][] = [
    ["an unknown entry key names the file and the key", [
      "fixtures/contexts/bad/unknown_key.yaml",
    ], [
      /fixtures\/contexts\/bad\/unknown_key\.yaml/,
      /sections\.foundation\[1\]\.colour/,
    ]],
    ["an include cycle names the include", [
      "fixtures/contexts/bad/cycle_a.yaml",
    ], [
      /cycle_b\.yaml at include\[0\]: including cycle_a\.yaml would make a cycle/,
    ]],
    ["unparsable YAML", ["fixtures/contexts/bad/not_yaml.yaml"], [
      /invalid_context_file: .*not_yaml\.yaml: not valid YAML/,
    ]],
    ["a missing file", ["fixtures/contexts/nope.yaml"], [
      /unreadable_context_file: .*nope\.yaml/,
    ]],
    ["an unknown breakpoint section", [
      AGENT,
      "--format",
      "anthropic",
      "--breakpoints",
      "history",
    ], [/Unknown section history in --breakpoints/]],
    ["a bad TTL", [AGENT, "--format", "anthropic", "--ttl", "2h"], [
      /Invalid --ttl 2h: expected 5m or 1h/,
    ]],
    ["a bad format", [AGENT, "--format", "xml"], [
      /Invalid --format xml: expected one of/,
    ]],
    ["no file", [], [/Expected exactly one context FILE/]],
    ["an unknown flag", [AGENT, "--colour"], [/Unknown option --colour/]],
  ];
  for (const [name, args, patterns] of cases) {
    await t.step(name, async () => {
      const { code, stdout, stderr } = await loom("render", ...args);
      assert.equal(code, 2);
      assert.equal(stdout, "");
      for (const pattern of patterns) assert.match(stderr, pattern);
    });
  }
});

Deno.test("parseRenderArguments() reads FILE, the format and the cache markers", async (t) => {
  await checkParser(t, parseRenderArguments, [
    ["text by default, nothing read", ["/nonexistent.yaml"], {
      file: "/nonexistent.yaml",
      format: "text",
      options: {},
    }],
    ["breakpoints and a TTL", [
      "f.yaml",
      "--format",
      "anthropic",
      "--breakpoints",
      "Foundation, convo,",
      "--ttl",
      "1h",
    ], {
      file: "f.yaml",
      format: "anthropic",
      options: { cacheBreakpoints: ["Foundation", "convo"], cacheTtl: "1h" },
    }],
    ["--help wins", ["--format", "xml", "-h"], {
      help: /^Usage: loom render FILE/,
    }],
    ["two files", ["a.yaml", "b.yaml"], {
      usage: "Expected exactly one context FILE",
    }],
    ["a bad format", ["f.yaml", "--format", "xml"], {
      usage:
        "Invalid --format xml: expected one of text, messages, anthropic, openai",
    }],
    ["--ttl with openai", ["f.yaml", "--format", "openai", "--ttl", "1h"], {
      usage:
        "--ttl has no effect with --format openai: only messages and anthropic carry cache markers",
    }],
    ["the same section twice counts once", [
      "f.yaml",
      "--format",
      "messages",
      "--breakpoints",
      "focus,FOCUS,topic,convo,attention",
    ], {
      file: "f.yaml",
      format: "messages",
      options: {
        cacheBreakpoints: ["focus", "FOCUS", "topic", "convo", "attention"],
      },
    }],
  ]);
});
