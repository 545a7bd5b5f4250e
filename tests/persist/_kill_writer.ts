/**
 * A session writer to be killed: creates the session in `Deno.args[0]`
 * (workspace `Deno.args[1]`, key `Deno.args[2]`; with a store URL in
 * `Deno.args[3]`, the session of that name in it) and saves one step after
 * another, each with a test result large enough to go to `tool-results/`,
 * printing `acked N` once step N's save has returned. It never stops.
 */
import { saveSnapshot, SessionStore } from "../../lib/persist/session_store.ts";
import { EndlessRun } from "./_session.ts";

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
  run: EndlessRun.RUN,
});
const run = new EndlessRun();
const encoder = new TextEncoder();
for (let step = 1;; step += 1) {
  await saveSnapshot(store, await run.step(step));
  await Deno.stdout.write(encoder.encode(`acked ${step}\n`));
}
