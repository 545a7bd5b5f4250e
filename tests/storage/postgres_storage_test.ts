// The storage conformance suite on the PostgreSQL back-end, against a
// real server this file starts (one cluster for the whole file), and what
// only a server has: the schema created once and versioned, a server
// unreachable at start or lost mid-run.
import assert from "node:assert/strict";
import postgres from "postgres";
import { conformance } from "./_conformance.ts";
import { postgresCluster, postgresTest } from "./_postgres.ts";

async function raw<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}

conformance({
  kind: "postgres",
  url: async () => (await postgresCluster()).url,
  readRaw: (url, name) =>
    raw(url, async (sql) =>
      (await sql<{ record: string }[]>`
        SELECT record FROM loom.journal WHERE session = ${name} ORDER BY seq`)
        .map((row) => row.record)),
  writeRaw: (url, name, records) =>
    raw(url, (sql) =>
      sql.begin(async (tx) => {
        await tx`DELETE FROM loom.journal WHERE session = ${name}`;
        for (const [seq, record] of records.entries()) {
          await tx`INSERT INTO loom.journal (session, seq, record)
                   VALUES (${name}, ${seq}, ${record})`;
        }
      })),
  deleteBodyRaw: (url, _name, sha256) =>
    raw(url, async (sql) => {
      await sql`DELETE FROM loom.bodies WHERE sha256 = ${sha256}`;
    }),
  test: postgresTest,
});

postgresTest(
  "postgres: the schema is created once, versioned, and a newer one is refused",
  async () => {
    const { url } = await postgresCluster();
    const { openStorage } = await import("../../lib/storage/open_storage.ts");
    await Promise.all(
      [1, 2, 3].map(async () => (await openStorage(url)).close()),
    );
    const version = await raw(
      url,
      (sql) =>
        sql<
          { value: string }[]
        >`SELECT value FROM loom.meta WHERE key = 'schema_version'`,
    );
    assert.deepEqual(version.map((r) => r.value), ["1"]);
    await raw(
      url,
      (sql) =>
        sql`UPDATE loom.meta SET value = '2' WHERE key = 'schema_version'`,
    );
    try {
      await assert.rejects(
        openStorage(url),
        (e: unknown) =>
          (e as { code?: string }).code === "storage_schema_newer" &&
          !(e as Error).message.includes("pg-Secret"),
      );
    } finally {
      await raw(
        url,
        (sql) =>
          sql`UPDATE loom.meta SET value = '1' WHERE key = 'schema_version'`,
      );
    }
  },
);
