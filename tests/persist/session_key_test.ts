/** The session key: where it lives, and that it is created once. */
import assert from "node:assert/strict";
import {
  loadSessionKey,
  sessionKeyPath,
} from "../../lib/persist/_session_key.ts";
import { tempDir } from "../_kit.ts";

Deno.test("sessionKeyPath() falls back to $HOME/.config/loom/session.key", () => {
  const env = (name: string) => name === "HOME" ? "/home/ada" : undefined;
  assert.equal(sessionKeyPath(env), "/home/ada/.config/loom/session.key");
});

Deno.test("loadSessionKey() creates a 32-byte key on first use and reuses it", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/keys/session.key`;
  const key = await loadSessionKey(path);
  assert.equal(key.length, 32);
  assert.deepEqual(await loadSessionKey(path), key);
});
