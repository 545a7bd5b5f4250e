/**
 * The team gateway under load (issue 36): `loom mcp --http` instances on
 * one store and one session, 64 clients of the official SDK over
 * Streamable HTTP, 10,000 calls through a real upstream
 * (`server-filesystem` reading files of the three sizes: 70% small, 25%
 * about 100 KB, 5% about 5 MB), each stored result read back by its client
 * through the other instance (a one-line selection, digest-checked). It
 * reports calls per second, p50 and p99 per answer class, the journal's
 * appends, conflicts and retries, errors, and each instance's peak
 * memory; with `--suite`, the table of docs/performance.md: PostgreSQL
 * with two instances and one, SQLite and folders the same, a session that
 * already holds 100 results against one holding 10,000, and the faults at
 * full size (an instance SIGKILLed after a third of the calls, PostgreSQL
 * restarted after two thirds). Not a test: it prints tables and JSON.
 *
 * ```sh
 * deno run --allow-read --allow-write --allow-run --allow-net=127.0.0.1 --allow-env tools/team_gateway_bench.ts --suite
 * deno run … tools/team_gateway_bench.ts --store postgres --instances 2 --calls 10000 --clients 64
 * ```
 *
 * The upstream's files are a pool (64 small, 200 of 100 KB, 20 of 5 MB): a
 * body read twice is stored once (bodies are by digest) and catalogued
 * under each call's own id, as it would be in use.
 */
import { parseArgs } from "node:util";
import {
  connectHttp,
  denoEntry,
  type Descriptor,
  descriptorOf,
  FILESYSTEM,
  type HttpServer,
  type McpConnection,
  serversFile,
  startHttp,
  tokenFile,
} from "../tests/_kit/mcp.ts";
import { memoryOf, percentile } from "../tests/_kit/measure.ts";
import {
  type Cluster,
  HAVE_POSTGRES,
  startCluster,
} from "../tests/storage/_postgres.ts";
import { McpSession } from "../lib/persist/mcp_session.ts";
import { sha256Hex } from "../lib/store/digest.ts";

type Kind = "small" | "medium" | "large";
type StoreKind = "postgres" | "sqlite" | "file";
type Fault = "none" | "kill" | "restart";

/** One run's set-up. */
interface RunOptions {
  readonly store: StoreKind;
  readonly instances: 1 | 2;
  readonly clients: number;
  readonly calls: number;
  readonly prefill: number;
  readonly fault: Fault;
  /**
   * Calls per second in all, arriving at random (open loop): latency at a
   * team's load. Absent: each client calls again as soon as it has its
   * answer (closed loop): the most calls per second.
   */
  readonly rate?: number;
  /** After this closed-loop run, the same paced at half its calls per second. */
  readonly thenPaced?: boolean;
}

/** What one run measured. */
interface RunFigures {
  readonly options: RunOptions;
  readonly seconds: number;
  readonly callsPerSecond: number;
  readonly latency: Record<Kind | "readback", { p50: number; p99: number }>;
  readonly errors: number;
  readonly retries: number;
  readonly lost: number;
  readonly journal: { results: number; appends: number; conflicts: number };
  readonly peakMb: number[];
  /** The instances' CPU time (user + system) per call, ms. */
  readonly cpuMsPerCall: number;
}

const encoder = new TextEncoder();
/** The answer classes' shares of the calls, in percent (`--mix S,M,L`). */
let MIX: readonly [Kind, number][] = [["small", 70], ["medium", 25], [
  "large",
  5,
]];
const POOL: Record<Kind, { count: number; bytes: number }> = {
  small: { count: 64, bytes: 300 },
  medium: { count: 200, bytes: 100_000 },
  large: { count: 20, bytes: 5_000_000 },
};

/** The upstream's files: distinct lines, so every file has its own digest. */
async function writeFiles(root: string): Promise<void> {
  for (const [kind, { count, bytes }] of Object.entries(POOL)) {
    for (let i = 0; i < count; i += 1) {
      const line = `${kind} ${i} ${"x".repeat(40)}\n`;
      await Deno.writeTextFile(
        `${root}/${kind}-${i}.txt`,
        line.repeat(Math.max(1, Math.ceil(bytes / line.length))),
      );
    }
  }
}

/** The calls in a fixed, shuffled order (70/25/5). */
function schedule(calls: number): Kind[] {
  const out: Kind[] = [];
  for (const [kind, share] of MIX) {
    for (let i = 0; i < Math.round(calls * share / 100); i += 1) out.push(kind);
  }
  let seed = 7;
  for (let i = out.length - 1; i > 0; i -= 1) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out.slice(0, calls);
}

