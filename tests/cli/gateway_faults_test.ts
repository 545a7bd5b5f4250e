/**
 * The team gateway under faults, through the real CLI: `loom mcp --http`
 * instances sharing one session in a store, clients of the official SDK,
 * and the real thing killed, restarted or hung — then everything that was
 * acknowledged is read back. Sizes are what CI affords; the benchmark
 * (`tools/team_gateway_bench.ts`) runs the same faults at full size.
 */
import "../_session_key.ts";
import assert from "node:assert/strict";
import { tempDir } from "../_kit.ts";
import {
  connectHttp,
  denoEntry,
  type Descriptor,
  descriptorOf,
  FAULT,
  type HttpServer,
  type McpConnection,
  serversFile,
  startHttp,
  tokenFile,
  toolCallRequest,
} from "../_kit/mcp.ts";
import {
  PASSWORD,
  postgresCluster,
  postgresTest,
} from "../storage/_postgres.ts";
import { McpSession } from "../../lib/persist/mcp_session.ts";

const SIX = [0, 1, 2, 3, 4, 5];

/** A gateway's servers file: the fault server, its answers persisted. */
async function faultServers(dir: string): Promise<string> {
  return await serversFile(dir, {
    fault: { ...denoEntry(FAULT), persist: true },
    other: denoEntry(FAULT),
  });
}

/** What a client was handed: a descriptor, and through which instance. */
interface Acked {
  readonly descriptor: Descriptor;
  readonly via: string;
}

/** Reads a descriptor's result back (its first bytes), which checks its digest. */
async function readBack(client: McpConnection, descriptor: Descriptor) {
  const read = await client.call("read_result", {
    reference: {
      ...descriptor.reference,
      select: { kind: "bytes", start: 0, end: 16 },
    },
  });
  assert.notEqual(
    read.isError,
    true,
    `${descriptor.result}: ${read.content?.[0]?.text}`,
  );
  assert.equal(read.structuredContent.selected_text, "0123456789abcdef");
}

/** Verifies the whole session (chain, schema, every body) as a new reader. */
async function verifySession(
  name: string,
  store: string,
  root: string,
): Promise<Map<string, string>> {
  const results = await McpSession.verify(name, {
    root,
    store,
    keyFile: Deno.env.get("LOOM_SESSION_KEY_FILE")!,
  });
  return new Map(results.map((r) => [r.id, r.sha256]));
}

postgresTest(
  "an instance killed with SIGKILL mid-run costs nothing acknowledged: every descriptor a client got reads back through the other instance, the session stays valid, and the clients finish on the survivor",
  async () => {
    const { url } = await postgresCluster();
    await using dir = await tempDir();
    const servers = await faultServers(dir.path);
    const { path, token } = await tokenFile(dir.path);
    const session = `killed-${crypto.randomUUID().slice(0, 8)}`;
    const args = [
      "--servers",
      servers,
      "--store",
      url,
      "--session",
      session,
      "--offload-bytes",
      "1024",
    ];
    const auth = ["--token-file", path];
    const [a, b] = await Promise.all([
      startHttp(args, auth),
      startHttp(args, auth),
    ]) as [HttpServer, HttpServer];
    await using _b = b;
    await using _a = a;
    const clients = {
      // A call in flight when its instance dies is never answered (the
      // SDK's client waits out its deadline): 10 s, then it is retried.
      a: await Promise.all(
        SIX.map(() => connectHttp(a.url, token, { timeoutMs: 10_000 })),
      ),
      b: await Promise.all(SIX.map(() => connectHttp(b.url, token))),
    };
    const acked: Acked[] = [];
    let killed = false;
    const { promise: killTime, resolve: timeToKill } = Promise.withResolvers<
      void
    >();
    // Twelve clients, six per instance, each storing 8 results (just over
    // the offload threshold, so appends come thick), switching to the
    // survivor when its instance is gone (the call in flight then is
    // retried there).
    let switched = 0;
    const run = async (via: "a" | "b", index: number) => {
      let client = clients[via][index]!;
      let at = via;
      for (let call = 0; call < 8; call += 1) {
        const bytes = 1_500 + 59 * (call + 8 * (index + (via === "a" ? 0 : 6)));
        for (;;) {
          try {
            const answer = await client.call("fault__big", { bytes });
            assert.notEqual(answer.isError, true, answer.content?.[0]?.text);
            acked.push({ descriptor: descriptorOf(answer), via: at });
            if (at === "a" && acked.length >= 30) timeToKill();
            break;
          } catch (error) {
            if (at === "b" || !killed) throw error;
            client = clients.b[index]!;
            at = "b";
            switched += 1;
          }
        }
      }
    };
    const clientsDone = Promise.all([
      ...SIX.map((i) => run("a", i)),
      ...SIX.map((i) => run("b", i)),
    ]);
    await Promise.race([killTime, clientsDone]);
    killed = true;
    Deno.kill(a.pid, "SIGKILL");
    await clientsDone;
    assert.equal(acked.length, 96);
    assert.ok(acked.some((x) => x.via === "a"));
    // It died mid-run: its clients had calls left, and went on elsewhere.
    assert.ok(switched > 0, "every client of A had finished before the kill");
    assert.equal(new Set(acked.map((x) => x.descriptor.result)).size, 96);
    const reader = clients.b[0]!;
    for (const { descriptor } of acked) await readBack(reader, descriptor);
    for (const client of [...clients.a, ...clients.b]) {
      await client.close().catch(() => {});
    }
    assert.equal(await b.stop(), 0, b.stderr());
    const verified = await verifySession(session, url, servers);
    for (const { descriptor } of acked) {
      assert.equal(verified.get(descriptor.result), descriptor.sha256);
    }
  },
);

