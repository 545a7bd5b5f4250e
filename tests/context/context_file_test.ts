import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ContextFileError,
  FileEntry,
  ImageEntry,
  loadContextFile,
} from "../../mod.ts";
import { tempDir } from "../_kit.ts";
import { pool } from "./_helpers.ts";

function write(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  Deno.writeTextFileSync(path, text);
  return path;
}

Deno.test("loadContextFile() builds a context from YAML or JSON", async (t) => {
  await t.step(
    "the agent fixture: names, roles, files, an image and includes",
    () => {
      const ctx = loadContextFile("fixtures/contexts/agent.yaml", {
        ids: pool(),
      });
      assert.equal(ctx.name, "reviewer");
      assert.deepEqual(ctx.visitors.map((v) => v.name), ["house-rules"]);
      assert.deepEqual(ctx.visitors[0]!.visitors.map((v) => v.name), ["style"]);
      const [identity, soul] = ctx.foundation.entries;
      assert.equal(identity?.name, "Identity");
      assert.ok(soul instanceof FileEntry);
      assert.ok(ctx.topic.entries[1] instanceof ImageEntry);
      assert.equal(ctx.convo.entries[0]?.role, "assistant");
      assert.equal(ctx.focus.entries[0]?.role, "user");
    },
  );
  await t.step(
    "JSON works and the name defaults to the file name",
    async () => {
      await using dir = await tempDir();
      const path = write(
        dir.path,
        "plain.json",
        '{"sections": {"topic": ["x"]}}',
      );
      const ctx = loadContextFile(path);
      assert.equal(ctx.name, "plain");
      assert.equal(ctx.render(), "------\n> TOPIC\nx\n------");
    },
  );
  await t.step(
    "an include named twice is loaded once (dedup keeps one copy)",
    async () => {
      await using dir = await tempDir();
      write(dir.path, "shared.yaml", "sections:\n  foundation: [Shared]\n");
      write(dir.path, "a.yaml", "include: [shared.yaml]\n");
      write(dir.path, "b.yaml", "include: [shared.yaml]\n");
      const root = loadContextFile(
        write(dir.path, "root.yaml", "include: [a.yaml, b.yaml]\n"),
      );
      assert.equal(
        root.visitors[0]!.visitors[0],
        root.visitors[1]!.visitors[0],
      );
      assert.equal(root.render(), "> FOUNDATION\n># shared (visitor)\nShared");
    },
  );
  await t.step("data entries carry base64 with a media type", async () => {
    await using dir = await tempDir();
    const path = write(
      dir.path,
      "img.yaml",
      "sections:\n  topic:\n    - {data: R0lGODlhAQABAAAAACw=, mediaType: image/gif, role: user}\n",
    );
    const entry = loadContextFile(path).topic.entries[0];
    assert.ok(entry instanceof ImageEntry);
    assert.equal(entry.role, "user");
  });
});

Deno.test("loadContextFile() names the file and key of every mistake", async (t) => {
  await using dir = await tempDir();
  const cases: [string, string, string][] = [
    ["top.yaml", "colour: blue\n", "colour"],
    ["section.yaml", "sections:\n  history: []\n", "sections.history"],
    ["list.yaml", "sections:\n  convo: text\n", "sections.convo"],
    [
      "role.yaml",
      "sections:\n  convo:\n    - {text: x, role: tool}\n",
      "sections.convo[0].role",
    ],
    ["entry.yaml", "sections:\n  convo:\n    - 42\n", "sections.convo[0]"],
    [
      "empty.yaml",
      "sections:\n  convo:\n    - {name: x}\n",
      "sections.convo[0]",
    ],
    [
      "key.yaml",
      "sections:\n  convo:\n    - {file: a.md, colour: x}\n",
      "sections.convo[0].colour",
    ],
    [
      "media.yaml",
      "sections:\n  topic:\n    - {data: AAAA, mediaType: image/bmp}\n",
      "sections.topic[0].mediaType",
    ],
    [
      "b64.yaml",
      "sections:\n  topic:\n    - {data: '!!', mediaType: image/png}\n",
      "sections.topic[0].data",
    ],
    [
      "image.yaml",
      "sections:\n  topic:\n    - {image: missing.png}\n",
      "sections.topic[0].image",
    ],
    [
      "asst.yaml",
      "sections:\n  topic:\n    - {data: AAAA, mediaType: image/png, role: assistant}\n",
      "sections.topic[0].role",
    ],
    ["include.yaml", "include: [missing.yaml]\n", "include[0]"],
    ["self.yaml", "include: [self.yaml]\n", "include[0]"],
    ["name.yaml", "name: [1]\n", "name"],
  ];
  for (const [file, text, key] of cases) {
    await t.step(`${file} → ${key === "" ? "(whole file)" : key}`, () => {
      const path = write(dir.path, file, text);
      assert.throws(
        () => loadContextFile(path),
        (e) =>
          e instanceof ContextFileError && e instanceof SyntaxError &&
          e.key === key && e.message.includes(".yaml"),
      );
    });
  }
});

Deno.test("loadContextFile() takes an image's media type from its bytes", async (t) => {
  await using dir = await tempDir();
  const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]);
  Deno.writeFileSync(join(dir.path, "photo.png"), jpeg); // misleading name
  await t.step("the bytes win over the extension", () => {
    const path = write(
      dir.path,
      "img.yaml",
      "sections:\n  topic:\n    - {image: photo.png}\n",
    );
    const [entry] = loadContextFile(path).topic.entries;
    assert.ok(entry instanceof ImageEntry);
    assert.equal(entry.mediaType, "image/jpeg");
    assert.equal(entry.name, "photo.png");
  });
  const mistakes = [{
    name: "a mediaType that contradicts the bytes names the key",
    file: "contra.yaml",
    text:
      "sections:\n  topic:\n    - {image: photo.png, mediaType: image/png}\n",
    key: "sections.topic[0].image",
    message: /its bytes are image\/jpeg, not the given image\/png/,
  }, {
    name: "media_type is not a key; the error lists mediaType",
    file: "snake.yaml",
    text: "sections:\n  topic:\n    - {data: AAAA, media_type: image/png}\n",
    key: "sections.topic[0].media_type",
    message: /mediaType/,
  }];
  for (const mistake of mistakes) {
    await t.step(mistake.name, () => {
      const path = write(dir.path, mistake.file, mistake.text);
      assert.throws(
        () => loadContextFile(path),
        (e) =>
          e instanceof ContextFileError && e.key === mistake.key &&
          mistake.message.test(e.message),
      );
    });
  }
});

Deno.test("loadContextFile() names the includer and its key for a missing include", async () => {
  await using dir = await tempDir();
  const nested = join(dir.path, "nested");
  Deno.mkdirSync(nested);
  write(nested, "middle.yaml", "include: [../gone.yaml]\n");
  const top = write(dir.path, "top.yaml", "include: [nested/middle.yaml]\n");
  assert.throws(
    () => loadContextFile(top),
    (e) =>
      e instanceof ContextFileError && e.code === "unreadable_context_file" &&
      e.file.endsWith("middle.yaml") && e.key === "include[0]" &&
      e.message.endsWith(`gone.yaml: it does not exist`) &&
      !e.message.includes("os error"),
  );
});
