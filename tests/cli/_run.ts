import "../_session_key.ts";

/** Runs the real `loom` CLI as a subprocess. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  stdoutBytes: Uint8Array;
}

/**
 * Runs `cli.ts` with the test task's permissions.
 *
 * @param args Arguments after the program name.
 * @returns Exit code and decoded output.
 */
export async function loom(...args: string[]): Promise<CliResult> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--unstable-worker-options",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-net=127.0.0.1",
      "--allow-env",
      "cli.ts",
      ...args,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
    stdoutBytes: output.stdout,
  };
}

/** What an in-process {@linkcode main} call printed and returned. */
export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `main(args, io)` in this process, capturing what it writes.
 *
 * @param args Arguments after the program name.
 * @returns Exit code and output.
 */
export async function loomIn(...args: string[]): Promise<InProcessResult> {
  const { main } = await import("../../lib/cli/main.ts");
  let stdout = "";
  let stderr = "";
  const code = await main(args, {
    out: (text) => stdout += text,
    err: (text) => stderr += text,
  });
  return { code, stdout, stderr };
}
