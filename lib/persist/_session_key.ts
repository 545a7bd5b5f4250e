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
import { messageOf } from "../errors.ts";
import { SessionError } from "./session_error.ts";
import { isWithin, realish } from "./_session_util.ts";

/** The environment variable that overrides the key file's location. */
const SESSION_KEY_ENV = "LOOM_SESSION_KEY_FILE";

/**
 * Where the session key lives (see the module doc); `env` reads a variable.
 *
 * @throws {SessionError} `session_key_invalid` when none of the variables is set.
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
 * Reads the 32-byte session key, creating it on first use.
 *
 * @throws {SessionError} `session_key_invalid` when the file is not 64 hex
 *   digits, is readable or writable by other users, or cannot be created.
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

/**
 * The session key, refused when it lies inside one of the `forbidden`
 * paths (a session folder, a database file, the workspace, a server's
 * root), where the session's writer or the model could read it.
 *
 * @param keyFile The key file (default {@linkcode sessionKeyPath}).
 * @param forbidden Paths the key must not lie inside.
 * @returns The key.
 * @throws {SessionError} `session_key_invalid`.
 */
export async function sessionKeyFor(
  keyFile: string | undefined,
  forbidden: readonly string[],
): Promise<Uint8Array> {
  const path = realish(keyFile ?? sessionKeyPath());
  for (const dir of forbidden) {
    if (isWithin(path, dir)) {
      throw new SessionError(
        "session_key_invalid",
        `Cannot use the session key ${path}: it lies inside ${dir}, where the session's writer or the model could read it`,
        { file: path },
      );
    }
  }
  return await loadSessionKey(path);
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
    `Cannot read or create the session key ${path}: ${messageOf(error)}`,
    { file: path, cause: error },
  );
}
