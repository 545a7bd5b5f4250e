/**
 * Runs one test process to its end: combined output tail, timeout kill.
 * What confines the process is decided before (see `_test_plan.ts`); this
 * module only spawns the final command line.
 *
 * @module
 */

/** A fully prepared test command line. */
export interface TestProcessSpec {
  /** The program to spawn (bwrap, deno, or the user's program). */
  readonly program: string;
  /** Its arguments. */
  readonly args: readonly string[];
  /** The working directory. */
  readonly cwd: string;
  /** The whole environment (nothing else is inherited). */
  readonly env: Readonly<Record<string, string>>;
  /** Kill after this many milliseconds. */
  readonly timeoutMs: number;
  /** How long to wait for output pipes after the process ended. */
  readonly drainMs: number;
  /** Bytes of combined output kept. */
  readonly tailBytes: number;
}

/** The raw result of a test process. */
export interface TestProcessResult {
  /** Exit code (128 + signal number when killed). */
  readonly exitCode: number;
  /** Whether the timeout killed it. */
  readonly timedOut: boolean;
  /** The last bytes of combined stdout and stderr. */
  readonly tail: Uint8Array;
  /** All output bytes seen. */
  readonly outputBytes: number;
}

/**
 * Spawns the process with stdin closed, keeps the tail of its output, and
 * kills it with SIGKILL at the timeout.
 */
export async function runTestProcess(
  spec: TestProcessSpec,
): Promise<TestProcessResult> {
  const child = new Deno.Command(spec.program, {
    args: [...spec.args],
    cwd: spec.cwd,
    clearEnv: true,
    env: { ...spec.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let tail = new Uint8Array(0);
  let total = 0;
  const keep = (chunk: Uint8Array): void => {
    total += chunk.length;
    if (chunk.length >= spec.tailBytes) {
      tail = chunk.slice(chunk.length - spec.tailBytes);
      return;
    }
    const kept = Math.min(tail.length, spec.tailBytes - chunk.length);
    const next = new Uint8Array(kept + chunk.length);
    next.set(tail.subarray(tail.length - kept), 0);
    next.set(chunk, kept);
    tail = next;
  };
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const pumps = readers.map(async (reader) => {
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) return;
        keep(value);
      }
    } catch {
      // Cancelled after the drain period.
    }
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, spec.timeoutMs);
  let status: Deno.CommandStatus;
  try {
    status = await child.status;
  } finally {
    clearTimeout(timer);
  }
  // A process the test started may still hold the pipes: drain briefly.
  let drainTimer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    Promise.all(pumps),
    new Promise<void>((done) => {
      drainTimer = setTimeout(done, spec.drainMs);
    }),
  ]);
  clearTimeout(drainTimer);
  for (const reader of readers) reader.cancel().catch(() => {});
  return {
    exitCode: status.code,
    timedOut,
    tail,
    outputBytes: total,
  };
}
