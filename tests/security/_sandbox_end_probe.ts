// Run with `deno run -A` (reading another process's /proc entries needs all
// permissions): starts bubblewrap sandboxes whose shell leaves detached
// processes behind, ends each with killSandbox — through the reported init,
// or, with `--bubblewrap-only`, by killing bubblewrap itself as Loom once
// did — and counts the sandbox's processes that are still alive (not
// zombies) the moment bubblewrap's end is reported. Prints one JSON line:
// `{"rounds": N, "left": [counts…]}`. Stops early once a round leaves one.
import { ISOLATION_ARGS } from "../../lib/executor/bubblewrap.ts";
import {
  INIT_REPORT_ARGS,
  INIT_REPORT_EXEC,
  killSandbox,
} from "../../lib/executor/sandbox_end.ts";

const bubblewrapOnly = Deno.args.includes("--bubblewrap-only");
const rounds = Number(Deno.args.find((a) => /^\d+$/.test(a)) ?? "20");

/** Processes whose command line holds `mark`, alive and not zombies. */
function alive(mark: string): number {
  let count = 0;
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      if (
        !Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).includes(mark)
      ) {
        continue;
      }
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const state = stat[stat.lastIndexOf(")") + 2];
      if (state !== "Z" && state !== "X") count += 1;
    } catch {
      // Gone meanwhile.
    }
  }
  return count;
}

const folder = await Deno.makeTempDir({ prefix: "loom-sandbox-end-" });
const report = `${folder}/init`;
const left: number[] = [];
for (let round = 0; round < rounds; round += 1) {
  const mark = `${9000 + round}.${Deno.pid}`;
  const script = `for i in 1 2 3 4 5 6 7 8; do
    sleep ${mark}$i </dev/null >/dev/null 2>&1 &
  done; echo ready; sleep ${mark}0`;
  const child = new Deno.Command("/bin/sh", {
    args: [
      "-c",
      INIT_REPORT_EXEC,
      report,
      "bwrap",
      ...ISOLATION_ARGS,
      ...INIT_REPORT_ARGS,
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--",
      "/bin/sh",
      "-c",
      script,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  await reader.read();
  killSandbox(child, bubblewrapOnly ? null : report, false);
  await child.status;
  left.push(alive(mark));
  await reader.cancel();
  if (left.at(-1)! > 0) break;
}
await Deno.remove(folder, { recursive: true });
console.log(JSON.stringify({ rounds: left.length, left }));
