import assert from "node:assert/strict";
import {
  clipMessage,
  clipModelText,
  MODEL_MESSAGE_CHARS,
  MODEL_TEXT_CHARS,
  showModelText,
} from "../../lib/slice/_clip.ts";

Deno.test("clipModelText() keeps 200 characters and never splits a surrogate pair", () => {
  assert.equal(clipModelText("a".repeat(200)), "a".repeat(200));
  assert.equal(clipModelText("a".repeat(201)), `${"a".repeat(200)}…`);
  // 199 ASCII characters, then an emoji whose pair straddles the cut.
  const clipped = clipModelText(`${"a".repeat(199)}😀tail`);
  assert.equal(clipped, `${"a".repeat(199)}…`);
  assert.ok(clipped.isWellFormed());
  assert.equal(showModelText("x".repeat(MODEL_TEXT_CHARS + 5)).length, 203);
});

Deno.test("clipMessage() clips the argument paths inside a message, then the message", () => {
  const path = "d/".repeat(5000) + "f.txt";
  const message = `Cannot write ${path}: File name too long (os error 36)`;
  const clipped = clipMessage(message, { files: [{ path, contents: "x" }] });
  assert.equal(
    clipped,
    `Cannot write ${clipModelText(path)}: File name too long (os error 36)`,
  );
  assert.equal(
    clipMessage(`Cannot read ${path}`, { paths: [path] }),
    `Cannot read ${clipModelText(path)}`,
  );
  const other = clipMessage("e".repeat(5000), {});
  assert.equal(other.length, MODEL_MESSAGE_CHARS + 1);
  assert.equal(clipMessage("short", null), "short");
});