/**
 * When each call is due, ms after the start, at `rate` calls per second
 * with exponential gaps (seeded); none for a closed loop.
 */
function arrivals(calls: number, rate: number | undefined): number[] {
  if (rate === undefined) return [];
  const out: number[] = [];
  let seed = 11;
  let at = 0;
  for (let i = 0; i < calls; i += 1) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    at += -Math.log(1 - seed / 2_147_483_648) * 1000 / rate;
    out.push(at);
  }
  return out;
}

const TICKS = Number(
  new TextDecoder().decode(
    new Deno.Command("getconf", { args: ["CLK_TCK"] }).outputSync().stdout,
  ).trim(),
) || 100;

/**
 * A process's CPU time so far (user + system), ms, from `/proc/PID/stat`
 * (read by `cat`: Deno reads /proc only with --allow-all); 0 once it is gone.
 */
function cpuMs(pid: number): number {
  const out = new Deno.Command("cat", {
    args: [`/proc/${pid}/stat`],
    stderr: "null",
  }).outputSync();
  const stat = new TextDecoder().decode(out.stdout);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * 1000 / TICKS;
}

/** Whether a failed call may be tried again: the store or the instance was lost. */
function retryable(error: unknown, text: string): boolean {
  return error !== undefined || /^storage_unavailable: /.test(text);
}

/** Stores `count` small results in the session before the run. */
async function prefill(
  count: number,
  name: string,
  store: string,
  root: string,
): Promise<void> {
  if (count === 0) return;
  const session = await McpSession.open(name, {
    root,
    store,
    shared: true,
    bodies: "read",
  });
  try {
    for (let done = 0; done < count;) {
      const batch = Math.min(256, count - done);
      await Promise.all(Array.from({ length: batch }, (_, i) => {
        const bytes = encoder.encode(`prefilled ${done + i}\n`.repeat(4));
        return session.admit(
          {
            bytes,
            sha256: sha256Hex(bytes),
            origin: "fs/read_text_file content[0]",
            capture: "complete",
          },
          { stamped: true },
        );
      }));
      done += batch;
    }
  } finally {
    await session.close();
  }
}

