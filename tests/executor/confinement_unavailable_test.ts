/**
 * Without worker permissions the executor refuses to start: these tests run
 * a tiny program in a subprocess with chosen Deno flags, since flags are per
 * process.
 */
import assert from "node:assert/strict";
import { tempDir } from "../_kit.ts";

const EXECUTOR = new URL(
  "../../lib/executor/workspace_executor.ts",
  import.meta.url,
).href;

const PROBE = `
import { WorkspaceExecutor } from ${JSON.stringify(EXECUTOR)};
const workspace = Deno.args[0];
const testCommand = Deno.args[1] === undefined ? undefined : [Deno.args[1]];
try {
  const executor = await WorkspaceExecutor.start({ workspace, ...(testCommand ? { testCommand } : {}) });
  executor.close();
  console.log("started");
} catch (error) {
  console.log(error.code);
  console.error(error.message);
}
`;

/** Deno flags: `--unstable-worker-options` when `workerOptions`, then `--allow-NAME` for each name. */
function flags(workerOptions: boolean, ...allow: string[]): string[] {
  return [
    ...(workerOptions ? ["--unstable-worker-options"] : []),
    ...allow.map((name) => `--allow-${name}`),
  ];
}

async function probe(
  flags: string[],
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  await using dir = await tempDir();
  const script = `${dir.path}/probe.ts`;
  await Deno.writeTextFile(script, PROBE);
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", ...flags, script, ...args],
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout).trim(),
    stderr: decoder.decode(output.stderr),
  };
}

Deno.test("WorkspaceExecutor.start() throws ConfinementUnavailableError without worker permissions", async (t) => {
  await using dir = await tempDir();
  const workspace = dir.path;
  /** The probe on the workspace, with a test command when given. */
  const start = (deno: string[], testCommand?: string) =>
    probe(
      deno,
      testCommand === undefined ? [workspace] : [workspace, testCommand],
    );
  await t.step(
    "with --unstable-worker-options and the permissions it starts",
    async () => {
      const result = await start(flags(true, "read", "write", "run", "env"));
      assert.equal(result.stdout, "started", result.stderr);
    },
  );

  await t.step(
    "without --unstable-worker-options it is confinement_unavailable, not an exit",
    async () => {
      const result = await start(
        flags(false, "read", "write", "run", "env"),
        "true",
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, "confinement_unavailable", result.stderr);
      assert.match(result.stderr, /--unstable-worker-options/);
    },
  );

  await t.step(
    "without run permission (no bubblewrap can run) a non-Deno test is confinement_unavailable",
    async () => {
      const result = await start(flags(true, "read", "write", "env"), "true");
      assert.equal(result.stdout, "confinement_unavailable", result.stderr);
      assert.match(result.stderr, /Cannot confine the test command "true"/);
    },
  );

  await t.step(
    "without write permission for the workspace it is confinement_unavailable",
    async () => {
      const result = await start(flags(true, "read", "env"));
      assert.equal(result.stdout, "confinement_unavailable", result.stderr);
    },
  );

  await t.step(
    "without the flag and without any way to read the command line, Deno itself ends the process rather than run unconfined",
    async () => {
      const result = await start(flags(false, "read", "write", "env"));
      assert.notEqual(result.stdout, "started");
      assert.equal(result.code, 70, result.stderr);
      assert.match(result.stderr, /--unstable-worker-options/);
    },
  );

  await t.step("nothing was written to the workspace", async () => {
    assert.deepEqual(await Array.fromAsync(Deno.readDir(workspace)), []);
  });
});
