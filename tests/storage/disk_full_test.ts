/**
 * The `file:` store's disk fills: in a private mount namespace (`unshare
 * -m`, so nothing stays mounted) a 2 MB tmpfs holds a gateway's session;
 * once it is full a new answer is described with `result_unavailable:
 * "store_full"`, the gateway goes on answering, every result stored before
 * reads back with its digest, the chain verifies, and no partial file is
 * left. Needs root (or CAP_SYS_ADMIN) for the namespace: elsewhere it is
 * ignored with one loud line.
 */
import "../_session_key.ts";
import assert from "node:assert/strict";
import { REPO_ROOT, tempDir, TEST_PERMISSIONS } from "../_kit.ts";
import { commandSucceeds, testsNeeding } from "../_kit/needs.ts";

/** `unshare` arguments that run `script` (with `args`) in a private mount namespace. */
function privately(script: string, ...args: string[]): string[] {
  return ["-m", "--propagation", "private", "sh", "-c", script, ...args];
}

function canMount(): boolean {
  return commandSucceeds(
    "unshare",
    privately("mount -t tmpfs -o size=1m probe /mnt"),
  );
}

const mountTest = testsNeeding({
  runs: canMount(),
  ignored:
    "!!! cannot mount a tmpfs in a private mount namespace here (unshare -m needs root or CAP_SYS_ADMIN): the disk-full test is IGNORED",
  present: canMount,
  presentAfterAll:
    "a tmpfs mounts in a private mount namespace after all: rerun the tests",
});

mountTest(
  "a file: store whose disk fills answers store_full, goes on answering, and damages nothing already stored",
  async () => {
    await using dir = await tempDir();
    const mount = `${dir.path}/disk`;
    await Deno.mkdir(mount);
    const out = await new Deno.Command("unshare", {
      args: [
        ...privately(
          'mount -t tmpfs -o size=2m,mode=0700 loom-full "$0" && exec "$@"',
          mount,
        ),
        Deno.execPath(),
        "run",
        "--quiet",
        ...TEST_PERMISSIONS,
        `${REPO_ROOT}/tests/storage/_disk_full.ts`,
        mount,
        dir.path,
      ],
      cwd: REPO_ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const summary = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.ok(summary.acked >= 3, `${JSON.stringify(summary)}\n${stderr}`);
    assert.equal(summary.full?.result_unavailable, "store_full", stderr);
    assert.equal(summary.readBack, summary.acked);
    assert.equal(summary.verified, summary.acked);
    assert.equal(summary.smallAfter, true);
    assert.deepEqual(summary.leftovers, []);
    // Nothing stays mounted: the namespace went with its process.
    const mounts = await new Deno.Command("cat", {
      args: ["/proc/self/mounts"],
      stdout: "piped",
    }).output();
    assert.equal(
      new TextDecoder().decode(mounts.stdout).includes(mount),
      false,
    );
  },
);
