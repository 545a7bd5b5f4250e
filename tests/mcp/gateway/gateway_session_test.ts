// `loom mcp --servers --session` (a folder, or a session in a `--store`):
// the seeds' persistence rule end to end, on each back-end but PostgreSQL
// (tests/cli/store_test.ts runs two gateways on one). A body is written only for a tool the config opts in and that is not
// self-reading (checked first); other results keep their descriptor, and on
// resume a read-only, idempotent tool is called again and its answer kept
// only when it has the recorded digest.
import assert from "node:assert/strict";
import { tempDir } from "../../_kit.ts";
import {
  assertToolError,
  connectGateway,
  denoEntry,
  type Descriptor,
  descriptorOf,
  FAULT,
  persistedFaultEntry,
  readArgs,
  serversFile,
} from "../../_kit/mcp.ts";

for (
  const [where, args, bodiesIn] of [
    [
      "in a folder",
      (d: string) => ["--session", `${d}/session`],
      (d: string) => `${d}/session/tool-results`,
    ],
    // A store's session is shared (no lease): ids through its journal.
    [
      "in a file: store",
      (d: string) => ["--store", `file:${d}/store`],
      (d: string) => `${d}/store/default/tool-results`,
    ],
    [
      "in a SQLite store",
      (d: string) => ["--store", `sqlite:${d}/loom.db`, "--session", "team"],
      undefined,
    ],
  ] as const
) {
  Deno.test(`gateway sessions ${where} persist opted-in bodies only, re-fetch the others on resume and refuse a changed answer`, async () => {
    await checkSession((d) => [...args(d)], bodiesIn);
  });
}

async function checkSession(
  sessionArgs: (dir: string) => string[],
  bodiesIn: ((dir: string) => string) | undefined,
) {
  await using dir = await tempDir();
  const servers = await serversFile(dir.path, {
    kept: persistedFaultEntry(),
    plain: denoEntry(FAULT),
  });
  const args = sessionArgs(dir.path);
  const descriptors: Record<string, Descriptor> = {};
  {
    await using gateway = await connectGateway(servers, args);
    for (
      const [name, input] of [
        ["kept__big", { bytes: 20_000 }],
        ["kept__drift", {}],
        ["plain__big", { bytes: 30_000 }],
      ] as const
    ) {
      const answer = await gateway.call(name, input);
      descriptors[name] = descriptorOf(answer);
    }
  }

  if (bodiesIn !== undefined) {
    const bodies = [...Deno.readDirSync(bodiesIn(dir.path))];
    assert.equal(bodies.length, 1, "only kept__big's body is written");
  }

  await using gateway = await connectGateway(servers, args);
  const read = (name: string) =>
    gateway.call(
      "read_result",
      readArgs(descriptors[name]!, { kind: "lines", start: 1, end: 1 }),
    );
  const kept = await read("kept__big");
  assert.equal(kept.isError, undefined, JSON.stringify(kept));
  assert.match(kept.structuredContent.selected_text, /^0123456789abcdef/);
  const refetched = await read("plain__big");
  assert.equal(refetched.isError, undefined, JSON.stringify(refetched));
  assert.match(refetched.structuredContent.selected_text, /^0123456789abcdef/);
  const drifted = await read("kept__drift");
  assertToolError(drifted, /^digest_mismatch: /);
  // New results do not take the ids of the descriptor-only ones.
  const fresh = descriptorOf(
    await gateway.call("kept__big", { bytes: 9000 }),
  );
  assert.equal(fresh.result, "result-4");
  await gateway.client.close();

  // With --max-age, older results are not restored: result_evicted.
  await using aged = await connectGateway(servers, [
    ...args,
    "--max-age",
    "1ms",
  ]);
  const expired = await aged.call("read_result", {
    reference: descriptors["kept__big"]!.reference,
  });
  assertToolError(expired, /^result_evicted: /);
}
