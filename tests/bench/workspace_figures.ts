/**
 * docs/performance.md's workspace table: what a repository-sized workspace
 * costs where users meet it — `loom run` as a subprocess, the real CLI, a
 * recorded model — against the same run on a one-file workspace, with
 * `sha256sum` of every file of the same workspace as the floor, all in one
 * run.
 *
 * Workspaces: `check.ts` plus small files (about 400 bytes each, 100 to a
 * folder: 20,000 files are 200 folders, the shape of a small
 * `node_modules`), aged past the racy window (a repository's files are
 * older than the run). Runs, each a fresh `loom run` (start-up included):
 *
 * - start, then `slice.complete` (no test command): fixtures/recordings/workspace_start.json
 * - one `tests.run`, then `slice.complete`: workspace_one_test.json
 * - three `tests.run`, then `slice.complete`: workspace_three_tests.json
 *
 * The test command is `deno run check.ts` (this Deno), confined by
 * bubblewrap when `bwrap` works here and by Deno's flags with
 * `--sandbox deno` (`LOOM_BWRAP=""`, the executor's worker then runs in
 * process too). Rounds are interleaved so load on the machine hits every
 * row alike. Each figure is the fastest of the rounds (`--stat median` for
 * the median): on a machine shared with other work, load only ever adds
 * time, and the fastest round is the one it disturbed least.
 *
 *   deno run --allow-all tests/bench/workspace_figures.ts [--rounds 3] [--sizes 1,20000,100000] [--sandbox bwrap|deno|both] [--stat min|median]
 */
import { parseArgs } from "node:util";
import { elapsed as timed, median } from "../_kit/measure.ts";
import { loomArgs } from "../_kit/repo.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FILE_BYTES = 400;
const PER_FOLDER = 100;

const RUNS = [
  { key: "start", label: "start, then `slice.complete` (no test)" },
  { key: "one_test", label: "one `tests.run`" },
  { key: "three_tests", label: "three `tests.run`" },
] as const;
type RunKey = typeof RUNS[number]["key"];

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "3" },
    sizes: { type: "string", default: "1,20000,100000" },
    sandbox: { type: "string", default: "bwrap" },
    keep: { type: "boolean", default: false },
    stat: { type: "string", default: "min" },
    base: { type: "string" },
  },
});
const rounds = Number(values.rounds);
const stat = values.stat;
/** This checkout, and with `--base DIR` another one (say, main) in the same rounds. */
const versions = [
  { name: "", root: ROOT },
  ...(values.base === undefined ? [] : [{
    name: `before (${values.base})`,
    root: `${values.base.replace(/\/$/, "")}/`,
  }]),
];
if (stat !== "min" && stat !== "median") {
  throw new Error("--stat is min or median");
}
const sizes = values.sizes.split(",").map(Number);
const modes = values.sandbox === "both" ? ["bwrap", "deno"] : [values.sandbox];
if (sizes[0] !== 1 || sizes.some((n) => !Number.isInteger(n) || n < 1)) {
  throw new Error("--sizes starts with 1 and lists file counts");
}

/** About 400 bytes of text, different for every file. */
function textOf(seed: number): string {
  const line =
    `export const v${seed} = "the quick brown fox jumps over the lazy dog";\n`;
  return line.repeat(Math.ceil(FILE_BYTES / line.length)).slice(0, FILE_BYTES);
}

/** `check.ts` plus `files - 1` small files, 100 to a folder. */
async function workspaceOf(parent: string, files: number): Promise<string> {
  const workspace = `${parent}/ws-${files}`;
  await Deno.mkdir(workspace);
  await Deno.writeTextFile(
    `${workspace}/check.ts`,
    'console.log("checked");\n',
  );
  for (let i = 0; i < files - 1; i++) {
    const dir = `${workspace}/pkg-${
      String(Math.floor(i / PER_FOLDER)).padStart(4, "0")
    }`;
    if (i % PER_FOLDER === 0) await Deno.mkdir(dir);
    await Deno.writeTextFile(`${dir}/file-${i % PER_FOLDER}.js`, textOf(i));
  }
  return workspace;
}

