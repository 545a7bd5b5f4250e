/**
 * The `loom` command line, for **people at a shell** and for embedders that
 * run its commands in-process: `main(args, io)` returns the exit code and
 * writes only through `io`. Run as a program, this file calls it with the
 * process's arguments and streams, then exits with its code.
 *
 * ```sh
 * npx -y deno@2.9.6 run --unstable-worker-options -A jsr:@loom/loom/cli --help
 * ```
 *
 * @example Run a command in-process
 * ```ts
 * import { main } from "@loom/loom/cli";
 * import assert from "node:assert/strict";
 * let out = "";
 * const code = await main(["--help"], { out: (t) => (out += t), err: () => {} });
 * assert.equal(code, 0);
 * assert.match(out, /Usage: loom <command>/);
 * ```
 * @module
 */
import { main } from "./lib/cli/main.ts";
import { processIo } from "./lib/cli/cli_io.ts";

export { main } from "./lib/cli/main.ts";
export type { CliIo } from "./lib/cli/cli_io.ts";

if (import.meta.main) {
  // `deno task loom` runs in the folder of deno.json and passes the folder it
  // was started from as LOOM_CWD, so paths resolve where the user stands.
  const allowed = Deno.permissions.querySync({
    name: "env",
    variable: "LOOM_CWD",
  }).state === "granted";
  const cwd = allowed ? Deno.env.get("LOOM_CWD") : undefined;
  if (cwd !== undefined && cwd !== "") {
    Deno.env.delete("LOOM_CWD");
    Deno.chdir(cwd);
  }
  Deno.exit(await main(Deno.args, processIo()));
}
