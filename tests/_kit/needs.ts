/**
 * Tests that need something the machine may lack (bubblewrap, chromium,
 * PostgreSQL): where it is missing they are reported as ignored, with one
 * loud line per test file saying what is missing and how to get it; where
 * CI requires it (`LOOM_REQUIRE_…=1`) they run and fail instead. The line
 * itself fails when the thing turns out to be there after all.
 *
 * @module
 */

/** A test's body. */
export type TestBody = (t: Deno.TestContext) => Promise<void>;

/** What a kind of test needs, and what to say without it. */
export interface Need {
  /** Whether these tests run here (the thing is there, or it is required). */
  readonly runs: boolean;
  /** The loud line: what is missing, that the tests are IGNORED, and how to get it. */
  readonly ignored: string;
  /** Whether the thing is there after all. */
  readonly present: () => boolean;
  /** What the loud line throws then. */
  readonly presentAfterAll: string;
}

/**
 * A `Deno.test` for tests that need `need`.
 *
 * @param need What they need.
 * @returns The test function: ignored, loudly, where they cannot run.
 */
export function testsNeeding(
  need: Need,
): (name: string, fn: TestBody) => void {
  let warned = false;
  return (name, fn) => {
    const ignore = !need.runs;
    if (ignore && !warned) {
      warned = true;
      // One loud line in the test report (`deno test --quiet` drops plain
      // console output made before the tests start).
      Deno.test(need.ignored, () => {
        if (need.present()) throw new Error(need.presentAfterAll);
      });
    }
    Deno.test({ name, ignore, fn });
  };
}

/**
 * Whether `command ARGS` runs and exits 0 here, its output dropped: a
 * probe for what a kind of test needs. A missing program is `false`.
 *
 * @param command The program.
 * @param args Its arguments.
 * @returns Whether it succeeded.
 */
export function commandSucceeds(
  command: string,
  args: readonly string[],
): boolean {
  try {
    return new Deno.Command(command, {
      args: [...args],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
}