/** One run (see the module doc). */
async function run(
  options: RunOptions,
  cluster: Cluster | undefined,
): Promise<RunFigures> {
  const dir = await Deno.makeTempDir({ prefix: "loom-team-bench-" });
  const files = `${dir}/files`;
  await Deno.mkdir(files);
  await writeFiles(files);
  const servers = await serversFile(dir, {
    fs: { ...denoEntry(FILESYSTEM, [files]), persist: true },
  });
  const { path, token } = await tokenFile(dir);
  const session = `bench-${crypto.randomUUID().slice(0, 8)}`;
  const store = options.store === "postgres"
    ? cluster!.url
    : options.store === "sqlite"
    ? `sqlite:${dir}/loom.db`
    : `file:${dir}/store`;
  await prefill(options.prefill, session, store, await Deno.realPath(servers));
  const instances: HttpServer[] = await Promise.all(
    Array.from({ length: options.instances }, () =>
      startHttp(
        ["--servers", servers, "--store", store, "--session", session],
        ["--token-file", path],
      )),
  );
  const alive = instances.map(() => true);
  const connect = (i: number) =>
    connectHttp(instances[i]!.url, token, { timeoutMs: 60_000 });
  const clients: { own: McpConnection; other: McpConnection; at: number }[] =
    [];
  for (let c = 0; c < options.clients; c += 1) {
    const at = c % options.instances;
    clients.push({
      own: await connect(at),
      other: await connect((at + 1) % options.instances),
      at,
    });
  }
  const calls = schedule(options.calls);
  const latency: Record<Kind | "readback", number[]> = {
    small: [],
    medium: [],
    large: [],
    readback: [],
  };
  let next = 0;
  let done = 0;
  let errors = 0;
  let retries = 0;
  let lost = 0;
  let faulted = false;
  const fault = async () => {
    if (faulted) return;
    faulted = true;
    if (options.fault === "kill" && instances.length > 1) {
      alive[0] = false;
      Deno.kill(instances[0]!.pid, "SIGKILL");
    } else if (options.fault === "restart" && cluster !== undefined) {
      await cluster.stopServer();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await cluster.startServer();
    }
  };
  const faultAt = options.fault === "kill"
    ? Math.floor(options.calls / 3)
    : Math.floor(options.calls * 2 / 3);
  /** One call, tried again (on the survivor) while the fault lasts. */
  const attempt = async (
    client: (typeof clients)[number],
    name: string,
    args: Record<string, unknown>,
    reader: boolean,
  ) => {
    for (let tries = 0;; tries += 1) {
      const to = reader ? client.other : client.own;
      let answer;
      let error: unknown;
      try {
        answer = await to.call(name, args);
        if (answer.isError !== true) return answer;
      } catch (e) {
        error = e;
      }
      const text = String(answer?.content?.[0]?.text ?? error);
      if (!retryable(error, text) || tries > 120) {
        throw new Error(`${name}: ${text.slice(0, 300)}`);
      }
      retries += 1;
      // The instance is gone: go on through a live one.
      const live = alive.findIndex((a) => a);
      if (!alive[client.at]) {
        client.own = await connect(live);
        client.at = live;
      }
      if (reader || !alive[(client.at + 1) % instances.length]) {
        client.other = await connect(live);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  const due = arrivals(options.calls, options.rate);
  const cpuBefore = instances.map((instance) => cpuMs(instance.pid));
  const started = performance.now();
  await Promise.all(clients.map(async (client) => {
    for (;;) {
      const index = next++;
      const kind = calls[index];
      if (kind === undefined) return;
      if (index === faultAt && options.fault !== "none") void fault();
      const file = index % POOL[kind].count;
      // Paced: a call waits for its time, and its latency counts from then.
      const at = started + (due[index] ?? 0);
      const wait = at - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const t0 = due.length > 0 ? at : performance.now();
      let answer;
      try {
        answer = await attempt(client, "fs__read_text_file", {
          path: `${files}/${kind}-${file}.txt`,
        }, false);
      } catch (error) {
        errors += 1;
        console.error(String(error).slice(0, 300));
        continue;
      }
      latency[kind].push(performance.now() - t0);
      done += 1;
      if (kind === "small") continue;
      let descriptor: Descriptor;
      try {
        descriptor = descriptorOf(answer);
      } catch {
        // Stored nowhere a client can read it: say what came instead.
        lost += 1;
        console.error(`no descriptor: ${JSON.stringify(answer).slice(0, 600)}`);
        continue;
      }
      const t1 = performance.now();
      try {
        const read = await attempt(client, "read_result", {
          reference: {
            ...descriptor.reference,
            select: { kind: "lines", start: 1, end: 1 },
          },
        }, true);
        if (!String(read.structuredContent?.selected_text).startsWith(kind)) {
          lost += 1;
        }
      } catch (error) {
        lost += 1;
        console.error(String(error).slice(0, 300));
      }
      latency.readback.push(performance.now() - t1);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const peakMb = instances.map((instance, i) =>
    alive[i] ? memoryOf(instance.pid).hwm / 1024 / 1024 : NaN
  );
  const cpu = instances.reduce(
    (sum, instance, i) =>
      alive[i] ? sum + cpuMs(instance.pid) - cpuBefore[i]! : sum,
    0,
  );
  for (const client of clients) {
    await client.own.close().catch(() => {});
    await client.other.close().catch(() => {});
  }
  const journal = { results: 0, appends: 0, conflicts: 0 };
  for (const instance of instances) {
    await instance.stop();
    const m = /(\d+) results recorded in (\d+) appends, (\d+) journal conflicts/
      .exec(
        instance.stderr(),
      );
    if (m !== null) {
      journal.results += Number(m[1]);
      journal.appends += Number(m[2]);
      journal.conflicts += Number(m[3]);
    }
  }
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  const stat = (values: number[]) => ({
    p50: percentile(values, 0.5),
    p99: percentile(values, 0.99),
  });
  return {
    options,
    seconds,
    callsPerSecond: done / seconds,
    latency: {
      small: stat(latency.small),
      medium: stat(latency.medium),
      large: stat(latency.large),
      readback: stat(latency.readback),
    },
    errors,
    retries,
    lost,
    journal,
    peakMb,
    cpuMsPerCall: cpu / Math.max(1, done),
  };
}

function row(f: RunFigures): string {
  const o = f.options;
  const ms = (v: number) => Number.isNaN(v) ? "—" : v.toFixed(0);
  const l = f.latency;
  return `| ${o.store} | ${o.instances} | ${
    o.prefill.toLocaleString("en")
  } | ${o.fault} | ${
    o.rate === undefined ? "closed loop" : `${o.rate.toFixed(0)}/s`
  } | ${o.calls.toLocaleString("en")} | ${f.callsPerSecond.toFixed(1)} | ${
    ms(l.small.p50)
  } / ${ms(l.small.p99)} | ${ms(l.medium.p50)} / ${ms(l.medium.p99)} | ${
    ms(l.large.p50)
  } / ${ms(l.large.p99)} | ${ms(l.readback.p50)} / ${
    ms(l.readback.p99)
  } | ${f.journal.appends} / ${f.journal.results} | ${f.journal.conflicts} | ${f.retries} | ${
    f.errors + f.lost
  } | ${
    f.peakMb.map((m) => Number.isNaN(m) ? "killed" : m.toFixed(0)).join(", ")
  } | ${f.cpuMsPerCall.toFixed(1)} |`;
}

const HEADER =
  "| store | instances | results before | fault | pace | calls | calls/s | small p50 / p99 ms | 100 KB p50 / p99 ms | 5 MB p50 / p99 ms | read-back p50 / p99 ms | appends / results | conflicts | retries | errors + lost | peak MB per instance | instances' CPU ms per call |\n" +
  "| --- | --: | --: | --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    suite: { type: "boolean", default: false },
    store: { type: "string", default: "postgres" },
    instances: { type: "string", default: "2" },
    clients: { type: "string", default: "64" },
    calls: { type: "string", default: "10000" },
    prefill: { type: "string", default: "0" },
    fault: { type: "string", default: "none" },
    mix: { type: "string", default: "70,25,5" },
    rate: { type: "string" },
    json: { type: "string" },
  },
});
// One key for the instances and the prefill.
if (!Deno.env.get("LOOM_SESSION_KEY_FILE")) {
  Deno.env.set(
    "LOOM_SESSION_KEY_FILE",
    `${await Deno.makeTempDir({ prefix: "loom-bench-key-" })}/session.key`,
  );
}
const [small, medium, large] = values.mix.split(",").map(Number);
MIX = [["small", small ?? 70], ["medium", medium ?? 25], ["large", large ?? 5]];
const clients = Number(values.clients);
const calls = Number(values.calls);
/** The suite: every store with two instances and one, then size and faults. */
function suite(): RunOptions[] {
  const base = { clients, calls, prefill: 0, fault: "none" as Fault };
  const stores: StoreKind[] = HAVE_POSTGRES
    ? ["postgres", "sqlite", "file"]
    : ["sqlite", "file"];
  const plan: RunOptions[] = [];
  for (const store of stores) {
    for (const instances of [2, 1] as const) {
      plan.push({ ...base, store, instances, thenPaced: store === "postgres" });
    }
  }
  if (!HAVE_POSTGRES) return plan;
  // A session of 100 results against one of 10,000, interleaved three
  // times (the machine's other work drifts; the CPU per call does not).
  for (let round = 0; round < 3; round += 1) {
    for (const prefill of [100, 10_000]) {
      plan.push({
        ...base,
        store: "postgres",
        instances: 2,
        calls: Math.min(calls, 2_000),
        prefill,
      });
    }
  }
  for (const fault of ["kill", "restart"] as const) {
    plan.push({ ...base, store: "postgres", instances: 2, fault });
  }
  return plan;
}

const plan: RunOptions[] = values.suite ? suite() : [{
  store: values.store as StoreKind,
  instances: Number(values.instances) as 1 | 2,
  clients,
  calls,
  prefill: Number(values.prefill),
  fault: values.fault as Fault,
  ...(values.rate === undefined ? {} : { rate: Number(values.rate) }),
}];
const needsCluster = plan.some((o) => o.store === "postgres");
if (needsCluster && !HAVE_POSTGRES) {
  throw new Error("PostgreSQL (initdb, pg_ctl) is not installed here");
}
const cluster = needsCluster ? await startCluster() : undefined;
const figures: RunFigures[] = [];
try {
  console.log(HEADER);
  for (let i = 0; i < plan.length; i += 1) {
    const options = plan[i]!;
    const f = await run(options, cluster);
    figures.push(f);
    console.log(row(f));
    if (options.thenPaced === true) {
      // Latency at a load the set-up carries: half what it can.
      const { thenPaced: _, ...paced } = options;
      plan.splice(i + 1, 0, { ...paced, rate: f.callsPerSecond / 2 });
    }
  }
} finally {
  await cluster?.stop();
}
if (values.json !== undefined) {
  await Deno.writeTextFile(values.json, JSON.stringify(figures, null, 2));
}
