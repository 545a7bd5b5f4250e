import assert from "node:assert/strict";
import { SessionStore } from "../../lib/persist/session_store.ts";
import { sampleRun, snapshotTree, tempLayout } from "../persist/_session.ts";

async function loom(...args: string[]) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--unstable-worker-options",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-net=127.0.0.1",
      "--allow-env",
      "cli.ts",
      "session",
      ...args,
    ],
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return { code, out: decoder.decode(stdout), err: decoder.decode(stderr) };
}

async function savedSession() {
  const layout = await tempLayout();
  const { snapshot } = await sampleRun();
  const session = await SessionStore.create(layout.root, {
    workspace: layout.workspace,
  });
  await session.save(snapshot);
  return layout;
}

Deno.test("loom session ls lists the sessions of a directory", async () => {
  const layout = await savedSession();
  await Deno.mkdir(`${layout.base}/sessions/broken`);
  await Deno.writeTextFile(`${layout.base}/sessions/broken/session.json`, "[]");
  await Deno.mkdir(`${layout.base}/sessions/empty`);
  const { code, out, err } = await loom("ls", `${layout.base}/sessions`);
  assert.equal(code, 0, err);
  const lines = out.trim().split("\n");
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /broken\s+invalid:/);
  assert.match(lines[1]!, /one\s+bounded\s+steps 3\/20\s+3 events\s+3 results/);
  const json = JSON.parse(
    (await loom("ls", `${layout.base}/sessions`, "--json")).out,
  );
  assert.equal(json[1].results, 3);
  await layout.cleanup();
});

Deno.test("loom session show summarises without printing result bodies", async () => {
  const layout = await savedSession();
  const { code, out, err } = await loom("show", layout.root);
  assert.equal(code, 0, err);
  assert.match(out, /steps\s+3 of 20/);
  assert.match(
    out,
    /results\s+3 \(1 persisted, 0 inline, 2 re-read from the workspace/,
  );
  assert.match(out, /result-1\s+reread.*src\/a\.ts/);
  for (
    const body of [
      "INSPECTED_BODY",
      "Readme body text",
      "TEST_OUTPUT_BODY",
      "EDIT_BODY",
    ]
  ) {
    assert.equal(out.includes(body), false, body);
  }
  const verified = await loom("show", layout.root, "--verify");
  assert.match(
    verified.out,
    /verified\s+3 results match their digests; 0 unavailable/,
  );
  await Deno.writeTextFile(`${layout.workspace}/src/a.ts`, "changed\n");
  const stale = await loom("show", layout.root, "--verify", "--json");
  assert.equal(stale.code, 0, stale.err);
  assert.equal(JSON.parse(stale.out).verified.unavailable[0].id, "result-1");
  await layout.cleanup();
});

Deno.test("loom session show lists an inline result without its body", async () => {
  const layout = await tempLayout();
  const { snapshot } = await sampleRun();
  await (await SessionStore.create(layout.root, {
    workspace: layout.workspace,
  })).save({ ...snapshot, overrides: { "tests.run": 1_000_000 } });
  const { code, out, err } = await loom("show", layout.root, "--verify");
  assert.equal(code, 0, err);
  assert.match(
    out,
    /results\s+3 \(0 persisted, 1 inline, 2 re-read from the workspace; 0 B persisted, [\d.]+ KiB inline\)/,
  );
  assert.match(out, /result-3\s+inline\s+partial.*session\.json/);
  assert.match(out, /verified\s+3 results match their digests/);
  assert.equal(out.includes("TEST_OUTPUT_BODY"), false);
  const json = JSON.parse((await loom("show", layout.root, "--json")).out);
  assert.equal(json.results[2].source, "inline");
  assert.ok(json.inline_bytes > 30_000);
  assert.equal(JSON.stringify(json).includes("TEST_OUTPUT_BODY"), false);
  await layout.cleanup();
});

Deno.test("loom session show names a tampered result file and exits 2", async () => {
  const layout = await savedSession();
  const dir = `${layout.root}/tool-results`;
  const [name] = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
  await Deno.writeTextFile(`${dir}/${name}`, "tampered");
  const { code, err } = await loom("show", layout.root, "--verify");
  assert.equal(code, 2);
  assert.match(err, new RegExp(`result_corrupted: .*${name}`));
  await layout.cleanup();
});

Deno.test("loom session gc --dry-run deletes nothing and gc deletes only unreferenced files", async () => {
  const layout = await savedSession();
  const orphan = `${layout.root}/tool-results/${"d".repeat(64)}.txt`;
  await Deno.writeTextFile(orphan, "orphan");
  const before = await snapshotTree(layout.base);
  const dry = await loom("gc", layout.root, "--dry-run");
  assert.equal(dry.code, 0, dry.err);
  assert.match(dry.out, /would delete tool-results\/d{64}\.txt/);
  assert.match(
    dry.out,
    /Dry run: would delete 1 files .*kept 1 referenced results/,
  );
  assert.deepEqual(await snapshotTree(layout.base), before);
  const real = await loom("gc", layout.root);
  assert.equal(real.code, 0, real.err);
  assert.match(real.out, /deleted 1 files/);
  const left =
    (await Array.fromAsync(Deno.readDir(`${layout.root}/tool-results`))).length;
  assert.equal(left, 1);
  await layout.cleanup();
});

Deno.test("loom session refuses bad usage with exit code 2", async (t) => {
  for (
    const args of [[], ["frobnicate", "x"], ["ls"], ["show", "a", "b"], [
      "ls",
      "x",
      "--dry-run",
    ]]
  ) {
    await t.step(args.join(" ") || "(no arguments)", async () => {
      const { code, err } = await loom(...args);
      assert.equal(code, 2);
      assert.match(err, /loom session/);
    });
  }
  await t.step("a directory without a session", async () => {
    const dir = await Deno.makeTempDir();
    const { code, err } = await loom("show", dir);
    assert.equal(code, 2);
    assert.match(err, /session_missing/);
    await Deno.remove(dir);
  });
  await t.step("--help prints usage", async () => {
    const { code, out } = await loom("--help");
    assert.equal(code, 0);
    assert.match(out, /loom session gc DIR \[--dry-run\]/);
  });
});
