/**
 * A server of a shared MCP session to be killed: opens the session
 * `Deno.args[1]` of the store `Deno.args[0]` (root `Deno.args[2]`, key
 * `Deno.args[3]`) and stores results from four loops at once, printing
 * `acked ID SHA256` once each is durable. It never stops.
 */
import { McpSession } from "../../lib/persist/mcp_session.ts";
import { sha256Hex } from "../../lib/store/digest.ts";

const [url, name, root, keyFile] = Deno.args as [
  string,
  string,
  string,
  string,
];
const session = await McpSession.open(name, {
  root,
  keyFile,
  store: url,
  shared: true,
});
const encoder = new TextEncoder();
let n = 0;
await Promise.all([1, 2, 3, 4].map(async () => {
  for (;;) {
    const bytes = encoder.encode(`stored by the victim, ${++n}\n`.repeat(600));
    const stored = await session.admit({
      bytes,
      sha256: sha256Hex(bytes),
      origin: "inspect_files victim.txt",
      capture: "complete",
    });
    await Deno.stdout.write(
      encoder.encode(`acked ${stored.id} ${stored.sha256}\n`),
    );
  }
}));
