// The MCP server's session: same journal, same key, same checks as a
// slice's. Nothing is repaired: a changed journal or body refuses the load.
import assert from "node:assert/strict";
import { McpSession } from "../../lib/persist/mcp_session.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { sha256Hex } from "../../lib/store/digest.ts";
import { tempDir } from "../_kit.ts";

async function seeded(dir: string, root: string, keyFile: string) {
  const session = await McpSession.open(dir, { root, keyFile });
  const store = new ResultStore();
  for (const text of ["first\n", "second\n"]) {
    const d = await store.put(text, {
      origin: "inspect_files a.txt",
      capture: "complete",
    });
    await session.save(store.get(d.result!)!);
  }
  await session.close();
}

function refusedWith(code: string) {
  return (error: unknown) => (error as { code?: string }).code === code;
}

Deno.test("McpSession.open() restores the results of an earlier server with their ids and digests", async () => {
  await using root = await tempDir();
  await using home = await tempDir();
  const keyFile = `${home.path}/key`;
  await seeded(`${home.path}/s`, root.path, keyFile);
  const again = await McpSession.open(`${home.path}/s`, {
    root: root.path,
    keyFile,
  });
  try {
    const store = new ResultStore();
    for (const result of again.results) store.restore(result);
    assert.deepEqual([...store.stored()].map((r) => r.id), [
      "result-1",
      "result-2",
    ]);
    const d = await store.put("third\n", { origin: "x", capture: "complete" });
    assert.equal(d.result, "result-3");
    await again.save(store.get("result-3")!);
  } finally {
    await again.close();
  }
  const third = await McpSession.open(`${home.path}/s`, {
    root: root.path,
    keyFile,
  });
  assert.equal(third.results.length, 3);
  await third.close();
});

Deno.test("McpSession.open() refuses a changed journal, a changed or missing body, another root and a second server", async (t) => {
  await using root = await tempDir();
  await using other = await tempDir();
  await using home = await tempDir();
  const keyFile = `${home.path}/key`;
  const dir = `${home.path}/s`;
  await seeded(dir, root.path, keyFile);
  const journal = `${dir}/journal.jsonl`;
  const original = await Deno.readTextFile(journal);
  const [body] = [...Deno.readDirSync(`${dir}/tool-results`)].map((e) =>
    `${dir}/tool-results/${e.name}`
  );

  await t.step("a changed record is session_tampered", async () => {
    await Deno.writeTextFile(
      journal,
      original.replace(
        '"origin":"inspect_files a.txt"',
        '"origin":"inspect_files b.txt"',
      ),
    );
    await assert.rejects(
      McpSession.open(dir, { root: root.path, keyFile }),
      refusedWith("session_tampered"),
    );
    await Deno.writeTextFile(journal, original);
  });
  await t.step(
    "a changed body is result_corrupted, a missing one result_missing",
    async () => {
      const bytes = await Deno.readFile(body!);
      await Deno.writeTextFile(body!, "FIRST\n");
      await assert.rejects(
        McpSession.open(dir, { root: root.path, keyFile }),
        refusedWith("result_corrupted"),
      );
      await Deno.remove(body!);
      await assert.rejects(
        McpSession.open(dir, { root: root.path, keyFile }),
        refusedWith("result_missing"),
      );
      await Deno.writeFile(body!, bytes);
    },
  );
  await t.step("another root's session is session_invalid", async () => {
    await assert.rejects(
      McpSession.open(dir, { root: other.path, keyFile }),
      refusedWith("session_invalid"),
    );
  });
  await t.step(
    "a second server on the same session is session_locked",
    async () => {
      const first = await McpSession.open(dir, { root: root.path, keyFile });
      try {
        await assert.rejects(
          McpSession.open(dir, { root: root.path, keyFile }),
          refusedWith("session_locked"),
        );
      } finally {
        await first.close();
      }
    },
  );
  await t.step(
    "a session folder or a key inside the root is refused",
    async () => {
      await assert.rejects(
        McpSession.open(`${root.path}/.loom`, { root: root.path, keyFile }),
        refusedWith("session_inside_workspace"),
      );
      await assert.rejects(
        McpSession.open(`${home.path}/t`, {
          root: root.path,
          keyFile: `${root.path}/key`,
        }),
        refusedWith("session_key_invalid"),
      );
    },
  );
  // Nothing was repaired: the journal is as the server left it.
  assert.equal(await Deno.readTextFile(journal), original);
});

