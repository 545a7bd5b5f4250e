import assert from "node:assert/strict";
import { parseSessionArguments } from "../../lib/cli/session.ts";
import { saveSnapshot } from "../../lib/persist/session_store.ts";
import { loomInWith } from "../_kit.ts";
import { checkParser } from "./_arguments.ts";
import {
  createSession,
  type Layout,
  rewriteJournal,
  sampleRun,
  snapshotTree,
  tempLayout,
} from "../persist/_session.ts";

/** `loom session ARGS` with the layout's session key. */
async function loom(layout: Pick<Layout, "keyFile">, ...args: string[]) {
  const { code, stdout, stderr } = await loomInWith(
    { env: { LOOM_SESSION_KEY_FILE: layout.keyFile } },
    "session",
    ...args,
  );
  return { code, out: stdout, err: stderr };
}

async function savedSession(overrides?: Record<string, unknown>) {
  const layout = await tempLayout();
  const { snapshot } = await sampleRun();
  const session = await createSession(layout, overrides);
  await saveSnapshot(session, snapshot);
  await session.close();
  return layout;
}

Deno.test("loom session ls lists the sessions of a directory", async () => {
  const layout = await savedSession();
  await Deno.mkdir(`${layout.base}/sessions/broken`);
  await Deno.writeTextFile(
    `${layout.base}/sessions/broken/journal.jsonl`,
    "[]\n",
  );
  await Deno.mkdir(`${layout.base}/sessions/empty`);
  const { code, out, err } = await loom(
    layout,
    "ls",
    `${layout.base}/sessions`,
  );
  assert.equal(code, 0, err);
  const lines = out.trim().split("\n");
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /broken\s+invalid:/);
  assert.match(lines[1]!, /one\s+bounded\s+steps 3\/20\s+3 events\s+3 results/);
  const json = JSON.parse(
    (await loom(layout, "ls", `${layout.base}/sessions`, "--json")).out,
  );
  assert.equal(json[1].results, 3);
  await layout.cleanup();
});

Deno.test("loom session show summarises without printing result bodies", async () => {
  const layout = await savedSession();
  const { code, out, err } = await loom(layout, "show", layout.root);
  assert.equal(code, 0, err);
  assert.match(out, /steps\s+3 of 20/);
  assert.match(out, /journal\s+2 records/);
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
  const verified = await loom(layout, "show", layout.root, "--verify");
  assert.match(
    verified.out,
    /verified\s+2 journal records: MAC chain intact\n\s+3 results healthy; 0 stale/,
  );
  await layout.cleanup();
});

