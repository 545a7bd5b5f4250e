// The shape of the package, enforced: the layer order of DESIGN.md, no
// import of another folder's private `_` module, nothing public defined in a
// `_` file, and a reviewed snapshot of every entry point's exported names.
// A new export or a new upward import fails here until it is a visible diff.
import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const ROOT = resolve(dirname(fromFileUrl(import.meta.url)), "..");
const LIB = join(ROOT, "lib");

/** Entry points in deno.json `exports`, each with its file. */
const ENTRY_POINTS: Readonly<Record<string, string>> = JSON.parse(
  await Deno.readTextFile(join(ROOT, "deno.json")),
).exports;

/**
 * DESIGN.md's one-way data flow: context, store → reference, storage → briefing →
 * providers, executor → slice, code → persist, cost → mcp, adapters → cli. A folder may import only
 * folders of a lower rank (and the shared `lib/errors.ts`, `lib/version.ts`).
 */
const RANK: Readonly<Record<string, number>> = {
  "errors.ts": 0,
  "version.ts": 0,
  "fs_reason.ts": 0,
  "root_path.ts": 0,
  "display.ts": 0,
  "copy_tree.ts": 0,
  "plain_object.ts": 0,
  // Span and metric names and the helpers every face calls; imports nothing
  // of Loom's (DESIGN.md), so every folder may use it.
  telemetry: 0,
  "http_guard.ts": 0,
  context: 1,
  store: 1,
  reference: 2,
  // Storage back-ends: bodies, journals, leases; below persist, above errors.
  storage: 2,
  briefing: 3,
  providers: 4,
  executor: 4,
  slice: 5,
  testing: 5,
  // run_code's sandbox, bridge and declarations: store, reference and the
  // executor's sandbox below; mcp and adapters use it.
  code: 5,
  persist: 6,
  // The cost simulator replays slices and prices provider bodies.
  cost: 6,
  // The MCP server: store, reference, executor and persist, never slice.
  mcp: 7,
  // The SDK adapters: store, reference, briefing and persist, never slice or mcp.
  adapters: 7,
  // The read-only viewer: persist, storage, briefing's reports, cost.
  view: 7,
  cli: 8,
};

const MAX_NAMES_PER_ENTRY = 60;
// Issue 10: at most 150 names over all entry points; a new name means a
// smaller face elsewhere, or a reviewed change of this ceiling. Reviewed for
// issues 27–28: the retrieval tools (10 names on `./reference`) and three
// SDK adapter entry points, each for its own audience, raise it to 200;
// issue 29 adds 3 (StorageError, SessionListOptions, ResultBacking).
const MAX_NAMES_IN_ALL = 200;

async function* tsFiles(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* tsFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

/** Relative imports and re-exports of a file, resolved to absolute paths. */
async function importsOf(file: string): Promise<string[]> {
  const text = await Deno.readTextFile(file);
  const found = text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g);
  return [...found].map((m) => resolve(dirname(file), m[1] ?? ""));
}

/** The top-level part of `lib/` a path belongs to: a folder or a root file. */
function part(path: string): string {
  return relative(LIB, path).split("/")[0] ?? "";
}

const isPrivate = (path: string): boolean =>
  (path.split("/").pop() ?? "").startsWith("_");

/** Lower rooms a room must not import all the same (DESIGN.md's "never"). */
const NEVER: Readonly<Record<string, readonly string[]>> = {
  mcp: ["slice"],
  adapters: ["slice"],
};

/** The rooms (folders) of lib/ a room may import: lower ranks, less NEVER. */
function mayImport(room: string): string[] {
  return Object.keys(RANK).filter((other) =>
    !other.endsWith(".ts") && RANK[other]! < RANK[room]! &&
    !(NEVER[room] ?? []).includes(other)
  ).sort();
}

Deno.test("lib/ imports follow the layer order of DESIGN.md", async () => {
  const upward: string[] = [];
  for await (const file of tsFiles(LIB)) {
    const from = part(file);
    for (const target of await importsOf(file)) {
      const to = part(target);
      if (to === from) continue;
      const [a, b] = [RANK[from], RANK[to]];
      assert.ok(a !== undefined && b !== undefined, `${file} -> ${target}`);
      if (b >= a || (NEVER[from] ?? []).includes(to)) {
        upward.push(`${relative(ROOT, file)} -> ${to}`);
      }
    }
  }
  assert.deepEqual(upward, []);
});

