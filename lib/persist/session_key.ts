/**
 * The per-user secret that authenticates session journals. It lives outside
 * every session folder, so a process that can write a session (the model's
 * workspace tools cannot even read it) still cannot forge a record.
 *
 * Location: the file named by `LOOM_SESSION_KEY_FILE`, otherwise
 * `$XDG_CONFIG_HOME/loom/session.key`, otherwise
 * `$HOME/.config/loom/session.key`. It is created on first use (32 random
 * bytes as hex, mode `0600`, its directory `0700`) and refused when other
 * users may read or write it.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { SessionError } from "./session_error.ts";

/**
 * The environment variable that overrides the key file's location.
 *
 * @example
 * ```ts
 * import { SESSION_KEY_ENV } from "./session_key.ts";
 * import assert from "node:assert/strict";
 * assert.equal(SESSION_KEY_ENV, "LOOM_SESSION_KEY_FILE");
 * ```
 */
export const SESSION_KEY_ENV = "LOOM_SESSION_KEY_FILE";

/**
 * Where the session key lives: `LOOM_SESSION_KEY_FILE`, else
 * `$XDG_CONFIG_HOME/loom/session.key`, else `$HOME/.config/loom/session.key`.
 *
 * @param env Reads a variable (default `Deno.env.get`).
 * @returns The key file's path.
 * @throws {SessionError} `session_key_invalid` when none of the variables is set.
 *
 * @example
 * ```ts
 * import { sessionKeyPath } from "./session_key.ts";
 * import assert from "node:assert/strict";
 * const env = (name: string) => name === "HOME" ? "/home/ada" : undefined;
 * assert.equal(sessionKeyPath(env), "/home/ada/.config/loom/session.key");
 * ```
 */
export function sessionKeyPath(
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): string {
  const given = env(SESSION_KEY_ENV);
  if (given !== undefined && given !== "") return given;
  const config = env("XDG_CONFIG_HOME");
  if (config !== undefined && config !== "") {
    return join(config, "loom", "session.key");
  }
  const home = env("HOME");
  if (home !== undefined && home !== "") {
    return join(home, ".config", "loom", "session.key");
  }
  throw new SessionError(
    "session_key_invalid",
    `Cannot locate the session key: set ${SESSION_KEY_ENV} to a file outside every session and workspace`,
  );
}

/**
 * Reads the session key, creating it on first use.
 *
 * @param path The key file (default {@linkcode sessionKeyPath}).
 * @returns The 32 key bytes.
 * @throws {SessionError} `session_key_invalid` when the file is not 64 hex
 *   digits, is readable or writable by other users, or cannot be created.
 *
 * @example
 * ```ts
 * import { loadSessionKey } from "./session_key.ts";
 * import assert from "node:assert/strict";
 * const path = `${await Deno.makeTempDir()}/keys/session.key`;
 * const key = await loadSessionKey(path);
 * assert.equal(key.length, 32);
 * assert.deepEqual(await loadSessionKey(path), key);
 * ```
 */
export async function loadSessionKey(
  path: string = sessionKeyPath(),
): Promise<Uint8Array> {
  let text: string;
  try {
    text = await readOwnerOnly(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw keyError(path, error);
    await createKey(path);
    text = await readOwnerOnly(path);
  }
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new SessionError(
      "session_key_invalid",
      `Session key ${path} is not 64 lowercase hex digits: restore it, or delete it to start a new key (existing sessions then no longer verify)`,
      { file: path },
    );
  }
  return Uint8Array.from(hex.match(/../g)!, (byte) => parseInt(byte, 16));
}

async function readOwnerOnly(path: string): Promise<string> {
  const info = await Deno.stat(path);
  if (info.mode !== null && (info.mode & 0o077) !== 0) {
    throw new SessionError(
      "session_key_invalid",
      `Session key ${path} may be read or written by other users (mode ${
        (info.mode & 0o777).toString(8)
      }): run chmod 600 on it`,
      { file: path },
    );
  }
  return await Deno.readTextFile(path);
}

async function createKey(path: string): Promise<void> {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0"))
    .join("");
  const temp = `${path}.tmp-${crypto.randomUUID()}`;
  try {
    await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(temp, `${hex}\n`, {
      createNew: true,
      mode: 0o600,
    });
    // A link never replaces a key another process created meanwhile.
    await Deno.link(temp, path).catch((error) => {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    });
  } catch (error) {
    throw keyError(path, error);
  } finally {
    await Deno.remove(temp).catch(() => {});
  }
}

function keyError(path: string, error: unknown): SessionError {
  if (error instanceof SessionError) return error;
  return new SessionError(
    "session_key_invalid",
    `Cannot read or create the session key ${path}: ${
      error instanceof Error ? error.message : String(error)
    }`,
    { file: path, cause: error },
  );
}
