/**
 * The one conformance suite every storage back-end runs (file, SQLite,
 * PostgreSQL): bodies (put, get, dedup, delete, parts), journal appends
 * that lose a race, leases that expire and are renewed, every tamper
 * variant of the journal tests through the back-end's own raw access, the
 * resume of a stopped slice, a writer killed mid-append and two processes
 * racing to append.
 */
import "../_session_key.ts";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { openStorage } from "../../lib/storage/open_storage.ts";
import { StorageError } from "../../lib/storage/storage_error.ts";
import { SessionError } from "../../lib/persist/session_error.ts";
import { saveSnapshot, SessionStore } from "../../lib/persist/session_store.ts";
import { runStateOf, verifySession } from "../../lib/persist/session_verify.ts";
import { sliceSessionHooks } from "../../lib/persist/slice_session.ts";
import { readJournal } from "../../lib/persist/_journal.ts";
import { McpSession } from "../../lib/persist/mcp_session.ts";
import { sealRecord } from "../../lib/persist/_journal.ts";
import { sha256Hex } from "../../lib/store/digest.ts";
import { runSlice } from "../../lib/slice/run.ts";
import { ScriptedProvider } from "../../lib/testing/scripted_provider.ts";
import {
  assertKeptSteps,
  CHANGED_RECORDS,
  FORGED_OUTPUT,
  killWriterAfter,
  type Layout,
  pointAtForged,
  REORDERED_RECORDS,
  RUN,
  sampleRun,
  tempLayout,
} from "../persist/_session.ts";

// deno-lint-ignore no-explicit-any -- free-form edits of parsed JSON
type Json = Record<string, any>;

/** One back-end under test. */
export interface Backend {
  /** `file`, `sqlite` or `postgres`. */
  readonly kind: string;
  /** A store URL for one test (a fresh folder or file; a shared database). */
  url(base: string): Promise<string>;
  /** The journal's records as stored, read past Loom (what an attacker sees). */
  readRaw(url: string, name: string): Promise<string[]>;
  /** Replaces the journal's records past Loom (what an attacker can do). */
  writeRaw(url: string, name: string, records: string[]): Promise<void>;
  /** Deletes a body past Loom, whichever sessions share it. */
  deleteBodyRaw(url: string, name: string, sha256: string): Promise<void>;
  /**
   * Leaves a torn record at the end of the journal, as a writer killed in
   * the middle of writing it would (the folder back-end only: a database
   * commits whole records or none).
   */
  tearRaw?(url: string, name: string): Promise<void>;
  /** `Deno.test`, or the back-end's guarded variant. */
  test(name: string, fn: (t: Deno.TestContext) => Promise<void>): void;
}

/** A session name no other test uses (the PostgreSQL store is shared). */
function fresh(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

function sha(text: string | Uint8Array): string {
  return createHash("sha256").update(text).digest("hex");
}

function isCode(code: string, message?: RegExp) {
  return (e: unknown) =>
    (e as { code?: unknown })?.code === code &&
    (message === undefined || message.test((e as Error).message));
}

const SCRIPT_DIR = new URL(".", import.meta.url).pathname;

/**
 * A helper script of these tests (relative to this folder) in a process of
 * its own, with a store's permissions; it reports on its standard output.
 */
function helperProcess(
  script: string,
  args: readonly string[],
  stdin: "null" | "piped" = "null",
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-net=127.0.0.1",
      `${SCRIPT_DIR}${script}`,
      ...args,
    ],
    stdin,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
}