Deno.test("docs/architecture.md names every room of lib/, its layer and what it may import, as this test enforces", async () => {
  const text = await Deno.readTextFile(join(ROOT, "docs", "architecture.md"));
  const rows = text.split("\n").filter((line) => /^\| \d+ /.test(line))
    .map((line) => line.split("|").slice(1, -1).map((cell) => cell.trim()));
  const names = (cell: string) =>
    [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, ""));
  const documented: Record<string, { layer: number; may: string[] }> = {};
  for (const [layer, room, job, may] of rows) {
    const [allowed, never = ""] = (may ?? "").split(" never ");
    const rooms = room === "the root files"
      ? names(job ?? "").filter((name) => name.endsWith(".ts"))
      : names(room ?? "");
    for (const name of rooms) {
      documented[name] = {
        layer: Number(layer),
        may: allowed === "every room above"
          ? Object.keys(RANK).filter((other) =>
            !other.endsWith(".ts") && RANK[other]! < Number(layer)
          ).sort()
          : names(allowed ?? "").sort(),
      };
      assert.deepEqual(names(never).sort(), [...(NEVER[name] ?? [])].sort());
    }
  }
  const rooms: string[] = [];
  for await (const entry of Deno.readDir(LIB)) rooms.push(entry.name);
  assert.deepEqual(
    Object.keys(documented).sort(),
    [...new Set([...rooms, ...Object.keys(RANK)])].sort(),
    "every room of lib/ (and every root file) has its row",
  );
  for (const [room, { layer, may }] of Object.entries(documented)) {
    assert.equal(layer, RANK[room], `${room}'s layer`);
    if (!room.endsWith(".ts")) {
      assert.deepEqual(may, mayImport(room), `what ${room} may import`);
    }
  }
});

/** The strongly connected groups of more than one module (Tarjan). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    order.set(v, order.size);
    low.set(v, order.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, order.get(w)!));
      }
    }
    if (low.get(v) !== order.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) found.push(group.sort());
  };
  for (const v of graph.keys()) if (!order.has(v)) visit(v);
  return found;
}

Deno.test("lib/ has no import circle", async () => {
  const graph = new Map<string, string[]>();
  for await (const file of tsFiles(LIB)) {
    // A module naming itself in a doc example is no circle.
    const targets = (await importsOf(file)).filter((target) =>
      target !== file && target.startsWith(`${LIB}/`)
    );
    graph.set(relative(ROOT, file), targets.map((t) => relative(ROOT, t)));
  }
  assert.deepEqual(circles(graph), []);
});

/** Past this many lines a file of lib/ must say why it is one job. */
const MAX_FILE_LINES = 600;

Deno.test(`no file of lib/ passes ${MAX_FILE_LINES} lines unless its first comment says why it is one job`, async () => {
  const unexplained: string[] = [];
  for await (const file of tsFiles(LIB)) {
    const text = await Deno.readTextFile(file);
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    if (lines <= MAX_FILE_LINES) continue;
    const header = /^\s*\/\*\*([\s\S]*?)\*\//.exec(text)?.[1] ?? "";
    if (!/\bone job\b/.test(header.replace(/\s*\*\s*/g, " "))) {
      unexplained.push(`${relative(ROOT, file)} (${lines} lines)`);
    }
  }
  assert.deepEqual(unexplained, []);
});

/** Each SDK, and the one file of lib/ that may import it. */
const SDK_OWNERS: readonly [RegExp, string][] = [
  [/^(ai|@ai-sdk\/[a-z-]+)(\/|$)/, "lib/adapters/ai_sdk.ts"],
  [/^@openai\/agents(\/|$)/, "lib/adapters/openai.ts"],
];

