/**
 * A small suite that leaves everything running, for `cleanup_test.ts` to
 * interrupt: one test starts a PostgreSQL cluster, a `loom mcp --http`
 * server (whose executor runs in a sandbox where bubblewrap is installed)
 * and temp folders, then fails without stopping any of them; the next
 * starts more and waits to be interrupted. Not a `_test.ts` file: only run
 * on purpose.
 */
import { startCluster } from "./storage/_postgres.ts";
import { startHttp } from "./_kit/mcp.ts";
import { RUN_ROOT_VARIABLE } from "./_run_root.ts";

const withPostgres = Deno.env.get("LOOM_CLEANUP_POSTGRES") === "1";

async function leaveRunning(): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "loom-cleanup-" });
  await Deno.writeTextFile(`${root}/a.txt`, "a\n");
  if (withPostgres) await startCluster();
  await startHttp(["--root", root], ["--insecure-no-token"]);
}

/** A test that starts a cluster and a server, then `fn`, stopping nothing. */
function leaving(name: string, fn: () => Promise<void>): void {
  Deno.test({
    name,
    // What it leaves running is the point: the suite's clean-up must stop it.
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      await leaveRunning();
      await fn();
    },
  });
}

leaving("a test that fails with its cluster and server still running", () => {
  throw new Error("failed on purpose, stopping nothing");
});

leaving(
  "a test interrupted with its cluster and server still running",
  async () => {
    // Test output is shown only once a test ends: say so through a file.
    await Deno.writeTextFile(
      Deno.env.get("LOOM_CLEANUP_READY")!,
      Deno.env.get(RUN_ROOT_VARIABLE)!,
    );
    await new Promise(() => {});
  },
);