/** Runs the whole suite against one back-end. */
export function conformance(backend: Backend): void {
  const test = (name: string, fn: (t: Deno.TestContext) => Promise<void>) =>
    backend.test(`${backend.kind}: ${name}`, fn);

  test("two writers extending one journal, each reading it meanwhile, keep every record they were told was appended", async () => {
    // A read that ends while the same writer's append is under way must not
    // hand that append a stale end of the journal (the folder back-end once
    // cut another writer's acknowledged records off as a torn tail).
    await using layout = await tempLayout();
    const url = await backend.url(layout.base);
    const stores = [await openStorage(url), await openStorage(url)];
    const name = fresh("extend-while-reading");
    try {
      await stores[0]!.session(name).prepare();
      const acknowledged = (await Promise.all(stores.map(async (store, w) => {
        const journal = store.session(name).journal;
        const mine: string[] = [];
        let end = 0;
        let writing = true;
        const reader = (async () => {
          while (writing) end = Math.max(end, (await journal.read(end)).end);
        })();
        for (let i = 0; i < 40; i += 1) {
          const record = JSON.stringify({ w, i, pad: "x".repeat(32 * 1024) });
          const extended = await journal.extend(end, () => [record]);
          end = Math.max(end, extended.end);
          mine.push(...extended.appended);
        }
        writing = false;
        await reader;
        return mine;
      }))).flat();
      const third = await openStorage(url);
      try {
        const kept = (await third.session(name).journal.read()).records;
        assert.equal(kept.length, 80);
        assert.deepEqual(new Set(kept), new Set(acknowledged));
      } finally {
        await third.close();
      }
    } finally {
      for (const store of stores) await store.close();
    }
  });

  test("bodies are stored once by digest, read back whole and deleted", async () => {
    await using layout = await tempLayout();
    const store = await openStorage(await backend.url(layout.base));
    try {
      const bodies = store.session(fresh("bodies")).bodies;
      const bytes = new TextEncoder().encode("body ✓\n".repeat(100));
      const digest = sha(bytes);
      assert.equal(await bodies.has(digest), false);
      assert.equal(await bodies.get(digest), undefined);
      assert.equal(await bodies.put(digest, bytes), true);
      assert.equal(await bodies.put(digest, bytes), false, "stored once");
      assert.deepEqual(await bodies.get(digest), bytes);
      assert.equal(await bodies.has(digest), true);
      // Larger than one database part (4 MiB): cut and joined again.
      const big = new Uint8Array(9 * 1024 * 1024 + 17).map((_, i) => i % 251);
      assert.equal(await bodies.put(sha(big), big), true);
      assert.deepEqual(await bodies.get(sha(big)), big);
      assert.equal(await bodies.delete(digest), true);
      assert.equal(await bodies.get(digest), undefined);
      assert.equal(await bodies.delete(digest), false);
      const kept = await bodies.collect(new Set([sha(big)]), false);
      assert.equal(kept.kept, 1);
      assert.deepEqual(kept.deleted, []);
      const gone = await bodies.collect(new Set(), false);
      assert.deepEqual(gone.deleted, [`tool-results/${sha(big)}.txt`]);
      assert.equal(await bodies.get(sha(big)), undefined);
    } finally {
      await store.close();
    }
  });

  test("a store opened read-only reads what was written and refuses every write, changing nothing", async () => {
    await using layout = await freshPlace("readonly");
    const { url, name } = layout;
    const bytes = new TextEncoder().encode("kept body\n");
    const writer = await openStorage(url);
    try {
      const slot = writer.session(name);
      await slot.prepare();
      await slot.journal.append(0, ['{"seq":0}', '{"seq":1}']);
      await slot.bodies.put(sha(bytes), bytes);
    } finally {
      await writer.close();
    }
    const before = await backend.readRaw(url, name);
    const reader = await openStorage(url, { readOnly: true });
    try {
      assert.ok((await reader.listSessions()).includes(name));
      const slot = reader.session(name);
      assert.deepEqual((await slot.journal.read()).records, before);
      assert.deepEqual(await slot.bodies.get(sha(bytes)), bytes);
      const refused = isCode("storage_read_only");
      await assert.rejects(slot.journal.append(2, ['{"seq":2}']), refused);
      await assert.rejects(slot.bodies.put(sha("x"), bytes), refused);
      await assert.rejects(slot.bodies.delete(sha(bytes)), refused);
      await assert.rejects(slot.bodies.collect(new Set(), false), refused);
      await assert.rejects(slot.acquireLease(), refused);
      await assert.rejects(slot.prepare(), refused);
      await assert.rejects(reader.deleteSession(name), refused);
    } finally {
      await reader.close();
    }
    assert.deepEqual(await backend.readRaw(url, name), before);
  });

  test("an append at a position another writer took is a typed conflict that writes nothing", async () => {
    await using layout = await freshPlace("conflict");
    const { url, name } = layout;
    const one = await openStorage(url);
    const two = await openStorage(url);
    try {
      const a = one.session(name);
      const b = two.session(name);
      await a.prepare();
      await a.journal.append(0, ['{"n":0}']);
      assert.deepEqual(await b.journal.read(), {
        records: ['{"n":0}'],
        end: 1,
        torn: 0,
      });
      await b.journal.append(1, ['{"n":1,"by":"b"}']);
      await assert.rejects(
        a.journal.append(1, ['{"n":1,"by":"a"}']),
        (e: unknown) =>
          e instanceof StorageError && e.code === "journal_conflict" &&
          /another writer appended/.test(e.message),
      );
      await assert.rejects(
        a.journal.append(5, ['{"n":5}']),
        isCode("journal_conflict"),
      );
      await assert.rejects(
        b.journal.append(0, ['{"n":0}']),
        isCode("journal_conflict"),
      );
      assert.deepEqual((await a.journal.read()).records, [
        '{"n":0}',
        '{"n":1,"by":"b"}',
      ]);
      assert.deepEqual((await a.journal.read(1)).records, ['{"n":1,"by":"b"}']);
      await a.journal.append(2, ['{"n":2}', '{"n":3}']);
      assert.equal((await b.journal.read()).end, 4);
      assert.ok((await one.listSessions()).includes(name));
      await one.deleteSession(name);
      assert.equal((await two.listSessions()).includes(name), false);
      assert.equal(await b.journal.exists(), false);
    } finally {
      await one.close();
      await two.close();
    }
  });

  test("a lease expires, is renewed explicitly, and its loss is typed", async () => {
    await using layout = await freshPlace("lease");
    const { url, name } = layout;
    const store = await openStorage(url);
    try {
      const slot = store.session(name);
      await slot.prepare();
      const first = await slot.acquireLease({ ttlMs: 400, autoRenew: false });
      await assert.rejects(slot.acquireLease(), isCode("lease_held"));
      const before = first.expiresAt;
      await new Promise((r) => setTimeout(r, 20));
      await first.renew();
      assert.ok(first.expiresAt > before, "renewal extends the lease");
      await assert.rejects(slot.acquireLease(), isCode("lease_held"));
      await new Promise((r) => setTimeout(r, 600));
      const second = await slot.acquireLease({ ttlMs: 60_000 });
      assert.match(second.tookOver ?? "", /expired/);
      await assert.rejects(first.renew(), isCode("lease_lost"));
      await assert.rejects(first.check(), isCode("lease_lost"));
      await first.release();
      await assert.rejects(slot.acquireLease(), isCode("lease_held"));
      await second.release();
      const third = await slot.acquireLease();
      assert.equal(third.tookOver, null);
      await third.release();
    } finally {
      await store.close();
    }
  });

  /** A temp layout, a store of this back-end in it and a fresh session name. */
  async function freshPlace(
    tag: string,
  ): Promise<Layout & { url: string; name: string }> {
    const layout = await tempLayout();
    return { ...layout, url: await backend.url(layout.base), name: fresh(tag) };
  }

  /** How each server of a place's shared session opens it. */
  function sharedSession(place: Layout & { url: string }) {
    return {
      root: place.workspace,
      keyFile: place.keyFile,
      store: place.url,
      shared: true,
    };
  }

  /** Stores `text` through a server of a shared session, complete. */
  function admitText(session: McpSession, text: string, origin: string) {
    const bytes = new TextEncoder().encode(text);
    return session.admit({
      bytes,
      sha256: sha256Hex(bytes),
      origin,
      capture: "complete",
    });
  }

  /** A session's journal lines as stored, parsed. */
  async function journalOf(url: string, name: string): Promise<Json[]> {
    return (await backend.readRaw(url, name)).map((l) => JSON.parse(l));
  }

  /** The sample run saved stepwise (header + 3 steps) in a store. */
  async function savedSample(
    layout: Layout,
  ): Promise<{ url: string; name: string }> {
    const url = await backend.url(layout.base);
    const name = fresh("sample");
    const { results, records, snapshot } = await sampleRun();
    const session = await SessionStore.create(name, {
      workspace: layout.workspace,
      keyFile: layout.keyFile,
      run: RUN,
      store: url,
    });
    for (let n = 1; n <= 3; n += 1) {
      await saveSnapshot(session, {
        ...snapshot,
        steps: n,
        modelCalls: 2 * n,
        records: records.slice(0, n),
        results,
      });
    }
    await session.close();
    return { url, name };
  }

  test("every tamper variant of the journal is refused before any step, naming the record", async (t) => {
    const cases = [...CHANGED_RECORDS, ...REORDERED_RECORDS];
    for (const [what, bad, edit] of cases) {
      await t.step(what, async () => {
        await using layout = await tempLayout();
        const { url, name } = await savedSample(layout);
        const raw = await journalOf(url, name);
        const edited = edit(raw) ?? raw;
        await backend.writeRaw(
          url,
          name,
          edited.map((r) => JSON.stringify(r)),
        );
        const before = await backend.readRaw(url, name);
        const check = (e: unknown) =>
          e instanceof SessionError && e.code === "session_tampered" &&
          new RegExp(`record ${bad} \\(line ${bad + 1}\\)`).test(e.message);
        await assert.rejects(
          SessionStore.open(name, { keyFile: layout.keyFile, store: url }),
          check,
        );
        await assert.rejects(
          verifySession(name, { keyFile: layout.keyFile, store: url }),
          check,
        );
        assert.deepEqual(await backend.readRaw(url, name), before);
      });
    }

    await t.step(
      "a result body replaced together with its recomputed digest",
      async () => {
        await using layout = await tempLayout();
        const { url, name } = await savedSample(layout);
        const digest = sha(FORGED_OUTPUT);
        const store = await openStorage(url);
        await store.session(name).bodies.put(
          digest,
          new TextEncoder().encode(FORGED_OUTPUT),
        );
        await store.close();
        const raw = await journalOf(url, name);
        const forged = pointAtForged(raw, digest);
        await backend.writeRaw(url, name, forged.map((r) => JSON.stringify(r)));
        await assert.rejects(
          SessionStore.open(name, { keyFile: layout.keyFile, store: url }),
          isCode("session_tampered", /record 2 /),
        );
      },
    );

    await t.step("a session sealed with another key", async () => {
      await using layout = await tempLayout();
      const { url, name } = await savedSample(layout);
      await assert.rejects(
        SessionStore.open(name, {
          keyFile: `${layout.base}/other/session.key`,
          store: url,
        }),
        isCode("session_tampered", /record 0 /),
      );
    });

    await t.step(
      "a persisted body changed or gone is a typed error",
      async () => {
        await using layout = await tempLayout();
        const { url, name } = await savedSample(layout);
        const raw = await journalOf(url, name);
        const digest = raw[2]!.results["result-3"].sha256 as string;
        await backend.deleteBodyRaw(url, name, digest);
        const session = await SessionStore.open(name, {
          keyFile: layout.keyFile,
          store: url,
        });
        await assert.rejects(session.load(), isCode("result_missing"));
        await session.close();
        // Under its digest, other bytes: refused by the digest check.
        const store = await openStorage(url);
        await store.session(name).bodies.put(
          digest,
          new TextEncoder().encode("forged body"),
        );
        await store.close();
        const again = await SessionStore.open(name, {
          keyFile: layout.keyFile,
          store: url,
        });
        await assert.rejects(again.load(), isCode("result_corrupted"));
        await again.close();
        // A shared database: later tests store the true body again.
        await backend.deleteBodyRaw(url, name, digest);
      },
    );
  });

  test("a slice stopped by its step budget resumes with the same ids and digests", async () => {
    await using layout = await freshPlace("slice");
    const { url, name } = layout;
    const run = {
      intent: "Read the readme",
      policy: "bounded",
      model: "scripted:inline",
      test: null,
      maxSteps: 1,
    } as const;
    const session = await SessionStore.create(name, {
      workspace: layout.workspace,
      keyFile: layout.keyFile,
      run,
      store: url,
    });
    /** The slice over the session, answered by `replies`. */
    const slice = (
      maxSteps: number,
      replies: ConstructorParameters<typeof ScriptedProvider>[0],
      hooks: ReturnType<typeof sliceSessionHooks>,
    ) =>
      runSlice({
        intent: run.intent,
        workspace: layout.workspace,
        maxSteps,
        provider: new ScriptedProvider(replies),
      }, { contextPolicy: "bounded", session: hooks });
    const first = await slice(1, [
      { arguments: { action: "repository.inspect" } },
      { arguments: { paths: ["README.md"] } },
    ], sliceSessionHooks(session));
    await session.close();
    assert.equal(first.stop, "step_budget");
    const reopened = await SessionStore.open(name, {
      keyFile: layout.keyFile,
      store: url,
    });
    const loaded = await reopened.load();
    assert.equal(loaded.stop, "step_budget");
    assert.deepEqual(loaded.results.map((r) => [r.id, r.sha256]), [[
      "result-1",
      sha("# Readme body text\n"),
    ]]);
    await assert.rejects(
      SessionStore.open(name, { keyFile: layout.keyFile, store: url }),
      isCode("session_locked"),
    );
    await reopened.updateSettings({ maxSteps: 3, overrides: {} });
    const second = await slice(3, [
      { arguments: { action: "slice.complete" } },
      { arguments: { summary: "Read it" } },
    ], sliceSessionHooks(reopened, { resume: loaded }));
    await reopened.close();
    assert.equal(second.stop, "completed");
    const done = await verifySession(name, {
      keyFile: layout.keyFile,
      store: url,
    });
    assert.equal(done.stop, "completed");
    assert.equal(done.state.steps, 2);
    assert.deepEqual(
      done.results.map((r) => [r.id, r.sha256]),
      loaded.results.map((r) => [r.id, r.sha256]),
    );
    assert.deepEqual(
      runStateOf(done).records.slice(0, 1).map((r) => [r.sequence, r.action]),
      [[1, "repository.inspect"]],
    );
  });

  test("a writer killed during its appends leaves every acknowledged step, whole, and the next run takes the session over at once", async () => {
    await using layout = await freshPlace("killed");
    const { url, name } = layout;
    const acked = await killWriterAfter(4, 2, [
      name,
      layout.workspace,
      layout.keyFile,
      url,
    ], true);
    const verified = await verifySession(name, {
      keyFile: layout.keyFile,
      store: url,
    });
    assertKeptSteps(verified, acked);
    // Its holder is provably gone (its process, on this machine; on
    // PostgreSQL its connection and the lock with it): no wait for the
    // lease's minute, no session_locked.
    const resumed = await SessionStore.open(name, {
      keyFile: layout.keyFile,
      store: url,
    });
    try {
      assert.match(
        resumed.tookOverLock ?? "",
        /no longer exists|connection, and the session's lock with it, are gone/,
      );
    } finally {
      await resumed.close();
    }
  });

  test("two servers of a shared session storing at once give every id once, read each other's results with their digests, and the session reopens valid", async () => {
    await using layout = await freshPlace("shared");
    const { name } = layout;
    const options = sharedSession(layout);
    const servers = [
      await McpSession.open(name, options),
      await McpSession.open(name, options),
    ];
    const stored: { id: string; sha256: string }[] = [];
    try {
      // Calls arrive at both at once, and a little apart.
      await Promise.all(Array.from({ length: 80 }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, i % 7));
        const result = await admitText(
          servers[i % 2]!,
          `result ${i}\n`.repeat(40),
          `inspect_files ${i}.txt`,
        );
        stored.push(result);
      }));
      assert.equal(new Set(stored.map((r) => r.id)).size, 80);
      for (const { id, sha256 } of stored) {
        for (const server of servers) {
          assert.equal((await server.load(id))?.sha256, sha256, id);
        }
      }
    } finally {
      for (const server of servers) await server.close();
    }
    const again = await McpSession.verify(name, options);
    assert.deepEqual(
      again.map((r) => r.id).sort(),
      stored.map((r) => r.id).sort(),
    );
  });

  test("a server of a shared session killed while appending costs the session nothing: every acknowledged result reads back through the other, which goes on storing", async () => {
    await using layout = await freshPlace("victim");
    const { url, name } = layout;
    const options = sharedSession(layout);
    const survivor = await McpSession.open(name, options);
    const acked = new Map<string, string>();
    const store = async (n: number) => {
      const result = await admitText(
        survivor,
        `survivor ${n}\n`.repeat(300),
        "inspect_files survivor.txt",
      );
      acked.set(result.id, result.sha256);
    };
    const victim = helperProcess("../persist/_kill_admitter.ts", [
      url,
      name,
      layout.workspace,
      layout.keyFile,
    ]);
    try {
      let text = "";
      const reader = victim.stdout.pipeThrough(new TextDecoderStream())
        .getReader();
      let n = 0;
      // Both store at once until the victim has had 12 results acknowledged.
      while (
        text.split("\n").filter((l) => l.startsWith("acked")).length < 12
      ) {
        const [read] = await Promise.all([reader.read(), store(n++)]);
        if (read.done) break;
        text += read.value;
      }
      victim.kill("SIGKILL");
      await victim.status;
      await reader.cancel();
      for (const line of text.split("\n")) {
        const [word, id, sha256] = line.split(" ");
        if (word === "acked" && id !== undefined) acked.set(id, sha256!);
      }
      assert.ok(acked.size >= 12, `${acked.size} acknowledged`);
      await backend.tearRaw?.(url, name);
      for (let i = 0; i < 5; i += 1) await store(n++);
      for (const [id, sha256] of acked) {
        assert.equal((await survivor.load(id))?.sha256, sha256, id);
      }
    } finally {
      try {
        victim.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      await victim.status;
      await survivor.close();
    }
    const verified = await McpSession.verify(name, options);
    const ids = new Map(verified.map((r) => [r.id, r.sha256]));
    for (const [id, sha256] of acked) assert.equal(ids.get(id), sha256, id);
  });

  test("two processes race to append at one position: one wins, one gets a typed conflict, the chain stays valid", async () => {
    await using layout = await freshPlace("race");
    const { url, name } = layout;
    const key = await keyOf(layout.keyFile);
    const store = await openStorage(url);
    const slot = store.session(name);
    await slot.prepare();
    const header = sealRecord(key, "", { seq: 0, type: "header" });
    await slot.journal.append(0, [header.text]);
    const racers = ["a", "b"].map((who) =>
      helperProcess("_racer.ts", [url, name, layout.keyFile, who], "piped")
    );
    const readers = racers.map((r) =>
      r.stdout.pipeThrough(new TextDecoderStream()).getReader()
    );
    // Both have read the journal (one record) before either appends.
    for (const reader of readers) {
      const { value } = await reader.read();
      assert.match(value ?? "", /ready/);
    }
    await Promise.all(racers.map(async (r) => {
      const writer = r.stdin.getWriter();
      await writer.write(new TextEncoder().encode("go\n"));
      await writer.close();
    }));
    const said: string[] = [];
    for (const reader of readers) {
      let out = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        out += value;
      }
      said.push(out.trim());
    }
    await Promise.all(racers.map((r) => r.status));
    assert.deepEqual(
      said.map((s) => s.split(" ")[0]).sort(),
      ["conflict", "won"],
      said.join(" | "),
    );
    const read = await readJournal(slot.journal, key);
    assert.equal(read.lines.length, 2);
    const winner = said.find((s) => s.startsWith("won"))!.split(" ")[1];
    assert.equal(read.lines[1]!.value.by, winner);
    await store.close();
  });
}

/** The session key's bytes (created by the first session, or now). */
export async function keyOf(file: string): Promise<Uint8Array> {
  const { loadSessionKey } = await import(
    "../../lib/persist/_session_key.ts"
  );
  return await loadSessionKey(file);
}
