/**
 * `--store URL` through the real CLI against a real PostgreSQL server this
 * file starts: a slice stopped by its step budget in one process resumes
 * in another with the same ids and digests; a server that cannot be
 * reached is exit 3 naming its host and the cause; and no message, summary
 * or context report ever carries the URL's password or query secrets.
 */
import "../_session_key.ts";
import assert from "node:assert/strict";
import { loom, tempDir } from "../_kit.ts";
import {
  PASSWORD,
  postgresCluster,
  postgresTest,
} from "../storage/_postgres.ts";
import {
  intentPath,
  prepareWorkspace,
  recordingPath,
} from "../e2e/_workspace.ts";

interface Shown {
  results: { id: string; sha256: string }[];
  steps_used: number;
  stop: string | null;
}

postgresTest(
  "a slice stopped by its step budget in one process resumes in another from the PostgreSQL store with the same ids and digests",
  async () => {
    const { url } = await postgresCluster();
    const prepared = await prepareWorkspace("bugfix");
    try {
      const name = `ci-${crypto.randomUUID().slice(0, 8)}`;
      const first = await loom(
        "run",
        "--workspace",
        prepared.workspace,
        "--intent-file",
        intentPath("bugfix"),
        "--model",
        `recorded:${recordingPath("bugfix")}`,
        "--max-steps",
        "2",
        "--store",
        url,
        "--session",
        name,
      );
      assert.equal(first.code, 1, first.stderr);
      const before = await loom(
        "session",
        "show",
        name,
        "--store",
        url,
        "--json",
      );
      assert.equal(before.code, 0, before.stderr);
      const stopped = JSON.parse(before.stdout) as Shown;
      assert.equal(stopped.stop, "step_budget");
      assert.ok(stopped.results.length > 0);
      const second = await loom(
        "run",
        "--resume",
        name,
        "--store",
        url,
        "--max-steps",
        "20",
      );
      assert.match(second.stderr, /resuming .*#ci-/);
      const after = JSON.parse(
        (await loom("session", "show", name, "--store", url, "--json")).stdout,
      ) as Shown;
      assert.ok(after.steps_used > stopped.steps_used);
      assert.deepEqual(
        after.results.slice(0, stopped.results.length).map((
          r,
        ) => [r.id, r.sha256]),
        stopped.results.map((r) => [r.id, r.sha256]),
      );
      for (const out of [first, before, second]) {
        assert.equal(`${out.stdout}${out.stderr}`.includes(PASSWORD), false);
      }
      const listed = await loom("session", "ls", "--store", url);
      assert.match(listed.stdout, new RegExp(`#${name} `));
      assert.equal(listed.stdout.includes(PASSWORD), false);
    } finally {
      await prepared.cleanup();
    }
  },
);

postgresTest(
  "a store that cannot be reached at start is exit 3 naming its host and the cause, never the password",
  async () => {
    const { port } = await postgresCluster();
    await using dir = await tempDir();
    const report = `${dir.path}/report.json`;
    const prepared = await prepareWorkspace("bugfix");
    try {
      for (
        const [url, cause] of [
          // Nothing listens on port 1.
          [
            `postgres://loom:${PASSWORD}@127.0.0.1:1/loom?password=Q-${PASSWORD}`,
            /ECONNREFUSED/,
          ],
          // The server answers, the password is wrong.
          [
            `postgres://loom:wrong-${PASSWORD}@127.0.0.1:${port}/loom`,
            /password authentication failed/,
          ],
        ] as const
      ) {
        const out = await loom(
          "run",
          "--workspace",
          prepared.workspace,
          "--intent-file",
          intentPath("bugfix"),
          "--model",
          `recorded:${recordingPath("bugfix")}`,
          "--store",
          url,
          "--session",
          "s",
          "--context-report",
          report,
        );
        assert.equal(out.code, 3, out.stderr);
        assert.match(
          out.stderr,
          /storage_unreachable: Cannot reach the PostgreSQL server at 127\.0\.0\.1:/,
        );
        assert.match(out.stderr, cause);
        const written = await Deno.readTextFile(report).catch(() => "");
        for (const text of [out.stdout, out.stderr, written]) {
          assert.equal(text.includes(PASSWORD), false, text);
        }
        const session = await loom("session", "ls", "--store", url);
        assert.equal(session.code, 3);
        assert.equal(
          `${session.stdout}${session.stderr}`.includes(PASSWORD),
          false,
        );
      }
    } finally {
      await prepared.cleanup();
    }
  },
);

postgresTest(
  "a store lost mid-run stops the step with a typed error and loses nothing committed",
  async () => {
    const cluster = await postgresCluster();
    const { SessionStore, saveSnapshot, verifySession } = await import(
      "../../lib/persist/session_store.ts"
    );
    const { sampleRun, RUN, tempLayout } = await import(
      "../persist/_session.ts"
    );
    await using layout = await tempLayout();
    const name = `lost-${crypto.randomUUID().slice(0, 8)}`;
    const { results, records, snapshot } = await sampleRun();
    const session = await SessionStore.create(name, {
      workspace: layout.workspace,
      keyFile: layout.keyFile,
      run: RUN,
      store: cluster.url,
    });
    const step = (n: number) =>
      saveSnapshot(session, {
        ...snapshot,
        steps: n,
        modelCalls: 2 * n,
        records: records.slice(0, n),
        results,
      });
    await step(1);
    await cluster.stopServer();
    try {
      await assert.rejects(
        step(2),
        (e: unknown) =>
          (e as { code?: string }).code === "storage_unavailable" &&
          /127\.0\.0\.1/.test((e as Error).message) &&
          !(e as Error).message.includes(PASSWORD),
      );
    } finally {
      await cluster.startServer();
    }
    await session.close();
    const verified = await verifySession(name, {
      keyFile: layout.keyFile,
      store: cluster.url,
    });
    assert.equal(verified.state.steps, 1);
  },
);
