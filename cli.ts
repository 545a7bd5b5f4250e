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
  const code = await main(Deno.args, {
    out: (text) => write(Deno.stdout, text),
    err: (text) => write(Deno.stderr, text),
  });
  Deno.exit(code);
}
