/**
 * A session writer to be killed: creates the session in `Deno.args[0]`
 * (workspace `Deno.args[1]`, key `Deno.args[2]`; with a store URL in
 * `Deno.args[3]`, the session of that name in it) and saves one step after
 * another, each with a test result large enough to go to `tool-results/`,
 * printing `acked N` once step N's save has returned. It never stops.
 */
import { ResultStore } from "../../lib/store/result_store.ts";
import { saveSnapshot, SessionStore } from "../../lib/persist/session_store.ts";
import type { ActionRecord } from "../../lib/briefing/report.ts";
import { RUN, snapshotOf, testsRecord } from "./_session.ts";

const [root, workspace, keyFile, url] = Deno.args as [
  string,
  string,
  string,
  string | undefined,
];
const store = await SessionStore.create(root, {
  workspace,
  keyFile,
  ...(url === undefined ? {} : { store: url }),
  run: { ...RUN, maxSteps: 1_000_000 },
});
const results = new ResultStore({
  maxResults: 1_000_000,
  maxTotalBytes: 2 ** 40,
});
const records: ActionRecord[] = [];
const encoder = new TextEncoder();
for (let step = 1;; step += 1) {
  const output = await results.put(`step ${step}\n`.repeat(4_000), {
    origin: "tests.run x",
    capture: "complete",
  });
  records.push(testsRecord(step, output, step % 2));
  await saveSnapshot(store, snapshotOf(results, records));
  await Deno.stdout.write(encoder.encode(`acked ${step}\n`));
}