postgresTest(
  "PostgreSQL restarted mid-run: calls during the outage get a typed, retryable storage_unavailable naming the store without its password, never a hang; after it every call succeeds and the chain verifies",
  async () => {
    const cluster = await postgresCluster();
    await using dir = await tempDir();
    const servers = await faultServers(dir.path);
    const { path, token } = await tokenFile(dir.path);
    const session = `restart-${crypto.randomUUID().slice(0, 8)}`;
    await using gateway = await startHttp(
      [
        "--servers",
        servers,
        "--store",
        cluster.url,
        "--session",
        session,
        "--call-timeout",
        "8s",
      ],
      ["--token-file", path],
    );
    // A call that hung past its deadline would fail the test here.
    await using client = await connectHttp(gateway.url, token, {
      timeoutMs: 60_000,
    });
    const store = (bytes: number) => client.call("fault__big", { bytes });
    const before: Descriptor[] = [];
    for (const bytes of [9_001, 9_002, 9_003]) {
      before.push(descriptorOf(await store(bytes)));
    }
    await cluster.stopServer();
    try {
      const during = await Promise.all(
        [9_004, 9_005, 9_006].map((bytes) => store(bytes)),
      );
      during.push(
        await client.call("read_result", {
          reference: { ...before[0]!.reference, result: "result-99" },
        }),
      );
      for (const answer of during) {
        assert.equal(answer.isError, true, JSON.stringify(answer));
        const text = answer.content[0].text as string;
        assert.match(text, /^storage_unavailable: /);
        assert.match(text, new RegExp(`127\\.0\\.0\\.1:${cluster.port}`));
        assert.match(text, /retry/);
        assert.equal(text.includes(PASSWORD), false, text);
      }
    } finally {
      await cluster.startServer();
    }
    const after: Descriptor[] = [];
    for (const bytes of [9_007, 9_008, 9_009]) {
      after.push(descriptorOf(await store(bytes)));
    }
    for (const descriptor of [...before, ...after]) {
      await readBack(client, descriptor);
    }
    await client.close();
    assert.equal(await gateway.stop(), 0, gateway.stderr());
    assert.equal(gateway.stderr().includes(PASSWORD), false);
    const verified = await verifySession(session, cluster.url, servers);
    for (const descriptor of [...before, ...after]) {
      assert.equal(verified.get(descriptor.result), descriptor.sha256);
    }
  },
);

