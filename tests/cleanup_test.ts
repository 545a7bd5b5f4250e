/**
 * Tests leave nothing behind: a suite whose first test fails and whose
 * second is interrupted with SIGINT — each with a PostgreSQL cluster (where
 * one can run), a `loom mcp --http` server and temp folders still open — is
 * run as a subprocess; once it has ended, no process of it runs and its
 * `loom-*` folders are gone.
 */
import assert from "node:assert/strict";
import { REPO_ROOT, TEST_PERMISSIONS } from "./_kit.ts";
import { RUN_ROOT_VARIABLE } from "./_run_root.ts";
import { POSTGRES_RUNS } from "./storage/_postgres.ts";

/**
 * Processes whose environment carries `LOOM_TEST_ROOT=root` (read by a
 * shell: Deno reads /proc only with --allow-all).
 */
async function marked(root: string): Promise<string[]> {
  const out = await new Deno.Command("sh", {
    args: [
      "-c",
      `for d in /proc/[0-9]*; do
         tr '\\0' '\\n' < "$d/environ" 2>/dev/null | grep -qxF "$1" &&
           echo "\${d#/proc/} $(cat "$d/comm" 2>/dev/null)"
       done; true`,
      "marked",
      `${RUN_ROOT_VARIABLE}=${root}`,
    ],
    stdout: "piped",
    stderr: "null",
  }).output();
  // The scan's own processes carry the test's mark, not the suite's.
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) =>
    l !== ""
  );
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("a suite that fails and is then interrupted with SIGINT leaves no process and no loom-* folder behind", async () => {
  const parent = await Deno.makeTempDir({ prefix: "loom-cleanup-parent-" });
  // The suite's PostgreSQL runs as its own user: it must traverse.
  await Deno.chmod(parent, 0o711);
  const ready = `${parent}/ready`;
  const env = Deno.env.toObject();
  delete env[RUN_ROOT_VARIABLE];
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "--quiet", ...TEST_PERMISSIONS, "tests/_cleanup_suite.ts"],
    cwd: REPO_ROOT,
    clearEnv: true,
    env: {
      ...env,
      TMPDIR: parent,
      LOOM_CLEANUP_POSTGRES: POSTGRES_RUNS ? "1" : "0",
      LOOM_CLEANUP_READY: ready,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  const watcher = Deno.watchFs(parent, { recursive: false });
  try {
    let root: string | undefined;
    const ended = child.status.then(() => undefined);
    const events = watcher[Symbol.asyncIterator]();
    while (root === undefined) {
      root = await Deno.readTextFile(ready).catch(() => undefined);
      if (root !== undefined && root !== "") break;
      root = undefined;
      if (await Promise.race([events.next(), ended]) === undefined) break;
    }
    if (root === undefined) {
      assert.fail(
        `the suite ended before it got ready:\n${(await output).join("\n")}`,
      );
    }
    assert.ok(root.startsWith(`${parent}/loom-tests-`), root);
    const running = await marked(root);
    // Two servers (each a deno), two clusters' postgres processes.
    assert.ok(
      running.filter((p) => p.endsWith(" deno")).length >= 2,
      running.join(", "),
    );
    if (POSTGRES_RUNS) {
      assert.ok(
        running.some((p) => p.endsWith(" postgres")),
        running.join(", "),
      );
    }
    assert.ok(await exists(root));
    child.kill("SIGINT");
    await child.status;
    // The watchdog acts once the suite's process is gone.
    const deadline = Date.now() + 30_000;
    let left = await marked(root);
    while ((left.length > 0 || await exists(root)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      left = await marked(root);
    }
    assert.deepEqual(left, []);
    assert.equal(await exists(root), false, `${root} is left`);
    const folders = [];
    for await (const entry of Deno.readDir(parent)) folders.push(entry.name);
    assert.deepEqual(folders.filter((f) => f.startsWith("loom-")), []);
  } finally {
    watcher.close();
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
    await output.catch(() => []);
    await Deno.remove(parent, { recursive: true }).catch(() => {});
  }
});
