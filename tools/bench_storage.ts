/**
 * The storage table of docs/performance.md. Two measurements, each in one
 * run against a peer on the same machine:
 *
 * 1. Result put+get throughput through the storage interface on each
 *    back-end against the raw client doing the same work with the same
 *    bytes: the folder back-end against a plain durable file write (open,
 *    write, fsync, close) and read; SQLite against `node:sqlite` doing one
 *    INSERT and one SELECT on the same database settings; PostgreSQL
 *    against the `postgres` client doing one INSERT and one SELECT on the
 *    same server. Target: ≥ 0.8× the peer.
 * 2. Per-step session overhead (time inside one acknowledged step's save:
 *    the body, the journal record) at 150 and 1,200 steps on each
 *    back-end. Target: the 1,200-step figure within 1.2× of the 150-step one.
 *
 * It starts its own PostgreSQL cluster (as tests/storage/_postgres.ts does)
 * and skips that back-end, saying so, where none is installed.
 *
 * ```sh
 * deno run --allow-read --allow-write --allow-run --allow-net=127.0.0.1 --allow-env tools/bench_storage.ts
 * ```
 */
import { DatabaseSync } from "node:sqlite";
import { createHash } from "node:crypto";
import postgres from "postgres";
import { openStorage } from "../lib/storage/open_storage.ts";
import { saveSnapshot, SessionStore } from "../lib/persist/session_store.ts";
import { HAVE_POSTGRES, startCluster } from "../tests/storage/_postgres.ts";
import { EndlessRun } from "../tests/persist/_session.ts";
import { elapsed as timed, median } from "../tests/_kit/measure.ts";

const BODIES = 200;
const BODY_BYTES = 64 * 1024;
const ROUNDS = 3;

function bodies(): { sha256: string; bytes: Uint8Array }[] {
  return Array.from({ length: BODIES }, (_, i) => {
    const bytes = new TextEncoder().encode(
      `${i} ${crypto.randomUUID()}\n`.repeat(BODY_BYTES / 40).slice(
        0,
        BODY_BYTES,
      ),
    );
    return { sha256: createHash("sha256").update(bytes).digest("hex"), bytes };
  });
}

/** Put+get per second through the storage interface. */
async function ours(url: string): Promise<number> {
  const store = await openStorage(url);
  const slot = store.session(`bench-${crypto.randomUUID().slice(0, 8)}`);
  await slot.prepare();
  const set = bodies();
  const ms = await timed(async () => {
    for (const { sha256, bytes } of set) await slot.bodies.put(sha256, bytes);
    for (const { sha256 } of set) await slot.bodies.get(sha256);
  });
  await store.close();
  return BODIES / (ms / 1000);
}

async function rawFile(dir: string): Promise<number> {
  const folder = `${dir}/raw-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(folder, { recursive: true });
  const set = bodies();
  const ms = await timed(async () => {
    for (const { sha256, bytes } of set) {
      using file = await Deno.open(`${folder}/${sha256}.txt`, {
        write: true,
        create: true,
      });
      for (let o = 0; o < bytes.length;) {
        o += await file.write(bytes.subarray(o));
      }
      await file.sync();
    }
    for (const { sha256 } of set) {
      await Deno.readFile(`${folder}/${sha256}.txt`);
    }
  });
  return BODIES / (ms / 1000);
}

function rawSqlite(path: string): number {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA busy_timeout = 10000");
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec(
    "CREATE TABLE IF NOT EXISTS raw (sha256 TEXT PRIMARY KEY, data BLOB)",
  );
  const insert = db.prepare("INSERT INTO raw (sha256, data) VALUES (?, ?)");
  const select = db.prepare("SELECT data FROM raw WHERE sha256 = ?");
  const set = bodies();
  const start = performance.now();
  for (const { sha256, bytes } of set) insert.run(sha256, bytes);
  for (const { sha256 } of set) select.get(sha256);
  const ms = performance.now() - start;
  db.close();
  return BODIES / (ms / 1000);
}

async function rawPostgres(url: string): Promise<number> {
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  await sql`CREATE TABLE IF NOT EXISTS raw_bodies (sha256 text PRIMARY KEY, data bytea)`;
  const set = bodies();
  const ms = await timed(async () => {
    for (const { sha256, bytes } of set) {
      await sql`INSERT INTO raw_bodies (sha256, data) VALUES (${sha256}, ${bytes})`;
    }
    for (const { sha256 } of set) {
      await sql`SELECT data FROM raw_bodies WHERE sha256 = ${sha256}`;
    }
  });
  await sql.end();
  return BODIES / (ms / 1000);
}

/** Mean ms inside one step's save over a run of `steps` steps. */
async function stepCost(
  url: string,
  steps: number,
  workspace: string,
  keyFile: string,
) {
  const name = `steps-${steps}-${crypto.randomUUID().slice(0, 8)}`;
  const store = await SessionStore.create(name, {
    workspace,
    keyFile,
    run: EndlessRun.RUN,
    store: url,
  });
  const run = new EndlessRun();
  let inSave = 0;
  for (let step = 1; step <= steps; step += 1) {
    const snapshot = await run.step(step);
    const start = performance.now();
    await saveSnapshot(store, snapshot);
    inSave += performance.now() - start;
  }
  await store.close();
  return inSave / steps;
}

const base = await Deno.makeTempDir({ prefix: "loom-bench-storage-" });
const workspace = `${base}/ws`;
await Deno.mkdir(workspace);
const keyFile = `${base}/key/session.key`;
const cluster = HAVE_POSTGRES ? await startCluster() : undefined;
if (cluster === undefined) {
  console.log("PostgreSQL is not installed here: its rows are skipped");
}
try {
  const backends: [string, string, () => Promise<number>][] = [
    ["file", `file:${base}/store`, () => rawFile(base)],
    [
      "sqlite",
      `sqlite:${base}/loom.db`,
      () => Promise.resolve(rawSqlite(`${base}/loom.db`)),
    ],
  ];
  if (cluster !== undefined) {
    backends.push(["postgres", cluster.url, () => rawPostgres(cluster.url)]);
  }
  console.log(
    `| back-end | ours put+get/s | raw put+get/s | ratio | save ms/step at 150 | at 1,200 | 1,200 / 150 |`,
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const [kind, url, raw] of backends) {
    const mine: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      theirs.push(await raw());
      mine.push(await ours(url));
    }
    const short = await stepCost(url, 150, workspace, keyFile);
    const long = await stepCost(url, 1_200, workspace, keyFile);
    const [m, r] = [median(mine), median(theirs)];
    console.log(
      `| ${kind} | ${m.toFixed(0)} | ${r.toFixed(0)} | ${
        (m / r).toFixed(2)
      }× | ${short.toFixed(2)} | ${long.toFixed(2)} | ${
        (long / short).toFixed(2)
      }× |`,
    );
  }
} finally {
  await cluster?.stop();
  await Deno.remove(base, { recursive: true });
}
