/**
 * One root for everything a test process leaves in the temp folder, and a
 * watchdog that clears it when the process ends, however it ends.
 *
 * The first test module of a process that imports this (through
 * `_session_key.ts`, which the kit imports) makes `/tmp/loom-tests-<pid>-…`,
 * points `TMPDIR` at it — so every `Deno.makeTempDir()` of the tests, of
 * Loom itself and of every child process lands inside — and marks the
 * environment with `LOOM_TEST_ROOT`, which every child inherits. A detached
 * watchdog (its own session, deaf to SIGINT, SIGTERM and SIGHUP, without the
 * mark) waits for the test process to end — passed, failed, interrupted or
 * killed — then stops every process still carrying the mark (PostgreSQL
 * with SIGQUIT, its immediate shutdown, the rest with SIGTERM, then
 * SIGKILL) and removes the root. A test's own `finally` still stops what it
 * started; the watchdog is what holds when a `finally` never runs.
 *
 * A child process that imports this again (a CLI under test) inherits the
 * root and starts no watchdog of its own.
 *
 * @module
 */

/** The variable naming the run's root; every process of the run carries it. */
export const RUN_ROOT_VARIABLE = "LOOM_TEST_ROOT";

/**
 * The watchdog: waits for process `$1` to end, then stops the processes
 * whose environment holds `LOOM_TEST_ROOT=$2` and removes `$2`.
 */
const WATCHDOG = `
trap '' INT TERM HUP
pid=$1 root=$2 mark="${RUN_ROOT_VARIABLE}=$2"
tail --pid="$pid" -f /dev/null 2>/dev/null ||
  while kill -0 "$pid" 2>/dev/null; do sleep 1; done
marked() {
  for dir in /proc/[0-9]*; do
    p=\${dir#/proc/}
    [ "$p" = "$$" ] && continue
    tr '\\0' '\\n' < "$dir/environ" 2>/dev/null | grep -qxF "$mark" && echo "$p"
  done
}
for round in 1 2 3 4 5 6; do
  left=$(marked)
  [ -z "$left" ] && break
  for p in $left; do
    if [ "$round" -ge 4 ]; then kill -KILL "$p" 2>/dev/null
    elif [ "$(cat /proc/$p/comm 2>/dev/null)" = postgres ]; then kill -QUIT "$p" 2>/dev/null
    else kill -TERM "$p" 2>/dev/null; fi
  done
  sleep 1
done
rm -rf "$root"
`;

/**
 * The run's root (made, with its watchdog, by the first caller of the
 * process; inherited by child processes).
 *
 * @returns The root folder.
 */
export function runRoot(): string {
  const inherited = Deno.env.get(RUN_ROOT_VARIABLE);
  if (inherited !== undefined) return inherited;
  const base = Deno.env.get("TMPDIR") || "/tmp";
  const root = Deno.makeTempDirSync({
    dir: base,
    prefix: `loom-tests-${Deno.pid}-`,
  });
  // PostgreSQL runs as its own user (tests run as root): it must traverse.
  Deno.chmodSync(root, 0o711);
  const watchdog = new Deno.Command("setsid", {
    args: ["-f", "sh", "-c", WATCHDOG, "watchdog", String(Deno.pid), root],
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).outputSync();
  if (!watchdog.success) {
    Deno.removeSync(root, { recursive: true });
    throw new Error(
      "Cannot start the tests' watchdog (setsid, sh, tail): without it an interrupted run would leave processes and folders behind",
    );
  }
  Deno.env.set(RUN_ROOT_VARIABLE, root);
  Deno.env.set("TMPDIR", root);
  return root;
}

runRoot();