Deno.test("loom session show --verify calls a changed inspected file stale, not damaged", async () => {
  const layout = await savedSession();
  await Deno.writeTextFile(`${layout.workspace}/src/a.ts`, "changed\n");
  const shown = await loom(layout, "show", layout.root, "--verify");
  assert.equal(shown.code, 0, shown.err);
  assert.match(shown.out, /2 results healthy; 1 stale by design/);
  assert.match(
    shown.out,
    /result-1\s+stale: file changed after inspection \(src\/a\.ts changed/,
  );
  assert.doesNotMatch(shown.out, /digest_mismatch|corrupt|damaged/);
  const json = await loom(layout, "show", layout.root, "--verify", "--json");
  assert.equal(json.code, 0, json.err);
  assert.equal(JSON.parse(json.out).verified.stale[0].id, "result-1");
  await layout.cleanup();
});

Deno.test("loom session show --verify refuses a tampered journal and exits 2", async () => {
  const layout = await savedSession();
  await rewriteJournal(layout.root, (records) => {
    records[1]!.records[1].report.exit_code = 0;
    return records;
  });
  const plain = await loom(layout, "show", layout.root);
  assert.equal(plain.code, 0, "show without --verify only summarises");
  const { code, err } = await loom(layout, "show", layout.root, "--verify");
  assert.equal(code, 2);
  assert.match(err, /session_tampered: .*record 1 \(line 2\)/);
  await layout.cleanup();
});

Deno.test("loom session show lists an inline result without its body", async () => {
  const layout = await savedSession({ "tests.run": 1_000_000 });
  const { code, out, err } = await loom(
    layout,
    "show",
    layout.root,
    "--verify",
  );
  assert.equal(code, 0, err);
  assert.match(
    out,
    /results\s+3 \(0 persisted, 1 inline, 2 re-read from the workspace; 0 B persisted, [\d.]+ KiB inline\)/,
  );
  assert.match(out, /result-3\s+inline\s+partial.*journal\.jsonl/);
  assert.match(out, /3 results healthy/);
  assert.equal(out.includes("TEST_OUTPUT_BODY"), false);
  const json = JSON.parse(
    (await loom(layout, "show", layout.root, "--json")).out,
  );
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
  const { code, err } = await loom(layout, "show", layout.root, "--verify");
  assert.equal(code, 2);
  assert.match(err, new RegExp(`result_corrupted: .*${name}`));
  await layout.cleanup();
});

Deno.test("loom session gc --dry-run deletes nothing and gc deletes only unreferenced files", async () => {
  const layout = await savedSession();
  const orphan = `${layout.root}/tool-results/${"d".repeat(64)}.txt`;
  await Deno.writeTextFile(orphan, "orphan");
  const before = await snapshotTree(layout.base);
  const dry = await loom(layout, "gc", layout.root, "--dry-run");
  assert.equal(dry.code, 0, dry.err);
  assert.match(dry.out, /would delete tool-results\/d{64}\.txt/);
  assert.match(
    dry.out,
    /Dry run: would delete 1 files .*kept 1 referenced results/,
  );
  assert.deepEqual(await snapshotTree(layout.base), before);
  const real = await loom(layout, "gc", layout.root);
  assert.equal(real.code, 0, real.err);
  assert.match(real.out, /deleted 1 files/);
  const left =
    (await Array.fromAsync(Deno.readDir(`${layout.root}/tool-results`))).length;
  assert.equal(left, 1);
  await layout.cleanup();
});

Deno.test("loom session refuses bad usage with exit code 2", async (t) => {
  const layout = { keyFile: `${await Deno.makeTempDir()}/session.key` };
  for (
    const args of [[], ["frobnicate", "x"], ["ls"], ["show", "a", "b"], [
      "ls",
      "x",
      "--dry-run",
    ]]
  ) {
    await t.step(args.join(" ") || "(no arguments)", async () => {
      const { code, err } = await loom(layout, ...args);
      assert.equal(code, 2);
      assert.match(err, /loom session/);
    });
  }
  await t.step("a directory without a session", async () => {
    const dir = await Deno.makeTempDir();
    const { code, err } = await loom(layout, "show", dir);
    assert.equal(code, 2);
    assert.match(err, /session_missing/);
    await Deno.remove(dir);
  });
  await t.step("--help prints usage", async () => {
    const { code, out } = await loom(layout, "--help");
    assert.equal(code, 0);
    assert.match(out, /loom session gc DIR \[--dry-run\]/);
  });
});

Deno.test("parseSessionArguments() reads the subcommand, DIR and its flags", async (t) => {
  const flags = { json: false, verify: false, dryRun: false };
  await checkParser(t, parseSessionArguments, [
    ["ls, nothing read", ["ls", "/nonexistent"], {
      sub: "ls",
      dir: "/nonexistent",
      ...flags,
    }],
    ["show --verify --json", ["show", "d", "--verify", "--json"], {
      sub: "show",
      dir: "d",
      ...flags,
      json: true,
      verify: true,
    }],
    ["gc --dry-run", ["gc", "--dry-run", "d"], {
      sub: "gc",
      dir: "d",
      ...flags,
      dryRun: true,
    }],
    ["--help wins", ["frob", "--help"], {
      help: /^Usage: loom session ls DIR/,
    }],
    ["no subcommand", [], { usage: "expected ls, show or gc" }],
    ["an unknown subcommand", ["frobnicate", "x"], {
      usage: "unknown subcommand 'frobnicate'; expected ls, show or gc",
    }],
    ["no DIR", ["ls"], { usage: "expected exactly one DIR after 'ls'" }],
    ["two DIRs", ["show", "a", "b"], {
      usage: "expected exactly one DIR after 'show'",
    }],
    ["--dry-run with ls", ["ls", "x", "--dry-run"], {
      usage: "--dry-run applies to gc only",
    }],
    ["--verify with gc", ["gc", "x", "--verify"], {
      usage: "--verify applies to show only",
    }],
  ]);
});

Deno.test("loom session ls and show describe an SDK adapter's session, which serves no workspace", async () => {
  const { McpSession } = await import("../../lib/persist/mcp_session.ts");
  const { ResultStore } = await import("../../lib/store/result_store.ts");
  const { tempDir } = await import("../_kit.ts");
  await using home = await tempDir();
  const keyFile = `${home.path}/key`;
  const dir = `${home.path}/sessions/chat-1`;
  const session = await McpSession.open(dir, { keyFile });
  const store = new ResultStore();
  const d = await store.put("rows\n", { origin: "rows", capture: "complete" });
  await session.save(store.get(d.result!)!);
  await session.close();
  const listed = await loom({ keyFile }, "ls", `${home.path}/sessions`);
  assert.equal(listed.code, 0, listed.err);
  assert.match(
    listed.out,
    /mcp {2}1 results .* root \(none: an SDK adapter's store\)/,
  );
  const shown = await loom({ keyFile }, "show", dir, "--verify");
  assert.equal(shown.code, 0, shown.err);
  assert.match(shown.out, /serves {5}no workspace \(an SDK adapter's store\)/);
  assert.match(shown.out, /MAC chain intact\n\s+1 results healthy/);
});
