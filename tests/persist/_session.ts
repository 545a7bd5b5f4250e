import type { ActionRecord } from "../../lib/briefing/report.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import type { SessionSnapshot } from "../../lib/persist/session_store.ts";

/** A workspace and a session root side by side in one temp dir. */
export async function tempLayout(): Promise<
  { base: string; workspace: string; root: string; cleanup(): Promise<void> }
> {
  const base = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "loom-persist-" }),
  );
  const workspace = `${base}/ws`;
  const root = `${base}/sessions/one`;
  await Deno.mkdir(`${workspace}/src`, { recursive: true });
  await Deno.writeTextFile(
    `${workspace}/src/a.ts`,
    "export const INSPECTED_BODY = 1;\n",
  );
  await Deno.writeTextFile(`${workspace}/README.md`, "# Readme body text\n");
  return {
    base,
    workspace,
    root,
    cleanup: () => Deno.remove(base, { recursive: true }),
  };
}

/**
 * Test output above the default persistence threshold of `tests.run`
 * (30 000 characters), so a save writes it to `tool-results/`.
 */
export const TEST_OUTPUT =
  "FAIL stats_test.ts\nexpected 3, got 4\nTEST_OUTPUT_BODY\n" +
  "ok   check passed\n".repeat(2_000);

/** A run of three steps: inspect two files, run the tests, refuse one. */
export async function sampleRun(): Promise<
  { results: ResultStore; records: ActionRecord[]; snapshot: SessionSnapshot }
> {
  const results = new ResultStore();
  const a = await results.put("export const INSPECTED_BODY = 1;\n", {
    origin: "repository.inspect src/a.ts",
    capture: "complete",
  });
  const readme = await results.put("# Readme body text\n", {
    origin: "repository.inspect README.md",
    capture: "complete",
  });
  const output = await results.put(TEST_OUTPUT, {
    origin: "tests.run deno run check.ts",
    capture: "partial",
  });
  const records: ActionRecord[] = [
    {
      sequence: 1,
      action: "repository.inspect",
      arguments: { paths: ["src/a.ts", "README.md", "gone.txt"] },
      report: {
        kind: "inspected",
        files: [
          { path: "src/a.ts", descriptor: a },
          { path: "README.md", descriptor: readme },
          { path: "gone.txt", missing: true },
        ],
      },
    },
    {
      sequence: 2,
      action: "tests.run",
      arguments: {},
      report: {
        kind: "tests_run",
        exit_code: 1,
        timed_out: false,
        tested_revision: null,
        output,
        confinement: "subprocess (not confined by Deno)",
      },
    },
    {
      sequence: 3,
      action: "repository.edit",
      arguments: { files: [{ path: "/etc/passwd", contents: "EDIT_BODY" }] },
      report: {
        kind: "refused",
        code: "absolute_path",
        reason: "Absolute paths are refused",
      },
    },
  ];
  return { results, records, snapshot: snapshotOf(results, records) };
}

export function snapshotOf(
  results: ResultStore,
  records: ActionRecord[],
  extra: Partial<SessionSnapshot> = {},
): SessionSnapshot {
  return {
    intent: "Fix the mean",
    policy: "bounded",
    model: "recorded:fixtures/recordings/x.json",
    test: { command: ["deno", "run", "check.ts"], timeoutMs: 30_000 },
    revision: null,
    maxSteps: 20,
    stepsUsed: records.length,
    modelCallsUsed: records.length * 2,
    records,
    results: results.stored(),
    counters: { refusals: 1, retrievals: 0 },
    ...extra,
  };
}

/** Every file under a directory with its bytes (sorted), to compare trees. */
export async function snapshotTree(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  async function walk(path: string, rel: string): Promise<void> {
    let entries: Deno.DirEntry[] = [];
    try {
      entries = await Array.fromAsync(Deno.readDir(path));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    for (const entry of entries.sort((x, y) => x.name.localeCompare(y.name))) {
      const child = `${path}/${entry.name}`;
      const name = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory) {
        out.set(`${name}/`, "");
        await walk(child, name);
      } else {
        const info = await Deno.lstat(child);
        out.set(
          name,
          `${info.mtime?.getTime()}:${await Deno.readTextFile(child)}`,
        );
      }
    }
  }
  await walk(dir, "");
  return out;
}