Deno.test("each agent SDK is imported only by its own adapter, and only its own entry point loads that adapter", async () => {
  const wrong: string[] = [];
  for await (const file of tsFiles(LIB)) {
    const text = await Deno.readTextFile(file);
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"([^".][^"]*)"/g)) {
      for (const [pattern, owner] of SDK_OWNERS) {
        if (pattern.test(m[1] ?? "") && relative(ROOT, file) !== owner) {
          wrong.push(`${relative(ROOT, file)} -> ${m[1]}`);
        }
      }
    }
  }
  for (const [entry, file] of Object.entries(ENTRY_POINTS)) {
    for (const target of await importsOf(join(ROOT, file))) {
      const adapter = relative(ROOT, target);
      if (!adapter.startsWith("lib/adapters/")) continue;
      const own = {
        "./ai-sdk": "ai_sdk",
        "./anthropic": "anthropic",
        "./openai": "openai",
      }[entry];
      // The SDK-free modules of lib/adapters (the session store) are shared.
      const sdkAdapter = SDK_OWNERS.some(([, owner]) => owner === adapter);
      if (sdkAdapter && adapter !== `lib/adapters/${own}.ts`) {
        wrong.push(`${entry} -> ${adapter}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("no file imports another folder's private _ module", async () => {
  const crossing: string[] = [];
  const roots = Object.values(ENTRY_POINTS).map((f) => join(ROOT, f));
  const files = [...roots];
  for await (const file of tsFiles(LIB)) files.push(file);
  for (const file of files) {
    for (const target of await importsOf(file)) {
      if (isPrivate(target) && dirname(target) !== dirname(file)) {
        crossing.push(`${relative(ROOT, file)} -> ${relative(ROOT, target)}`);
      }
    }
  }
  assert.deepEqual(crossing, []);
});

interface DocSymbol {
  readonly name: string;
  readonly declarations: readonly {
    readonly location: { filename: string };
    readonly kind: string;
    readonly def?: { readonly extends?: string };
  }[];
}

async function docSymbols(): Promise<Record<string, DocSymbol[]>> {
  const files = Object.values(ENTRY_POINTS);
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", ...files],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
  const doc = JSON.parse(new TextDecoder().decode(run.stdout)) as {
    nodes: Record<string, { symbols: DocSymbol[] }>;
  };
  const byEntry: Record<string, DocSymbol[]> = {};
  for (const [entry, file] of Object.entries(ENTRY_POINTS)) {
    const url = new URL(file, `file://${ROOT}/`).href;
    byEntry[entry] = doc.nodes[url]?.symbols ?? [];
  }
  return byEntry;
}

const symbols = await docSymbols();

Deno.test("no exported name is defined in a private _ file", () => {
  const leaked = Object.values(symbols).flat().flatMap((s) =>
    s.declarations
      .filter((d) => isPrivate(fromFileUrl(d.location.filename)))
      .map((d) =>
        `${s.name} (${relative(ROOT, fromFileUrl(d.location.filename))})`
      )
  );
  assert.deepEqual(leaked, []);
});

Deno.test("every exported error class is named …Error and branded", async () => {
  const { isLoomError } = await import("../mod.ts");
  for (const [entry, list] of Object.entries(symbols)) {
    const module = await import(join(ROOT, ENTRY_POINTS[entry] ?? ""));
    for (const s of list) {
      const base = s.declarations[0]?.def?.extends ?? "";
      if (s.declarations[0]?.kind !== "class" || !/Error$/.test(base)) continue;
      assert.match(s.name, /Error$/, `${entry} exports ${s.name}`);
      const ErrorClass = module[s.name] as new (
        code: string,
        message: string,
        options: Record<string, unknown>,
      ) => Error;
      const made = new ErrorClass("usage", "Made by the test", {});
      assert.equal(isLoomError(made), true, `${s.name} carries no brand`);
      assert.equal(made.name, s.name);
    }
  }
});

Deno.test(`each entry point exports at most ${MAX_NAMES_PER_ENTRY} names`, () => {
  for (const [entry, list] of Object.entries(symbols)) {
    assert.ok(
      list.length <= MAX_NAMES_PER_ENTRY,
      `${entry} exports ${list.length} names`,
    );
  }
});

Deno.test(`all entry points together export at most ${MAX_NAMES_IN_ALL} names`, () => {
  const total = Object.values(symbols).reduce((n, list) => n + list.length, 0);
  assert.ok(total <= MAX_NAMES_IN_ALL, `${total} names`);
});

Deno.test("the exported names of every entry point match the reviewed snapshot", async () => {
  const snapshotFile = join(ROOT, "tests", "public_api.json");
  const actual = Object.fromEntries(
    Object.entries(symbols).map((
      [entry, list],
    ) => [entry, [...new Set(list.map((s) => s.name))].sort()]),
  );
  if (Deno.env.get("UPDATE_PUBLIC_API") === "1") {
    await Deno.writeTextFile(
      snapshotFile,
      `${JSON.stringify(actual, null, 2)}\n`,
    );
  }
  const expected = JSON.parse(await Deno.readTextFile(snapshotFile));
  assert.deepEqual(
    actual,
    expected,
    "An entry point's exports changed: review the diff, then run the test with UPDATE_PUBLIC_API=1",
  );
});
