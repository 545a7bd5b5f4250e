import assert from "node:assert/strict";
import {
  detectImageMediaType,
  ImageEntry,
  type ImageMediaType,
  InvalidEntryError,
} from "../../mod.ts";
import { tempDir } from "../_kit.ts";
import { context, PNG, PNG2, pool } from "./_helpers.ts";

Deno.test("ImageEntry keeps data, media type and name", async (t) => {
  await t.step("fields are as given", () => {
    const image = new ImageEntry({
      data: PNG,
      mediaType: "image/png",
      name: "shot",
    });
    assert.equal(image.data, PNG);
    assert.equal(image.mediaType, "image/png");
    assert.equal(image.name, "shot");
    assert.equal(image.role, "system");
  });
  await t.step("compile() is a placeholder naming the image", () => {
    assert.equal(
      new ImageEntry({ data: PNG, mediaType: "image/png", name: "my photo" })
        .compile(),
      "[Image: my photo]",
    );
    assert.equal(
      new ImageEntry({ data: PNG, mediaType: "image/png" }).compile(),
      "[Image: unnamed]",
    );
  });
  await t.step("identity depends on the data, not the name", () => {
    const a = new ImageEntry({ data: PNG, mediaType: "image/png", name: "a" });
    const b = new ImageEntry({ data: PNG, mediaType: "image/png", name: "b" });
    const c = new ImageEntry({ data: PNG2, mediaType: "image/gif", name: "a" });
    assert.equal(a.identity(), b.identity());
    assert.notEqual(a.identity(), c.identity());
  });
  await t.step(
    "it has an id and a creation time, and release() clears the id",
    () => {
      const image = new ImageEntry({
        data: PNG,
        mediaType: "image/png",
        ids: pool(),
      });
      assert.equal(image.id?.length, 2);
      assert.ok(image.createdAt instanceof Date);
      image.release();
      assert.equal(image.id, undefined);
    },
  );
});

Deno.test("ImageEntry refuses what providers would reject", async (t) => {
  await t.step("media types other than JPEG, PNG, GIF and WebP", () => {
    assert.throws(
      () =>
        new ImageEntry({ data: PNG, mediaType: "image/bmp" as "image/png" }),
      InvalidEntryError,
    );
  });
  await t.step("data that is empty, not base64 or a data URL", () => {
    for (const data of ["", "not base64!", `data:image/png;base64,${PNG}`]) {
      assert.throws(
        () => new ImageEntry({ data, mediaType: "image/png" }),
        InvalidEntryError,
      );
    }
  });
  await t.step(
    "the assistant role (assistant turns cannot carry images)",
    () => {
      assert.throws(
        () =>
          new ImageEntry({
            data: PNG,
            mediaType: "image/png",
            role: "assistant" as "user",
          }),
        InvalidEntryError,
      );
    },
  );
});

Deno.test("Images compile to a vision block and a caption, or to a placeholder in text", async (t) => {
  await t.step("a text-only section gives one text block", () => {
    const ctx = context();
    ctx.topic.add("Only text");
    assert.deepEqual(ctx.toMessages()[0]?.content, [{
      type: "text",
      text: "Only text",
    }]);
  });
  await t.step(
    "an image-only section gives the image block and its caption",
    () => {
      const ctx = context();
      ctx.topic.add(
        new ImageEntry({ data: PNG, mediaType: "image/png", name: "shot" }),
      );
      assert.deepEqual(ctx.toMessages()[0]?.content, [
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: PNG },
        },
        { type: "text", text: "[Image: shot]" },
      ]);
    },
  );
  await t.step("text and images keep their order", () => {
    const ctx = context();
    ctx.topic.add("Before");
    ctx.topic.add(new ImageEntry({ data: PNG, mediaType: "image/png" }));
    ctx.topic.add("After");
    const content = ctx.toMessages()[0]!.content;
    assert.deepEqual(content.map((b) => b.type), [
      "text",
      "image",
      "text",
      "text",
    ]);
    assert.deepEqual(content[0], { type: "text", text: "Before" });
  });
  await t.step("an empty context gives no blocks", () => {
    assert.deepEqual(context().toMessages(), [{ role: "system", content: [] }]);
  });
  await t.step("the same image twice compiles once", () => {
    const ctx = context();
    ctx.topic.add(
      new ImageEntry({ data: PNG, mediaType: "image/png", name: "a" }),
    );
    ctx.convo.add(
      new ImageEntry({ data: PNG, mediaType: "image/png", name: "b" }),
    );
    const images = ctx.toMessages()[0]!.content.filter((b) =>
      b.type === "image"
    );
    assert.equal(images.length, 1);
  });
  await t.step("render() and the text fallback show [Image: NAME]", () => {
    const ctx = context();
    ctx.topic.add(
      new ImageEntry({ data: PNG, mediaType: "image/png", name: "diagram" }),
    );
    assert.equal(ctx.render(), "------\n> TOPIC\n[Image: diagram]\n------");
  });
  await t.step("a user-role image keeps its image in the user message", () => {
    const ctx = context();
    ctx.convo.add(
      new ImageEntry({
        data: PNG,
        mediaType: "image/png",
        name: "u",
        role: "user",
      }),
    );
    assert.deepEqual(ctx.toMessages()[1], {
      role: "user",
      content: [
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: PNG },
        },
        { type: "text", text: "[Image: u]" },
      ],
    });
  });
});

