import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_FILE_ENTRY_MAX_BYTES } from "../../lib/context/file_entry.ts";
import { Context, FileEntry, InvalidEntryError } from "../../mod.ts";
import { tempDir } from "../_kit.ts";
import { context } from "./_helpers.ts";

Deno.test("FileEntry takes its role from frontmatter unless given one", async (t) => {
  await using dir = await tempDir();
  const plain = join(dir.path, "plain.md");
  const fm = join(dir.path, "fm.md");
  Deno.writeTextFileSync(plain, "Plain");
  Deno.writeTextFileSync(fm, "---\nrole: assistant\n---\nRemembered");
  await t.step("no frontmatter means system", () => {
    assert.equal(new FileEntry(plain).role, "system");
  });
  await t.step("frontmatter role: assistant is used", () => {
    assert.equal(new FileEntry(fm).role, "assistant");
  });
  await t.step("an explicit user role wins over the frontmatter", () => {
    assert.equal(new FileEntry(fm, { role: "user" }).role, "user");
  });
  await t.step("an explicit system role wins over the frontmatter", () => {
    assert.equal(new FileEntry(fm, { role: "system" }).role, "system");
  });
  await t.step("an unknown frontmatter role is ignored", () => {
    const odd = join(dir.path, "odd.md");
    Deno.writeTextFileSync(odd, "---\nrole: tool\n---\nBody");
    assert.equal(new FileEntry(odd).role, "system");
  });
});

Deno.test("FileEntry re-reads its file on every compile", async (t) => {
  await using dir = await tempDir();
  const path = join(dir.path, "notes.md");
  await t.step("the frontmatter is stripped and extra fields ignored", () => {
    Deno.writeTextFileSync(
      path,
      "---\nrole: user\ntitle: x\n---\nLine one\nLine two",
    );
    const entry = new FileEntry(path);
    assert.equal(entry.compile(), "Line one\nLine two");
    assert.equal(entry.role, "user");
    assert.deepEqual(entry.read().frontmatter, { role: "user", title: "x" });
  });
  await t.step(
    "a file without frontmatter compiles unchanged but for trailing newlines",
    () => {
      Deno.writeTextFileSync(path, "Just text\n\n  indented\n");
      assert.equal(new FileEntry(path).compile(), "Just text\n\n  indented");
    },
  );
  await t.step("edits show up on the next compile, role included", () => {
    const entry = new FileEntry(path);
    Deno.writeTextFileSync(path, "---\nrole: assistant\n---\nVersion 1");
    assert.equal(entry.compile(), "Version 1");
    assert.equal(entry.role, "assistant");
    Deno.writeTextFileSync(path, "---\nrole: user\n---\nVersion 2");
    assert.equal(entry.compile(), "Version 2");
    assert.equal(entry.role, "user");
  });
  await t.step("an explicit role is not overridden by a re-read", () => {
    const entry = new FileEntry(path, { role: "system" });
    Deno.writeTextFileSync(path, "---\nrole: assistant\n---\nX");
    assert.equal(entry.role, "system");
    const ctx = context();
    ctx.foundation.add(entry);
    assert.equal(ctx.toMessages().length, 1);
  });
  await t.step(
    "a deleted file compiles to a placeholder naming it, then recovers",
    () => {
      const entry = new FileEntry(path);
      Deno.removeSync(path);
      assert.equal(entry.compile(), `[File removed: ${path}]`);
      assert.equal(entry.read().available, false);
      Deno.writeTextFileSync(path, "Back again");
      assert.equal(entry.compile(), "Back again");
    },
  );
  await t.step(
    "an unreadable path (a directory) compiles to a placeholder and never throws",
    () => {
      const entry = new FileEntry(dir.path);
      assert.match(entry.compile(), /^\[File unreadable: .+\(.+\)\]$/);
      const ctx = context();
      ctx.topic.add(entry);
      assert.match(ctx.render(), /File unreadable/);
    },
  );
});