Deno.test("McpSession writes the one journal format: loom session show reads it, an old MCP folder is refused as session_outdated", async () => {
  await using root = await tempDir();
  await using home = await tempDir();
  const keyFile = `${home.path}/key`;
  await seeded(`${home.path}/s`, root.path, keyFile);
  const { summarizeSession } = await import(
    "../../lib/persist/session_summary.ts"
  );
  const summary = await summarizeSession(`${home.path}/s`);
  assert.equal(summary.kind, "mcp");
  assert.equal(summary.workspace, await Deno.realPath(root.path));
  assert.deepEqual(summary.results.map((r) => [r.id, r.tool, r.source]), [
    ["result-1", "inspect_files", "persisted"],
    ["result-2", "inspect_files", "persisted"],
  ]);
  const old = `${home.path}/old`;
  await Deno.mkdir(old);
  // Sealed with the key, as the older loom mcp wrote it.
  const { keyOf } = await import("../storage/_conformance.ts");
  const { sealRecord } = await import("../../lib/persist/_journal.ts");
  const header = sealRecord(await keyOf(keyFile), "", {
    format: "loom-mcp-session/1",
    root: root.path,
  });
  await Deno.writeTextFile(`${old}/journal.jsonl`, `${header.text}\n`);
  await assert.rejects(
    McpSession.open(old, { root: root.path, keyFile }),
    (e: unknown) =>
      refusedWith("session_outdated")(e) &&
      /older loom mcp \(loom-mcp-session\/1\)/.test((e as Error).message),
  );
});

Deno.test("shared McpSessions on one store assign each id once and hand each other's results over, read on demand with the same digest", async () => {
  await using root = await tempDir();
  await using home = await tempDir();
  const keyFile = `${home.path}/key`;
  const store = `sqlite:${home.path}/loom.db`;
  const options = { root: root.path, keyFile, store, shared: true };
  const one = await McpSession.open("default", options);
  const two = await McpSession.open("default", options);
  try {
    const a = new ResultStore({ backing: one.backing() });
    const b = new ResultStore({ backing: two.backing() });
    const put = { origin: "inspect_files x", capture: "complete" } as const;
    const [x, y] = await Promise.all([
      a.put("from one\n", put),
      b.put("from two\n", put),
    ]);
    assert.notEqual(x.result, y.result);
    // Each store takes in what the other catalogued; the body is read when
    // the result is.
    await a.refresh();
    await b.refresh();
    assert.equal(a.count + b.count, 2);
    assert.deepEqual(a.list(0).results.map((r) => r.reference.result), [
      "result-1",
      "result-2",
    ]);
    assert.equal(await a.load(y.result!), true);
    assert.equal(await b.load(x.result!), true);
    for (const store of [a, b]) {
      assert.equal(store.get(x.result!)?.sha256, x.sha256);
      assert.equal(store.get(y.result!)?.sha256, y.sha256);
    }
  } finally {
    await one.close();
    await two.close();
  }
});

