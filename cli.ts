/**
 * The `loom` command line. Thin on purpose: parse, dispatch, exit.
 *
 * ```sh
 * npx -y deno@2.9.6 run --unstable-worker-options -A jsr:@loom/loom/cli --help
 * ```
 *
 * @module
 */
import { main } from "./lib/cli/main.ts";

export { main } from "./lib/cli/main.ts";
export type { CliIo } from "./lib/cli/_io.ts";

const encoder = new TextEncoder();

function write(
  stream: { writeSync(p: Uint8Array): number },
  text: string,
): void {
  const bytes = encoder.encode(text);
  let offset = 0;
  while (offset < bytes.length) {
    offset += stream.writeSync(bytes.subarray(offset));
  }
}

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
  const code = await main(Deno.args, {
    out: (text) => write(Deno.stdout, text),
    err: (text) => write(Deno.stderr, text),
  });
  Deno.exit(code);
}