/** One `loom run` through the CLI; fails unless the slice completed. */
async function loomRun(
  root: string,
  workspace: string,
  run: RunKey,
  mode: string,
): Promise<number> {
  const args = loomArgs([
    "run",
    "--workspace",
    workspace,
    "--intent",
    "Check the workspace",
    "--model",
    `recorded:${ROOT}fixtures/recordings/workspace_${run}.json`,
    "--json",
  ], { cli: `${root}cli.ts` });
  if (run !== "start") args.push("--test", `${Deno.execPath()} run check.ts`);
  const env: Record<string, string> = mode === "deno" ? { LOOM_BWRAP: "" } : {};
  let output: Deno.CommandOutput | undefined;
  const ms = await timed(async () => {
    output = await new Deno.Command(Deno.execPath(), {
      args,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  });
  const out = output as Deno.CommandOutput;
  const text = new TextDecoder().decode(out.stdout);
  const confinedBy = /"test_confinement": "([a-z]+)"/.exec(text)?.[1];
  const expected = mode === "deno" ? "deno" : "bubblewrap";
  if (
    out.code !== 0 || !text.includes('"stop": "completed"') ||
    (run !== "start" && confinedBy !== expected)
  ) {
    throw new Error(
      `loom run (${run}, ${mode}) exited ${out.code}: ${
        new TextDecoder().decode(out.stderr)
      }${text.slice(0, 2000)}`,
    );
  }
  return ms;
}

/** `sha256sum` of every file of the workspace, found by `find`. */
async function sha256sum(workspace: string): Promise<number> {
  return await timed(async () => {
    const { success } = await new Deno.Command("sh", {
      args: [
        "-c",
        `find "$1" -type f -print0 | xargs -0 sha256sum >/dev/null`,
        "sh",
        workspace,
      ],
    }).output();
    if (!success) throw new Error("sha256sum failed");
  });
}

/** The figure of a cell: its fastest round, or its median round. */
function figure(values: readonly number[]): number {
  return values.length > 0 && stat === "min"
    ? Math.min(...values)
    : median(values);
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const x = (ratio: number) => `${ratio.toFixed(1)}×`;
const n = (count: number) => count.toLocaleString("en-US");

async function uptime(): Promise<string> {
  const { stdout } = await new Deno.Command("uptime").output();
  return new TextDecoder().decode(stdout).trim();
}

const parent = await Deno.makeTempDir({ prefix: "loom-workspace-figures-" });
try {
  console.log(`load before: ${await uptime()}`);
  const workspaces = new Map<number, string>();
  for (const size of sizes) {
    workspaces.set(size, await workspaceOf(parent, size));
  }
  // Past the racy window: files changed in the last two seconds are
  // hashed again on every survey; a repository's are older.
  await new Promise((done) => setTimeout(done, 2_500));

  const times = new Map<string, number[]>();
  const add = (key: string, ms: number) =>
    times.set(key, [...(times.get(key) ?? []), ms]);
  // One unmeasured pass: Deno's module cache, the page cache.
  for (const { root } of versions) {
    for (const mode of modes) {
      for (const size of sizes) {
        await loomRun(root, workspaces.get(size) as string, "start", mode);
      }
    }
  }
  for (let round = 0; round < rounds; round++) {
    for (const size of sizes) {
      const workspace = workspaces.get(size) as string;
      add(`sum ${size}`, await sha256sum(workspace));
      for (const { name, root } of versions) {
        for (const mode of modes) {
          for (const { key } of RUNS) {
            add(
              `${name}${mode} ${key} ${size}`,
              await loomRun(root, workspace, key, mode),
            );
          }
        }
      }
    }
    console.error(`round ${round + 1}/${rounds} done`);
  }

  const sum = (size: number) => figure(times.get(`sum ${size}`) ?? []);
  const big = sizes.slice(1);
  console.log(
    `\n${rounds} rounds, each figure the ${
      stat === "min" ? "fastest" : "median"
    } round. \`sha256sum\` of every file: ${
      big.map((size) => `${n(size)} files ${s(sum(size))}`).join(", ")
    }\n`,
  );
  for (const { name } of versions) {
    for (const mode of modes) {
      const header = [
        "run",
        "one file",
        ...big.flatMap((size) => [
          `${n(size)} files`,
          "extra",
          "extra / `sha256sum`",
        ]),
      ];
      const rows = [
        `${name === "" ? "" : `${name}, `}${
          mode === "deno"
            ? "without bubblewrap (Deno confines the test)"
            : "bubblewrap"
        }:`,
        "",
        `| ${header.join(" | ")} |`,
        `|---|${header.slice(1).map(() => "---:").join("|")}|`,
      ];
      const verdicts: string[] = [];
      const extra = (key: RunKey, size: number) =>
        figure(times.get(`${name}${mode} ${key} ${size}`) ?? []) -
        figure(times.get(`${name}${mode} ${key} 1`) ?? []);
      for (const { key, label } of RUNS) {
        const cells = [
          label,
          s(figure(times.get(`${name}${mode} ${key} 1`) ?? [])),
        ];
        for (const size of big) {
          cells.push(
            s(figure(times.get(`${name}${mode} ${key} ${size}`) ?? [])),
            s(extra(key, size)),
            x(extra(key, size) / sum(size)),
          );
        }
        rows.push(`| ${cells.join(" | ")} |`);
      }
      const first = big[0];
      if (first !== undefined) {
        const start = extra("start", first);
        verdicts.push(
          `start-up on ${n(first)} files: ${
            s(start)
          } more than one file, limit 2 × \`sha256sum\` = ${
            s(2 * sum(first))
          }: ${start <= 2 * sum(first) ? "met" : "MISSED"}`,
        );
        // Each further test run adds one survey after it; the run with one
        // test surveys once at start, once after the run, once at the end.
        const perRun = (size: number) =>
          (extra("three_tests", size) - extra("one_test", size)) / 2;
        const atStart = (size: number) =>
          extra("one_test", size) - 2 * perRun(size);
        verdicts.push(
          `the first survey on ${
            n(first)
          } files (start-up of a run with a test command, from the \`tests.run\` rows): ${
            s(atStart(first))
          }, against 2 × \`sha256sum\` = ${s(2 * sum(first))}: ${
            atStart(first) <= 2 * sum(first) ? "within" : "above"
          }`,
        );
        const three = extra("three_tests", first);
        const limit = 1500 + 2 * sum(first);
        verdicts.push(
          `three test runs on ${n(first)} files: ${
            s(three)
          } more, limit 1.5 s + 2 × \`sha256sum\` = ${s(limit)}: ${
            three <= limit ? "met" : "MISSED"
          }`,
        );
        for (const size of big) {
          const per10k = 10_000 / (size - 1);
          verdicts.push(
            `per 10,000 files on ${n(size)}: the first survey ${
              s(atStart(size) * per10k)
            }, a survey per test run ${
              s(perRun(size) * per10k)
            }, \`sha256sum\` ${s(sum(size) * per10k)}`,
          );
        }
        for (const size of big.slice(1)) {
          const files = (size - 1) / (first - 1);
          for (const { key, label } of RUNS) {
            const growth = extra(key, size) / extra(key, first);
            verdicts.push(
              `${label}: the extra on ${n(size)} files is ${
                x(growth)
              } the extra on ${n(first)} (files ${x(files)}, \`sha256sum\` ${
                x(sum(size) / sum(first))
              }): ${
                extra(key, size) <= 0.1 * sum(size)
                  ? "no extra beyond noise (under a tenth of `sha256sum`)"
                  : growth <= files
                  ? "linear or better"
                  : "FASTER THAN LINEAR"
              }`,
            );
          }
        }
      }
      console.log(
        [...rows, "", ...verdicts.map((v) => `- ${v}`), ""].join("\n"),
      );
    }
  }
  console.log(`load after: ${await uptime()}`);
} finally {
  if (values.keep) console.error(`kept ${parent}`);
  else await Deno.remove(parent, { recursive: true });
}
