/**
 * docs/performance.md's executor tables: what large results and loud tests
 * cost through the workspace executor, against the floor of doing the same
 * work in one process.
 *
 * 1. Inspect: one `inspect` of 1, 3 and 8 text files of 16 MiB, through the
 *    Worker in this process and through the bubblewrap sandbox, each case
 *    in a fresh process (so its peak RSS is its own): the extra time over
 *    inspecting one small file in the same executor, the peak RSS of the
 *    process (and of the sandbox's Deno process), against `sha256sum` of
 *    the same files and a read + SHA-256 in one Deno process. An edit of
 *    one 16 MiB file rides the same path and gets its row.
 * 2. Test output: a test printing 128 MiB against the same command with its
 *    output to /dev/null.
 *
 * Repository-sized workspaces are measured where users meet them, through
 * the CLI: tests/bench/workspace_figures.ts.
 *
 * Rounds are interleaved so load on the machine hits every row alike; each
 * figure is the median.
 *
 *   deno run --unstable-worker-options --allow-all tests/bench/executor_figures.ts [rounds]
 */
import { createHash } from "node:crypto";
import { WorkspaceExecutor } from "../../lib/executor/workspace_executor.ts";
import { elapsed as timed, median } from "../_kit/measure.ts";

const MiB = 1024 * 1024;
const FILE_BYTES = 16 * MiB;
const SELF = new URL(import.meta.url).pathname;

/** Peak RSS (VmHWM) of a process in MiB, or 0 when it is gone. */
function peakMiB(pid: number | "self"): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return kb / 1024;
  } catch {
    return 0;
  }
}

/** Processes below this one (the sandbox's bwrap and its Deno). */
function descendants(): number[] {
  const parents = new Map<number, number>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(entry.name), ppid);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const frontier = [Deno.pid];
  while (frontier.length > 0) {
    const parent = frontier.pop() as number;
    for (const [pid, ppid] of parents) {
      if (ppid === parent) {
        found.push(pid);
        frontier.push(pid);
      }
    }
  }
  return found;
}

/** One case, in this (fresh) process: prints a JSON line. */
async function runCase(
  workspace: string,
  channel: string,
  count: number,
  op: string,
): Promise<void> {
  const executor = await WorkspaceExecutor.start({
    workspace,
    ...(channel === "worker" ? { sandbox: null } : {}),
  });
  try {
    let start = performance.now();
    await executor.inspect(["small.txt"]);
    const small = performance.now() - start;
    start = performance.now();
    if (op === "inspect") {
      const paths = Array.from({ length: count }, (_, i) => `big-${i}.txt`);
      const files = await executor.inspect(paths);
      const bytes = files.reduce((sum, f) => sum + (f.text?.length ?? 0), 0);
      if (bytes !== count * FILE_BYTES) throw new Error("short inspect");
    } else {
      const contents = await Deno.readTextFile(`${workspace}/big-0.txt`);
      start = performance.now();
      await executor.edit([{ path: "edited.txt", contents }]);
    }
    const ms = performance.now() - start;
    const sandbox = Math.max(0, ...descendants().map((pid) => peakMiB(pid)));
    console.log(JSON.stringify({ small, ms, rss: peakMiB("self"), sandbox }));
  } finally {
    executor.close();
  }
}

async function child(args: string[]): Promise<Record<string, number>> {
  // All permissions: a case reads /proc for the sandbox's peak RSS.
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--unstable-worker-options", "--allow-all", SELF, ...args],
    stdin: "null",
  }).output();
  if (code !== 0) {
    throw new Error(`${args.join(" ")}: ${new TextDecoder().decode(stderr)}`);
  }
  const lines = new TextDecoder().decode(stdout).trim().split("\n");
  return JSON.parse(lines.at(-1) as string);
}