Deno.test("Images live through the entry lifecycle", async (t) => {
  await t.step("an image in convo is still there on the second compile", () => {
    const ctx = context();
    ctx.convo.add(new ImageEntry({ data: PNG, mediaType: "image/png" }));
    ctx.toMessages();
    assert.ok(ctx.toMessages()[0]!.content.some((b) => b.type === "image"));
  });
  await t.step("a remembered step image survives the clearing of step", () => {
    const ctx = context();
    const image = ctx.step.add(
      new ImageEntry({ data: PNG, mediaType: "image/png" }),
    );
    ctx.remember(image);
    ctx.toMessages();
    assert.ok(ctx.toMessages()[0]!.content.some((b) => b.type === "image"));
  });
  await t.step(
    "a redacted image is gone; with a tombstone the text takes its place",
    () => {
      const ctx = context();
      const a = ctx.convo.add(
        new ImageEntry({ data: PNG, mediaType: "image/png", name: "pii" }),
      );
      assert.equal(ctx.redact(a), a);
      assert.deepEqual(ctx.toMessages()[0]!.content, []);
      const b = ctx.convo.add(
        new ImageEntry({ data: PNG, mediaType: "image/png", name: "pii" }),
      );
      assert.equal(ctx.redact(b, { tombstone: "[image removed]" }), b);
      assert.deepEqual(ctx.toMessages()[0]!.content, [{
        type: "text",
        text: "# pii\n[image removed]",
      }]);
    },
  );
  await t.step(
    "an included context's images come through, cache markers too",
    () => {
      const visitor = context("vis");
      visitor.foundation.add(
        new ImageEntry({ data: PNG, mediaType: "image/png" }),
      );
      const ctx = context("main");
      ctx.include(visitor);
      const content =
        ctx.toMessages({ cacheBreakpoints: ["foundation"] })[0]!.content;
      assert.equal(content.filter((b) => b.type === "image").length, 1);
      assert.equal(
        content.filter((b) => b.cache_control !== undefined).length,
        1,
      );
    },
  );
});

const SIGNATURES: [ImageMediaType, number[]][] = [
  ["image/png", [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]],
  ["image/jpeg", [0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46]],
  ["image/gif", [0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0]],
  ["image/gif", [0x47, 0x49, 0x46, 0x38, 0x37, 0x61, 1, 0, 1, 0]],
  [
    "image/webp",
    [0x52, 0x49, 0x46, 0x46, 4, 0, 0, 0, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50],
  ],
];

Deno.test("ImageEntry.fromBytes() detects the media type from the magic bytes", async (t) => {
  for (const [type, bytes] of SIGNATURES) {
    await t.step(type, () => {
      const data = new Uint8Array(bytes);
      assert.equal(detectImageMediaType(data), type);
      const entry = ImageEntry.fromBytes(data, { name: "pic", ids: pool() });
      assert.equal(entry.mediaType, type);
      assert.equal(entry.data, btoa(String.fromCharCode(...data)));
      assert.equal(entry.compile(), "[Image: pic]");
    });
  }
  await t.step("bytes of another kind are refused", () => {
    for (const bytes of [[], [0x42, 0x4d, 0, 0], [0x52, 0x49, 0x46, 0x46]]) {
      assert.equal(detectImageMediaType(new Uint8Array(bytes)), null);
      assert.throws(
        () => ImageEntry.fromBytes(new Uint8Array(bytes), { ids: pool() }),
        (e) =>
          e instanceof InvalidEntryError &&
          /^Cannot create an image entry from the bytes: it (is empty|is not a PNG, JPEG, GIF or WebP image)$/
            .test(e.message),
      );
    }
  });
  await t.step("a given media type must match the bytes", () => {
    assert.throws(
      () =>
        ImageEntry.fromBytes(new Uint8Array(SIGNATURES[0]![1]), {
          mediaType: "image/jpeg",
          ids: pool(),
        }),
      /its bytes are image\/png, not the given image\/jpeg/,
    );
  });
});

Deno.test("ImageEntry.fromFile() reads the file once and names it", async (t) => {
  await using dir = await tempDir();
  const path = `${dir.path}/shot.data`;
  await Deno.writeFile(path, new Uint8Array(SIGNATURES[1]![1]));
  await t.step("type from the bytes, name from the file", () => {
    const entry = ImageEntry.fromFile(path, { ids: pool(), role: "user" });
    assert.equal(entry.mediaType, "image/jpeg");
    assert.equal(entry.name, "shot.data");
    assert.equal(entry.role, "user");
    assert.equal(
      ImageEntry.fromFile(new URL(`file://${path}`), { ids: pool() })
        .mediaType,
      "image/jpeg",
    );
  });
  await t.step("a missing or non-image file names the file", () => {
    assert.throws(
      () => ImageEntry.fromFile(`${dir.path}/nope.png`, { ids: pool() }),
      (e) =>
        e instanceof InvalidEntryError &&
        e.message ===
          `Cannot create an image entry from ${dir.path}/nope.png: it does not exist`,
    );
    const text = `${dir.path}/text.png`;
    Deno.writeTextFileSync(text, "not an image");
    assert.throws(
      () => ImageEntry.fromFile(text, { ids: pool() }),
      new RegExp(
        `^InvalidEntryError: Cannot create an image entry from ${text}: it is not a PNG`,
      ),
    );
  });
});
