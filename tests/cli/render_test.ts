import assert from "node:assert/strict";
import { loom, loomWith } from "../_kit.ts";

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
  await t.step("an unknown entry key names the file and the key", async () => {
    const { code, stdout, stderr } = await loom(
      "render",
      "fixtures/contexts/bad/unknown_key.yaml",
    );
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assert.match(stderr, /fixtures\/contexts\/bad\/unknown_key\.yaml/);
    assert.match(stderr, /sections\.foundation\[1\]\.colour/);
  });
  await t.step("an include cycle names the include", async () => {
    const { code, stderr } = await loom(
      "render",
      "fixtures/contexts/bad/cycle_a.yaml",
    );
    assert.equal(code, 2);
    assert.match(
      stderr,
      /cycle_b\.yaml at include\[0\]: including cycle_a\.yaml would make a cycle/,
    );
  });
  await t.step("unparsable YAML", async () => {
    const { code, stderr } = await loom(
      "render",
      "fixtures/contexts/bad/not_yaml.yaml",
    );
    assert.equal(code, 2);
    assert.match(
      stderr,
      /invalid_context_file: .*not_yaml\.yaml: not valid YAML/,
    );
  });
  await t.step("a missing file", async () => {
    const { code, stderr } = await loom(
      "render",
      "fixtures/contexts/nope.yaml",
    );
    assert.equal(code, 2);
    assert.match(stderr, /unreadable_context_file: .*nope\.yaml/);
  });
  await t.step(
    "an unknown breakpoint section, a bad TTL, a bad format",
    async () => {
      const bad = await loom(
        "render",
        AGENT,
        "--format",
        "anthropic",
        "--breakpoints",
        "history",
      );
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /Unknown section history in --breakpoints/);
      const ttl = await loom(
        "render",
        AGENT,
        "--format",
        "anthropic",
        "--ttl",
        "2h",
      );
      assert.equal(ttl.code, 2);
      assert.match(ttl.stderr, /Invalid --ttl 2h: expected 5m or 1h/);
      const format = await loom("render", AGENT, "--format", "xml");
      assert.equal(format.code, 2);
      assert.match(format.stderr, /Invalid --format xml: expected one of/);
    },
  );
  await t.step("no file, or an unknown flag", async () => {
    assert.equal((await loom("render")).code, 2);
    assert.equal((await loom("render", AGENT, "--colour")).code, 2);
  });
});

Deno.test("loom render --help prints usage and exits 0", async () => {
  const { code, stdout } = await loom("render", "--help");
  assert.equal(code, 0);
  assert.match(stdout, /^Usage: loom render FILE/);
});
