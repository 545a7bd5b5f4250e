/**
 * A throwaway PostgreSQL cluster for the tests that need one: `initdb` in a
 * temp folder, `pg_ctl` on 127.0.0.1 at a free port, removed afterwards;
 * one per test file ({@linkcode postgresCluster} starts it on first use;
 * the `Deno.test.afterAll` that {@linkcode postgresTest} registers with the
 * file's tests stops it). The folder lies in the run's root, whose watchdog
 * stops the server and removes the folder when the test process ends
 * without stopping it (interrupted, killed). As root (initdb refuses root) the
 * server runs as the `postgres` user through `runuser`. Where no
 * PostgreSQL binaries are found the tests are reported as ignored, with
 * one loud line saying why; with `LOOM_REQUIRE_POSTGRES=1` (CI) they run
 * anyway and fail.
 */

/** The folder holding initdb and pg_ctl, or `undefined`. */
function findBin(): string | undefined {
  const candidates: string[] = [];
  try {
    for (const entry of Deno.readDirSync("/usr/lib/postgresql")) {
      candidates.push(`/usr/lib/postgresql/${entry.name}/bin`);
    }
  } catch {
    // Not a Debian layout.
  }
  candidates.sort((a, b) =>
    Number(b.split("/").at(-2)) - Number(a.split("/").at(-2))
  );
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir !== "") candidates.push(dir);
  }
  for (const dir of candidates) {
    try {
      Deno.statSync(`${dir}/initdb`);
      Deno.statSync(`${dir}/pg_ctl`);
      return dir;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

import "../_run_root.ts";

const BIN = findBin();
/** Whether PostgreSQL's server binaries are installed. */
export const HAVE_POSTGRES: boolean = BIN !== undefined;
const REQUIRED = Deno.env.get("LOOM_REQUIRE_POSTGRES") === "1";
let warned = false;

/** The password of the cluster's superuser `loom`. */
export const PASSWORD = "pg-Secret-7f3a";

/** A running cluster. */
export interface Cluster {
  /** `postgres://loom:PASSWORD@127.0.0.1:PORT/loom`. */
  readonly url: string;
  /** The port. */
  readonly port: number;
  /** Stops the server (fast shutdown). */
  stopServer(): Promise<void>;
  /** Starts it again on the same port. */
  startServer(): Promise<void>;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

/** Whether this process runs as root (`id -u`: no --allow-sys needed). */
function asRoot(): boolean {
  const out = new Deno.Command("id", {
    args: ["-u"],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  return new TextDecoder().decode(out.stdout).trim() === "0";
}

async function run(args: string[], env: Record<string, string> = {}) {
  const [program, ...rest] = asRoot()
    ? ["runuser", "-u", "postgres", "--", ...args]
    : args;
  const out = await new Deno.Command(program!, {
    args: rest,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}${
        new TextDecoder().decode(out.stdout)
      }`,
    );
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Starts a throwaway cluster (the benchmark's too); call `stop()`. */
export async function startCluster(): Promise<Cluster> {
  return await start();
}

async function start(): Promise<Cluster> {
  if (BIN === undefined) {
    throw new Error(
      "PostgreSQL is required (LOOM_REQUIRE_POSTGRES=1) but initdb and pg_ctl were not found: apt-get install -y postgresql",
    );
  }
  const base = await Deno.makeTempDir({ prefix: "loom-pg-" });
  await Deno.chmod(base, 0o700);
  await Deno.writeTextFile(`${base}/pw`, `${PASSWORD}\n`);
  if (asRoot()) {
    const id = await new Deno.Command("id", {
      args: ["-u", "postgres"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const gid = await new Deno.Command("id", {
      args: ["-g", "postgres"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const uid = Number(new TextDecoder().decode(id.stdout).trim());
    const group = Number(new TextDecoder().decode(gid.stdout).trim());
    await Deno.chown(base, uid, group);
    await Deno.chown(`${base}/pw`, uid, group);
  }
  const data = `${base}/data`;
  await run([
    `${BIN}/initdb`,
    "-D",
    data,
    "-U",
    "loom",
    "--pwfile",
    `${base}/pw`,
    "--auth-local=trust",
    "--auth-host=scram-sha-256",
    "-E",
    "UTF8",
    "--no-sync",
  ], { LC_ALL: "C" });
  const port = freePort();
  // TCP only: a socket path under a deep temp folder can pass the 107
  // bytes a Unix socket's path may have.
  const startServer = () =>
    run([
      `${BIN}/pg_ctl`,
      "-D",
      data,
      "-l",
      `${base}/log`,
      "-w",
      "-o",
      `-p ${port} -c unix_socket_directories='' -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`,
      "start",
    ]);
  await startServer();
  await run([
    `${BIN}/createdb`,
    "-h",
    "127.0.0.1",
    "-p",
    String(port),
    "-U",
    "loom",
    "loom",
  ], { PGPASSWORD: PASSWORD });
  const stopServer = () =>
    run([`${BIN}/pg_ctl`, "-D", data, "-m", "fast", "-w", "stop"]);
  return {
    url: `postgres://loom:${PASSWORD}@127.0.0.1:${port}/loom`,
    port,
    stopServer,
    startServer,
    stop: async () => {
      await stopServer().catch(() => {});
      await Deno.remove(base, { recursive: true });
    },
  };
}

let cluster: Promise<Cluster> | undefined;
let stopRegistered = false;

/**
 * This test file's cluster, started on first use, stopped after all tests
 * (by the hook {@linkcode postgresTest} registers; a hook registered from
 * inside a running test would never run).
 */
export function postgresCluster(): Promise<Cluster> {
  if (!stopRegistered) {
    throw new Error(
      "postgresCluster() serves tests declared with postgresTest(), which stops the cluster after them",
    );
  }
  cluster ??= start();
  return cluster;
}

/** Stops this file's cluster after its tests (registered at declaration). */
function stopAfterAll(): void {
  if (stopRegistered) return;
  stopRegistered = true;
  Deno.test.afterAll(async () => {
    const started = cluster;
    cluster = undefined;
    if (started !== undefined) await (await started).stop();
  });
}

/** Whether the PostgreSQL tests run here (binaries found, or required). */
export const POSTGRES_RUNS: boolean = HAVE_POSTGRES || REQUIRED;

/** `Deno.test` that is ignored (loudly) without PostgreSQL, unless required. */
export function postgresTest(
  name: string,
  fn: (t: Deno.TestContext) => Promise<void>,
): void {
  const ignore = !POSTGRES_RUNS;
  if (ignore && !warned) {
    warned = true;
    Deno.test(
      "!!! PostgreSQL (initdb, pg_ctl) is not installed here: the tests that need it are IGNORED; apt-get install -y postgresql, or set LOOM_REQUIRE_POSTGRES=1 to make them fail",
      () => {
        if (findBin() !== undefined) {
          throw new Error("PostgreSQL is installed after all: rerun the tests");
        }
      },
    );
  }
  if (!ignore) stopAfterAll();
  Deno.test({ name, ignore, fn });
}
