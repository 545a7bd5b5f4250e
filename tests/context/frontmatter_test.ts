import assert from "node:assert/strict";
import { parseFrontmatter } from "../../lib/context/frontmatter.ts";

Deno.test("parseFrontmatter() splits a YAML block from the body", async (t) => {
  await t.step("text without frontmatter comes back unchanged", () => {
    assert.deepEqual(parseFrontmatter("Hello, world!"), {
      data: {},
      body: "Hello, world!",
    });
  });
  await t.step("a role is parsed and the body follows", () => {
    assert.deepEqual(
      parseFrontmatter("---\nrole: assistant\n---\nHello, world!"),
      {
        data: { role: "assistant" },
        body: "Hello, world!",
      },
    );
  });
  await t.step("double and single quotes are YAML quotes", () => {
    assert.deepEqual(parseFrontmatter('---\nrole: "user"\n---\nx').data, {
      role: "user",
    });
    assert.deepEqual(parseFrontmatter("---\nrole: 'user'\n---\nx").data, {
      role: "user",
    });
  });
  await t.step("several fields are all kept", () => {
    const { data, body } = parseFrontmatter(
      "---\nrole: user\ntitle: Notes\npriority: 3\n---\nBody",
    );
    assert.deepEqual(data, { role: "user", title: "Notes", priority: 3 });
    assert.equal(body, "Body");
  });
  await t.step("without a closing delimiter the whole text is the body", () => {
    const text = "---\nrole: user\nno closing";
    assert.deepEqual(parseFrontmatter(text), { data: {}, body: text });
  });
  await t.step("leading newlines of the body are removed", () => {
    assert.equal(
      parseFrontmatter("---\nrole: user\n---\n\n\nBody\n").body,
      "Body\n",
    );
  });
  await t.step("an empty block gives empty data", () => {
    assert.deepEqual(parseFrontmatter("---\n---\nBody"), {
      data: {},
      body: "Body",
    });
  });
  await t.step(
    "real YAML: nested maps, lists, comments, CRLF and a ... terminator",
    () => {
      const { data, body } = parseFrontmatter(
        "---\r\n# comment\r\nrole: user # trailing\r\ntags: [a, b]\r\nmeta:\r\n  colon: 'a: b'\r\n...\r\nBody",
      );
      assert.deepEqual(data, {
        role: "user",
        tags: ["a", "b"],
        meta: { colon: "a: b" },
      });
      assert.equal(body, "Body");
    },
  );
  await t.step(
    "invalid YAML or a non-mapping block leaves the text unchanged",
    () => {
      for (
        const text of [
          "---\nrole: [unclosed\n---\nBody",
          "---\njust a line\n---\nBody",
        ]
      ) {
        assert.deepEqual(parseFrontmatter(text), { data: {}, body: text });
      }
    },
  );
  await t.step(
    "a --- that is not alone on the first line is not frontmatter",
    () => {
      const text = "--- not yaml\nrole: user\n---\nBody";
      assert.deepEqual(parseFrontmatter(text), { data: {}, body: text });
    },
  );
});