Deno.test("FileEntry is named after its file and identified by its resolved path", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "RULES.md");
  Deno.writeTextFileSync(path, "Rule");
  assert.equal(new FileEntry(path).name, "RULES.md");
  assert.equal(new FileEntry(path, { name: "rules" }).name, "rules");
  assert.equal(
    new FileEntry(path).identity(),
    new FileEntry(new URL(`file://${path}`)).identity(),
  );
  const ctx = new Context("c");
  ctx.foundation.add(new FileEntry(path));
  ctx.topic.add(new FileEntry(path, { name: "again" }));
  assert.equal(ctx.render(), "> FOUNDATION\n# RULES.md\nRule");
});

Deno.test("A file promoted by frontmatter becomes its own message without the frontmatter", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "memory.md");
  Deno.writeTextFileSync(
    path,
    "---\nrole: assistant\n---\nHere is what I remember.",
  );
  const ctx = context();
  ctx.foundation.add("Be helpful.");
  ctx.convo.add(new FileEntry(path, { name: "memory" }));
  const messages = ctx.toMessages();
  assert.deepEqual(messages, [
    { role: "system", content: [{ type: "text", text: "Be helpful." }] },
    {
      role: "assistant",
      content: [{ type: "text", text: "# memory\nHere is what I remember." }],
    },
  ]);
  assert.ok(!JSON.stringify(messages).includes("---"));
});

Deno.test("FileEntry refuses files over its size limit with a placeholder naming file and size", async (t) => {
  await using dir = await tempDir();
  const path = `${dir.path}/big.txt`;
  await Deno.writeTextFile(path, "x".repeat(2048));
  await t.step("an explicit maxBytes", () => {
    const entry = new FileEntry(path, { maxBytes: 1024 });
    const snapshot = entry.read();
    assert.equal(snapshot.available, false);
    assert.equal(snapshot.problem, "too_large");
    assert.equal(
      entry.compile(),
      `[File too large: ${path} (2048 bytes; the limit is 1024 bytes)]`,
    );
  });
  await t.step("the default is 1 MiB", async () => {
    assert.equal(DEFAULT_FILE_ENTRY_MAX_BYTES, 1024 * 1024);
    const entry = new FileEntry(path);
    assert.equal(entry.maxBytes, DEFAULT_FILE_ENTRY_MAX_BYTES);
    assert.equal(entry.compile(), "x".repeat(2048));
    await Deno.writeFile(
      path,
      new Uint8Array(DEFAULT_FILE_ENTRY_MAX_BYTES + 1).fill(0x61),
    );
    assert.equal(
      entry.compile(),
      `[File too large: ${path} (1048577 bytes; the limit is 1048576 bytes)]`,
    );
  });
  await t.step("a bad limit is refused at construction", () => {
    for (const maxBytes of [0, -1, 1.5, Number.NaN]) {
      assert.throws(
        () => new FileEntry(path, { maxBytes }),
        InvalidEntryError,
      );
    }
  });
});

Deno.test("FileEntry decodes strict UTF-8 by default and names a file that is not UTF-8", async (t) => {
  await using dir = await tempDir();
  const path = `${dir.path}/latin1.txt`;
  // "café" in Latin-1: 0xE9 is not valid UTF-8 on its own.
  await Deno.writeFile(path, new Uint8Array([0x63, 0x61, 0x66, 0xe9]));
  await t.step("a placeholder, never U+FFFD", () => {
    const entry = new FileEntry(path);
    const text = entry.compile();
    assert.ok(!text.includes("\uFFFD"));
    assert.match(
      text,
      /^\[File not UTF-8: .*latin1\.txt \(.*not valid UTF-8/,
    );
    assert.equal(entry.read().problem, "invalid_utf8");
  });
  await t.step("lossyUtf8 opts into replacement characters", () => {
    const entry = new FileEntry(path, { lossyUtf8: true });
    assert.equal(entry.compile(), "caf\uFFFD");
    assert.equal(entry.read().problem, null);
  });
  await t.step("an unreadable path says why without OS noise", () => {
    const entry = new FileEntry(dir.path);
    assert.equal(entry.read().problem, "unreadable");
    assert.ok(!entry.compile().includes("os error"), entry.compile());
    assert.match(entry.compile(), /^\[File unreadable: .* \(.+\)\]$/);
  });
});
