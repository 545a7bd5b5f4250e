/**
 * Imported by tests that start `loom` with sessions: unless the test task
 * already chose one, the session key goes to a temp file of this process,
 * never to the real `~/.config/loom/session.key`. It lands in the run's root
 * (`_run_root.ts`), which goes when the test process ends.
 */
import "./_run_root.ts";

if (!Deno.env.get("LOOM_SESSION_KEY_FILE")) {
  Deno.env.set(
    "LOOM_SESSION_KEY_FILE",
    `${await Deno.makeTempDir({ prefix: "loom-key-" })}/session.key`,
  );
}
