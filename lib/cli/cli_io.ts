/**
 * Where a CLI command writes. Commands never touch `Deno.stdout` directly, so
 * tests can capture output and `cli.ts` stays the only place that exits.
 *
 * @module
 */

/** Output sinks handed to every command. */
export interface CliIo {
  /** Writes text to standard output exactly as given (no newline added). */
  out(text: string): void;
  /** Writes text to standard error exactly as given (no newline added). */
  err(text: string): void;
}

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

/**
 * The process's own standard output and error as a {@linkcode CliIo}.
 *
 * @returns Sinks that write synchronously and completely.
 */
export function processIo(): CliIo {
  return {
    out: (text) => write(Deno.stdout, text),
    err: (text) => write(Deno.stderr, text),
  };
}
