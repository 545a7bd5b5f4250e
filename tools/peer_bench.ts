/**
 * Side script: `render()` and `toMessages()` against the Python peer
 * outfox/loom on its own kind of workload (a parent and 10 visitors, entries
 * spread over five sections). The peer's code is not part of this
 * repository: pass a directory holding its `src/loom` package (or a git
 * directory of its repository, which is exported to a temporary folder).
 * Processes alternate (peer, Loom, peer, …); each warms up with two calls
 * and reports the median of its own repetitions; the ratio is Loom's median
 * over the peer's. Needs `python3` (3.10 or later) and, for a git
 * directory, `git` and `tar`.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env tools/peer_bench.ts PEER_DIR [rounds]
 */
import { join } from "node:path";

const peer = Deno.args[0];
if (peer === undefined) {
  console.error("usage: tools/peer_bench.ts PEER_DIR [rounds]");
  Deno.exit(2);
}
const rounds = Number(Deno.args[1] ?? 3);
const sizes = [1_000, 10_000, 100_000];
const tmp = await Deno.makeTempDir();

async function peerSource(): Promise<string> {
  try {
    await Deno.stat(join(peer!, "src", "loom", "__init__.py"));
    return join(peer!, "src");
  } catch {
    // A git directory: export src/ at HEAD.
    const archive = await new Deno.Command("git", {
      args: [`--git-dir=${peer}`, "archive", "HEAD", "src"],
      stdout: "piped",
    }).output();
    const untar = new Deno.Command("tar", {
      args: ["-x", "-C", tmp],
      stdin: "piped",
    }).spawn();
    const writer = untar.stdin.getWriter();
    await writer.write(archive.stdout);
    await writer.close();
    await untar.status;
    return join(tmp, "src");
  }
}

const PY = `
import sys, time, json
sys.path.insert(0, sys.argv[1])
from loom import Context
n, reps = int(sys.argv[2]), int(sys.argv[3])
root = Context("root")
visitors = [Context(f"visitor-{i}") for i in range(10)]
for v in visitors: root.include(v)
owners = [root] + visitors
names = ["foundation", "focus", "topic", "convo", "attention"]
for i in range(n):
    owner = owners[i % len(owners)]
    getattr(owner, names[i % 5]).add(f"Entry {i}: the quick brown fox jumps over the lazy dog {i * 7919}.")
def med(f):
    f(); f()  # warm up, as the Deno side does
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); f(); ts.append((time.perf_counter() - t) * 1000)
    ts.sort(); return ts[len(ts) // 2]
r = med(lambda: root.render(clear_volatile=False))
m = med(lambda: root.to_messages(clear_volatile=False))
print(json.dumps({"render": r, "messages": m}))
`;

const TS = `
import { Context, IdPool } from ${
  JSON.stringify(new URL("../mod.ts", import.meta.url).href)
};
const [n, reps] = Deno.args.map(Number);
const ids = new IdPool({ length: 4, seed: 1 });
const root = new Context("root", { ids });
const visitors = Array.from({ length: 10 }, (_, i) => new Context(\`visitor-\${i}\`, { ids }));
for (const v of visitors) root.include(v);
const owners = [root, ...visitors];
const names = ["foundation", "focus", "topic", "convo", "attention"] as const;
for (let i = 0; i < n!; i++) {
  owners[i % owners.length]![names[i % 5]!].add(\`Entry \${i}: the quick brown fox jumps over the lazy dog \${i * 7919}.\`);
}
function med(f: () => unknown): number {
  f(); f(); // warm up: the first call builds the section caches and compiles
  const ts: number[] = [];
  for (let k = 0; k < reps!; k++) { const t = performance.now(); f(); ts.push(performance.now() - t); }
  ts.sort((a, b) => a - b); return ts[ts.length >> 1]!;
}
const keep = { clearVolatile: false };
console.log(JSON.stringify({ render: med(() => ctxRender()), messages: med(() => root.toMessages(keep)) }));
function ctxRender() { return root.render(keep); }
`;

const src = await peerSource();
await Deno.writeTextFile(join(tmp, "peer.py"), PY);
await Deno.writeTextFile(join(tmp, "loom.ts"), TS);
const config = new URL("../deno.json", import.meta.url).pathname;

async function run(
  cmd: string,
  args: string[],
): Promise<{ render: number; messages: number }> {
  const out = await new Deno.Command(cmd, {
    args,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (out.code !== 0) throw new Error(`${cmd} ${args.join(" ")} failed`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

const results = new Map<string, number[]>();
const add = (key: string, ms: number) =>
  results.set(key, [...(results.get(key) ?? []), ms]);
for (let round = 0; round < rounds; round++) {
  for (const n of sizes) {
    const reps = String(n >= 100_000 ? 7 : n >= 10_000 ? 30 : 200);
    const py = await run("python3", [
      join(tmp, "peer.py"),
      src,
      String(n),
      reps,
    ]);
    const ts = await run(Deno.execPath(), [
      "run",
      "--config",
      config,
      "--allow-read",
      join(tmp, "loom.ts"),
      String(n),
      reps,
    ]);
    add(`py render ${n}`, py.render);
    add(`py messages ${n}`, py.messages);
    add(`ts render ${n}`, ts.render);
    add(`ts messages ${n}`, ts.messages);
  }
}
await Deno.remove(tmp, { recursive: true });
const median = (key: string) =>
  [...results.get(key)!].sort((a, b) => a - b)[results.get(key)!.length >> 1]!;
console.log(
  `${rounds} alternating rounds (parent + 10 visitors, five sections)`,
);
console.log(
  "| entries | peer render | Loom render | ratio | peer to_messages | Loom toMessages | ratio |",
);
console.log(
  "| ------: | ----------: | ----------: | ----: | ---------------: | --------------: | ----: |",
);
for (const n of sizes) {
  const [pr, tr, pm, tm] = [
    median(`py render ${n}`),
    median(`ts render ${n}`),
    median(`py messages ${n}`),
    median(`ts messages ${n}`),
  ];
  console.log(
    `| ${n.toLocaleString("en-US")} | ${pr.toFixed(2)} ms | ${
      tr.toFixed(2)
    } ms | ${(tr / pr).toFixed(2)}× | ${pm.toFixed(2)} ms | ${
      tm.toFixed(2)
    } ms | ${(tm / pm).toFixed(2)}× |`,
  );
}