async function sha256sum(paths: string[]): Promise<number> {
  return await timed(async () => {
    const { success } = await new Deno.Command("sha256sum", {
      args: paths,
      stdout: "null",
    }).output();
    if (!success) throw new Error("sha256sum failed");
  });
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const x = (ratio: number) => `${ratio.toFixed(1)}×`;

/** Text lines of varying length, `bytes` long. */
function textOf(bytes: number, seed: number): Uint8Array {
  const out = new Uint8Array(bytes);
  const line = new TextEncoder().encode(
    `${seed} the quick brown fox jumps over the lazy dog 0123456789 {"a": [1, 2]}\n`,
  );
  for (let at = 0; at < bytes; at += line.length) {
    out.set(line.subarray(0, Math.min(line.length, bytes - at)), at);
  }
  return out;
}

async function inspectTable(rounds: number): Promise<string> {
  const workspace = await Deno.makeTempDir({ prefix: "loom-bench-" });
  try {
    await Deno.writeTextFile(`${workspace}/small.txt`, "small\n");
    for (let i = 0; i < 8; i++) {
      await Deno.writeFile(`${workspace}/big-${i}.txt`, textOf(FILE_BYTES, i));
    }
    const cases: [string, number, string][] = [];
    for (const channel of ["worker", "bubblewrap"]) {
      for (const count of [1, 3, 8]) cases.push([channel, count, "inspect"]);
      cases.push([channel, 1, "edit"]);
    }
    const results = new Map<string, Record<string, number>[]>();
    const floors = new Map<number, { sum: number[]; deno: number[] }>();
    for (let round = 0; round < rounds; round++) {
      for (const [channel, count, op] of cases) {
        const key = `${channel} ${count} ${op}`;
        const result = await child([
          "case",
          workspace,
          channel,
          String(count),
          op,
        ]);
        results.set(key, [...(results.get(key) ?? []), result]);
        await Deno.remove(`${workspace}/edited.txt`).catch(() => {});
      }
      for (const count of [1, 3, 8]) {
        const paths = Array.from(
          { length: count },
          (_, i) => `${workspace}/big-${i}.txt`,
        );
        const floor = floors.get(count) ?? { sum: [], deno: [] };
        floor.sum.push(await sha256sum(paths));
        floor.deno.push(
          await timed(async () => {
            for (const path of paths) {
              createHash("sha256").update(await Deno.readFile(path)).digest();
            }
          }),
        );
        floors.set(count, floor);
      }
    }
    const rows = [
      "| channel | action | bytes | extra time | `sha256sum` | read + hash in one process | extra / `sha256sum` | peak RSS (process) | peak RSS (sandbox) | RSS limit (6× bytes + 150 MiB) |",
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ];
    const extras = new Map<string, number>();
    for (const [channel, count, op] of cases) {
      const runs = results.get(`${channel} ${count} ${op}`) ?? [];
      const extra = median(
        runs.map((r) =>
          (r.ms as number) - (op === "inspect" ? r.small as number : 0)
        ),
      );
      extras.set(`${channel} ${count} ${op}`, extra);
      const floor = floors.get(count) as { sum: number[]; deno: number[] };
      const sum = median(floor.sum);
      const rss = Math.max(...runs.map((r) => r.rss as number));
      const sandbox = Math.max(...runs.map((r) => r.sandbox as number));
      rows.push(
        `| ${channel} | ${
          op === "inspect" ? `inspect ${count} × 16 MiB` : "edit 1 × 16 MiB"
        } | ${count * 16} MiB | ${s(extra)} | ${s(sum)} | ${
          s(median(floor.deno))
        } | ${x(extra / sum)} | ${rss.toFixed(0)} MiB | ${
          channel === "worker" ? "—" : `${sandbox.toFixed(0)} MiB`
        } | ${count * 16 * 6 + 150} MiB |`,
      );
    }
    const ratios: string[] = [];
    for (const channel of ["worker", "bubblewrap"]) {
      const one = extras.get(`${channel} 1 inspect`) as number;
      const three = extras.get(`${channel} 3 inspect`) as number;
      ratios.push(
        `${channel}: 3 × 16 MiB costs ${x(three / one)} the time of 1 × 16 MiB`,
      );
    }
    return `${rows.join("\n")}\n\n${ratios.join("; ")}.`;
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
}

/** A test run printing 128 MiB, against the same command to /dev/null. */
async function outputTable(rounds: number): Promise<string> {
  const workspace = await Deno.makeTempDir({ prefix: "loom-bench-" });
  const script = "yes 0123456789abcdef0123456789abcdef | head -c 134217728";
  try {
    const runs = {
      loud: [] as number[],
      quiet: [] as number[],
      direct: [] as number[],
    };
    for (
      const [key, command] of [
        ["loud", ["sh", "-c", script]],
        ["quiet", ["true"]],
      ] as const
    ) {
      const executor = await WorkspaceExecutor.start({
        workspace,
        testCommand: command,
      });
      try {
        for (let round = 0; round < rounds; round++) {
          runs[key].push(await timed(() => executor.runTests()));
        }
      } finally {
        executor.close();
      }
    }
    for (let round = 0; round < rounds; round++) {
      runs.direct.push(
        await timed(() =>
          new Deno.Command("sh", { args: ["-c", script], stdout: "null" })
            .output()
        ),
      );
    }
    const extra = median(runs.loud) - median(runs.quiet);
    return [
      "| test output | `tests.run` extra time | the command alone, to /dev/null | ratio |",
      "|---|---:|---:|---:|",
      `| 128 MiB | ${s(extra)} | ${s(median(runs.direct))} | ${
        x(extra / median(runs.direct))
      } |`,
    ].join("\n");
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
}

if (Deno.args[0] === "inspect") {
  console.log(await inspectTable(Number(Deno.args[1] ?? 3)));
} else if (Deno.args[0] === "output") {
  console.log(await outputTable(Number(Deno.args[1] ?? 3)));
} else if (Deno.args[0] === "case") {
  const [, workspace, channel, count, op] = Deno.args;
  await runCase(
    workspace as string,
    channel as string,
    Number(count),
    op as string,
  );
} else {
  const rounds = Number(Deno.args[0] ?? 3);
  const load = new TextDecoder().decode(
    (await new Deno.Command("uptime").output()).stdout,
  ).trim();
  console.log(`load before: ${load}\n`);
  console.log(await inspectTable(rounds));
  console.log();
  console.log(await outputTable(rounds));
  const after = new TextDecoder().decode(
    (await new Deno.Command("uptime").output()).stdout,
  ).trim();
  console.log(`\nload after: ${after}`);
}