Deno.test("an upstream that hangs blocks nothing but its own calls: they time out at --call-timeout while calls to other servers and other calls to the same instance go on", async () => {
  await using dir = await tempDir();
  const servers = await faultServers(dir.path);
  const { path, token } = await tokenFile(dir.path);
  await using gateway = await startHttp(
    [
      "--servers",
      servers,
      "--store",
      `sqlite:${dir.path}/loom.db`,
      "--call-timeout",
      "6s",
    ],
    ["--token-file", path],
  );
  await using client = await connectHttp(gateway.url, token);
  let hanging = 3;
  const hung = Promise.all([1, 2, 3].map(async () => {
    const answer = await client.call("fault__hang", {});
    hanging -= 1;
    return answer;
  }));
  // While three calls hang: stored results on the same server, small
  // answers from another, and reads of what was stored.
  for (let i = 0; i < 6; i += 1) {
    const stored = descriptorOf(
      await client.call("fault__big", { bytes: 9_000 + i }),
    );
    await readBack(client, stored);
    const other = await client.call("other__small", {});
    assert.notEqual(other.isError, true);
  }
  assert.equal(hanging, 3, "the hung calls were still waiting");
  for (const answer of await hung) {
    assert.equal(answer.isError, true);
    assert.match(answer.content[0].text, /^upstream_timeout: /);
  }
});

/** The resident memory of a process, in bytes (`ps`: Deno reads /proc only with --allow-all). */
async function residentBytes(pid: number): Promise<number> {
  const out = await new Deno.Command("ps", {
    args: ["-o", "rss=", "-p", String(pid)],
    stdout: "piped",
    stderr: "null",
  }).output();
  return Number(new TextDecoder().decode(out.stdout).trim()) * 1024;
}

Deno.test("a client that disconnects in the middle of a 5 MB answer loses nothing, stores nothing twice, and the instance's memory returns to its idle level", async () => {
  await using dir = await tempDir();
  const servers = await faultServers(dir.path);
  const { path, token } = await tokenFile(dir.path);
  const store = `sqlite:${dir.path}/loom.db`;
  // Over 5 MB the answer is stored and described; under, it streams back.
  await using gateway = await startHttp(
    ["--servers", servers, "--store", store, "--offload-bytes", "6000000"],
    ["--token-file", path],
  );
  const headers = { Authorization: `Bearer ${token}` };
  const big = 5 * 1024 * 1024;
  /** Asks for 5 MB, reads the first bytes of the answer, hangs up. */
  const hangUp = async (tool: string, bytes: number) => {
    const abort = new AbortController();
    const response = await fetch(
      new Request(toolCallRequest(gateway.url, tool, { bytes }, headers), {
        signal: abort.signal,
      }),
    );
    const reader = response.body!.getReader();
    await reader.read();
    abort.abort();
    await reader.cancel().catch(() => {});
  };
  await using client = await connectHttp(gateway.url, token);
  const streamed = await client.call("other__big", { bytes: big });
  assert.ok(streamed.content[0].text.length > big * 0.95);
  const kept = descriptorOf(
    await client.call("fault__big", { bytes: 7_000_000 }),
  );
  const round = async () => {
    for (let i = 0; i < 8; i += 1) {
      await hangUp("other__big", big);
      await hangUp("fault__big", 7_000_000);
    }
  };
  // A round first, so the instance's heap has grown to what it needs.
  await round();
  const idle = await residentBytes(gateway.pid);
  await round();
  await round();
  // 32 answers of 5 to 7 MB were dropped mid-way: had each left its bytes
  // behind, the instance would hold some 190 MB more than before them.
  const after = await residentBytes(gateway.pid);
  assert.ok(
    after < idle + 64 * 1024 * 1024,
    `resident ${after} bytes after, ${idle} before`,
  );
  // The instance still answers, and what was stored reads back.
  await readBack(client, kept);
  const again = descriptorOf(
    await client.call("fault__big", { bytes: 7_000_000 }),
  );
  assert.equal(again.sha256, kept.sha256);
  await readBack(client, again);
  await client.close();
  assert.equal(await gateway.stop(), 0, gateway.stderr());
  // Each stored answer is catalogued once per call, its body kept once.
  const verified = await verifySession("default", store, servers);
  assert.equal(verified.get(kept.result), kept.sha256);
  assert.equal(new Set(verified.values()).size, 1);
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(`${dir.path}/loom.db`);
  try {
    const row = db.prepare("SELECT count(*) AS n FROM loom_bodies").get() as {
      n: number;
    };
    assert.equal(row.n, 1);
  } finally {
    db.close();
  }
});
