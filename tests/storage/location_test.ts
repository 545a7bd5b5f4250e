// Store URLs are shown only redacted: the attack is a URL whose password
// and query secrets must never reach a message, a listing or a report.
import assert from "node:assert/strict";
import { redactUrl, scrubSecrets } from "../../lib/storage/location.ts";
import { openStorage } from "../../lib/storage/open_storage.ts";
import { loom } from "../_kit.ts";

const SECRET = "Hunter2-pw";
const URL_WITH_SECRETS =
  `postgres://loom:${SECRET}@127.0.0.1:1/loom?sslmode=disable&password=Q-${SECRET}&sslkey=/k/${SECRET}&connect_timeout=2`;

Deno.test("redactUrl() masks the password and every query value but harmless settings", () => {
  assert.equal(
    redactUrl(URL_WITH_SECRETS),
    "postgres://loom:***@127.0.0.1:1/loom?sslmode=disable&password=***&sslkey=***&connect_timeout=2",
  );
  assert.equal(redactUrl("sqlite:/var/lib/loom.db"), "sqlite:/var/lib/loom.db");
  assert.equal(redactUrl("file:/srv/sessions"), "file:/srv/sessions");
  assert.equal(redactUrl("postgres://[bad"), "postgres:***");
  assert.equal(
    scrubSecrets(`failed for ${SECRET} and Q-${SECRET}`, URL_WITH_SECRETS),
    "failed for *** and ***",
  );
});

Deno.test("no error of a store that cannot be reached carries the URL's secrets", async () => {
  const error = await openStorage(URL_WITH_SECRETS).catch((e) => e);
  assert.equal((error as { code?: string }).code, "storage_unreachable");
  assert.match((error as Error).message, /127\.0\.0\.1:1/);
  assert.equal(
    JSON.stringify({ ...error, message: error.message }).includes(SECRET),
    false,
  );
  const bad = await openStorage(`mysql://root:${SECRET}@h/db`).catch((e) => e);
  assert.equal((bad as { code?: string }).code, "storage_url_invalid");
  assert.equal((bad as Error).message.includes(SECRET), false);
});

Deno.test("loom session ls --store and loom mcp --store never print the URL's secrets", async () => {
  for (const args of [["session", "ls", "--store", URL_WITH_SECRETS]]) {
    const out = await loom(...args);
    assert.equal(out.code, 3, out.stderr);
    assert.match(out.stderr, /storage_unreachable/);
    assert.equal(
      `${out.stdout}${out.stderr}`.includes(SECRET),
      false,
      out.stderr,
    );
  }
});
