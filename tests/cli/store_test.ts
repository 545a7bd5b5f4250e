/**
 * `--store URL` through the real CLI against a real PostgreSQL server this
 * file starts: a slice stopped by its step budget in one process resumes
 * in another with the same ids and digests; two `loom mcp --http` gateways
 * share one catalogue; a server that cannot be reached is exit 3 naming its
 * host and the cause; and no message, summary or context report ever
 * carries the URL's password or query secrets.
 */
import "../_session_key.ts";
import assert from "node:assert/strict";
import { loom, tempDir } from "../_kit.ts";
import {
  PASSWORD,
  postgresCluster,
  postgresTest,
} from "../storage/_postgres.ts";
import { prepareWorkspace, recordedRunArgs } from "../e2e/_workspace.ts";
import {
  connectHttp,
  descriptorOf,
  persistedFaultEntry,
  readArgs,
  serversFile,
  startHttp,
  tokenFile,
  toolCallRequest,
} from "../_kit/mcp.ts";

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
        ...recordedRunArgs(prepared.workspace, { test: null, maxSteps: 2 }),
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
  "two loom mcp --http gateways on one PostgreSQL database share one catalogue: a result stored via one reads via the other with the same reference and digest, and a request without the token gets 401",
  async () => {
    const { url } = await postgresCluster();
    await using dir = await tempDir();
    const servers = await serversFile(dir.path, {
      kept: persistedFaultEntry(),
    });
    const { path, token } = await tokenFile(dir.path);
    // Without --session: the session `default` of the store.
    const args = ["--servers", servers, "--store", url];
    const auth = ["--token-file", path];
    await using one = await startHttp(args, auth);
    await using two = await startHttp(args, auth);
    await using a = await connectHttp(one.url, token);
    await using b = await connectHttp(two.url, token);
    const stored = async (
      host: typeof a,
      name: string,
      input: Record<string, unknown>,
    ) => descriptorOf(await host.call(name, input));
    const big = await stored(a, "kept__big", { bytes: 20_000 });
    const drift = await stored(a, "kept__drift", {});
    assert.equal(big.result, "result-1");

    // Read through the other instance with the same reference: the read is
    // checked against the reference's digest.
    const read = await b.call(
      "read_result",
      readArgs(big, { kind: "lines", start: 1, end: 1 }),
    );
    assert.equal(read.isError, undefined, JSON.stringify(read));
    assert.match(read.structuredContent.selected_text, /^0123456789abcdef/);
    const listed = await b.call("list_results", { offset: 0 });
    assert.deepEqual(
      listed.structuredContent.results.map((r: { reference: unknown }) =>
        r.reference
      ),
      [big.reference],
    );
    // The persistence rule holds across instances: a self-reading tool's
    // body was not written, so the other instance calls it again, and its
    // answer has changed.
    const drifted = await b.call("read_result", { reference: drift.reference });
    assert.equal(drifted.isError, true);
    assert.match(drifted.content[0].text, /^digest_mismatch: /);
    // Ids are assigned once across the instances.
    const fresh = await stored(b, "kept__big", { bytes: 9000 });
    assert.equal(fresh.result, "result-3");
    const back = await a.call(
      "read_result",
      readArgs(fresh, { kind: "bytes", start: 0, end: 4 }),
    );
    assert.deepEqual(back.structuredContent, { selected_text: "0123" });

    for (const server of [one, two]) {
      for (
        const headers of [{}, { Authorization: "Bearer not-the-token-123" }]
      ) {
        const refused = await fetch(
          toolCallRequest(server.url, "read_result", {
            reference: big.reference,
          }, headers),
        );
        assert.equal(refused.status, 401);
        assert.doesNotMatch(await refused.text(), /0123456789abcdef/);
      }
    }
    await a.client.close();
    await b.client.close();
    assert.equal(await one.stop(), 0, one.stderr());
    assert.equal(await two.stop(), 0, two.stderr());
    const shown = await loom(
      "session",
      "show",
      "default",
      "--store",
      url,
      "--json",
    );
    assert.equal(shown.code, 0, shown.stderr);
    const session = JSON.parse(shown.stdout) as {
      results: { id: string; source: string }[];
    };
    assert.deepEqual(
      session.results.map((r) => [r.id, r.source]),
      [["result-1", "persisted"], ["result-2", "recall"], [
        "result-3",
        "persisted",
      ]],
    );
    for (
      const text of [one.stderr(), two.stderr(), shown.stdout, shown.stderr]
    ) {
      assert.equal(text.includes(PASSWORD), false);
      assert.equal(text.includes(token), false);
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
          ...recordedRunArgs(prepared.workspace, { test: null }),
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
    const { SessionStore, saveSnapshot } = await import(
      "../../lib/persist/session_store.ts"
    );
    const { verifySession } = await import(
      "../../lib/persist/session_verify.ts"
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
