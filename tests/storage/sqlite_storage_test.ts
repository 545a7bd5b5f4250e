// The storage conformance suite on the SQLite back-end (`sqlite:PATH`,
// the runtime's built-in node:sqlite).
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { conformance } from "./_conformance.ts";
import { openStorage } from "../../lib/storage/open_storage.ts";
import { StorageError } from "../../lib/storage/storage_error.ts";

function db(url: string): DatabaseSync {
  return new DatabaseSync(url.slice("sqlite:".length));
}

conformance({
  kind: "sqlite",
  url: (base) => Promise.resolve(`sqlite:${base}/store/loom.db`),
  readRaw: (url, name) => {
    const conn = db(url);
    try {
      return Promise.resolve(
        (conn.prepare(
          "SELECT record FROM loom_journal WHERE session = ? ORDER BY seq",
        ).all(name) as { record: string }[]).map((row) => row.record),
      );
    } finally {
      conn.close();
    }
  },
  writeRaw: (url, name, records) => {
    const conn = db(url);
    try {
      conn.prepare("DELETE FROM loom_journal WHERE session = ?").run(name);
      const insert = conn.prepare(
        "INSERT INTO loom_journal (session, seq, record) VALUES (?, ?, ?)",
      );
      records.forEach((record, seq) => insert.run(name, seq, record));
    } finally {
      conn.close();
    }
    return Promise.resolve();
  },
  deleteBodyRaw: (url, _name, sha256) => {
    const conn = db(url);
    conn.prepare("DELETE FROM loom_bodies WHERE sha256 = ?").run(sha256);
    conn.close();
    return Promise.resolve();
  },
  test: (name, fn) => Deno.test(name, fn),
});

Deno.test("sqlite: a database of a newer schema version is refused, not changed", async () => {
  const path = `${await Deno.makeTempDir()}/loom.db`;
  await (await openStorage(`sqlite:${path}`)).close();
  const conn = new DatabaseSync(path);
  conn.prepare("UPDATE loom_meta SET value = '99' WHERE key = 'schema_version'")
    .run();
  conn.close();
  await assert.rejects(
    openStorage(`sqlite:${path}`),
    (e: unknown) =>
      e instanceof StorageError && e.code === "storage_schema_newer" &&
      /version 99/.test(e.message),
  );
});

Deno.test("sqlite: read-only opening creates nothing: a missing file or one without Loom's tables is refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const missing = `${dir}/sub/none.db`;
    await assert.rejects(
      openStorage(`sqlite:${missing}`, { readOnly: true }),
      (e: unknown) =>
        e instanceof StorageError && e.code === "storage_unreachable",
    );
    await assert.rejects(Deno.stat(`${dir}/sub`), Deno.errors.NotFound);
    const other = `${dir}/other.db`;
    const conn = new DatabaseSync(other);
    conn.exec("CREATE TABLE t (x)");
    conn.close();
    const size = (await Deno.stat(other)).size;
    await assert.rejects(
      openStorage(`sqlite:${other}`, { readOnly: true }),
      /holds no Loom tables/,
    );
    assert.equal((await Deno.stat(other)).size, size);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