Deno.test("McpSession.open() without a root keeps an SDK adapter's results and is never taken for a root's session", async (t) => {
  await using root = await tempDir();
  await using home = await tempDir();
  const keyFile = `${home.path}/key`;
  const dir = `${home.path}/rootless`;
  const first = await McpSession.open(dir, { keyFile });
  const store = new ResultStore();
  const d = await store.put("kept\n", { origin: "rows", capture: "complete" });
  await first.save(store.get(d.result!)!);
  await first.close();

  await t.step("it reopens with the same ids and digests", async () => {
    const again = await McpSession.open(dir, { keyFile });
    try {
      assert.deepEqual(
        again.results.map((r) => [r.id, r.sha256]),
        [[d.result, d.sha256]],
      );
    } finally {
      await again.close();
    }
  });
  await t.step("loom session show describes it", async () => {
    const { summarizeSession } = await import(
      "../../lib/persist/session_summary.ts"
    );
    const summary = await summarizeSession(dir);
    assert.equal(summary.kind, "mcp");
    assert.equal(summary.workspace, null);
    assert.equal(
      (await McpSession.verify(dir, { keyFile })).length,
      1,
    );
  });
  await t.step(
    "a root's server refuses it, and it refuses a root's session",
    async () => {
      await assert.rejects(
        McpSession.open(dir, { root: root.path, keyFile }),
        (e: unknown) =>
          refusedWith("session_invalid")(e) &&
          /no root/.test((e as Error).message),
      );
      await seeded(`${home.path}/rooted`, root.path, keyFile);
      await assert.rejects(
        McpSession.open(`${home.path}/rooted`, { keyFile }),
        refusedWith("session_invalid"),
      );
    },
  );
  await t.step("its key must still lie outside it", async () => {
    await assert.rejects(
      McpSession.open(dir, { keyFile: `${dir}/key` }),
      refusedWith("session_key_invalid"),
    );
  });
});

Deno.test("McpSession runs overlapping saves one at a time, so the chain stays valid and the session reopens", async () => {
  await using root = await tempDir();
  await using home = await tempDir();
  const keyFile = `${home.path}/key`;
  const dir = `${home.path}/s`;
  const session = await McpSession.open(dir, { root: root.path, keyFile });
  const store = new ResultStore();
  const stored = [];
  for (let i = 0; i < 12; i++) {
    const d = await store.put(`result ${i}\n`, {
      origin: "inspect_files a.txt",
      capture: "complete",
    });
    stored.push(store.get(d.result!)!);
  }
  // A server answering several tool calls at once saves them all at once.
  await Promise.all(stored.map((result) => session.save(result)));
  await session.close();
  const again = await McpSession.open(dir, { root: root.path, keyFile });
  try {
    assert.deepEqual(
      again.results.map((r) => [r.id, r.sha256]),
      stored.map((r) => [r.id, r.sha256]),
    );
  } finally {
    await again.close();
  }
});

Deno.test("a shared McpSession kept as its call only writes no body, and the other servers take its id and its record", async () => {
  await using root = await tempDir();
  await using home = await tempDir();
  const keyFile = `${home.path}/key`;
  const store = `sqlite:${home.path}/loom.db`;
  const options = {
    root: root.path,
    keyFile,
    store,
    shared: true,
    bodies: "read",
  } as const;
  const one = await McpSession.open("team", options);
  const two = await McpSession.open("team", options);
  try {
    const bytes = new TextEncoder().encode("not to be kept\n");
    const body = {
      bytes,
      sha256: sha256Hex(bytes),
      origin: "fs/read_file content[0]",
      capture: "complete" as const,
    };
    const recall = { server: "fs", tool: "read_file", part: "content[0]" };
    const first = await one.admit(body, { recall, stamped: true });
    assert.equal(first.id, "result-1");
    // The other server appends after it: a later id, never the same one.
    const second = await two.admit({ ...body, origin: "inspect_files x" });
    assert.equal(second.id, "result-2");
    assert.deepEqual(
      two.records.map((r) => [r.id, r.recall?.tool]),
      [["result-1", "read_file"], ["result-2", undefined]],
    );
    assert.deepEqual(
      (await one.refresh()).map((r) => [r.id, r.sha256, r.recall?.tool]),
      [["result-1", body.sha256, "read_file"], [
        "result-2",
        body.sha256,
        undefined,
      ]],
    );
    assert.deepEqual(await one.refresh(), []);
    assert.deepEqual(await one.load("result-2"), { ...body, ...second });
    assert.equal(await one.load("result-1"), undefined, "no body to read");
  } finally {
    await one.close();
    await two.close();
  }
  const again = await McpSession.open("team", options);
  try {
    // Shared: nothing read at open but the journal.
    assert.deepEqual(again.results, []);
    assert.deepEqual(again.records.map((r) => r.id), ["result-1", "result-2"]);
    assert.equal(
      (await again.load("result-2"))?.sha256,
      again.records[1]!.sha256,
    );
  } finally {
    await again.close();
  }
});
