/**
 * Run by `disk_full_test.ts` inside a private mount namespace whose
 * `Deno.args[0]` is a small tmpfs: a gateway (the real CLI, over stdio)
 * with its session in `file:DIR/store` stores answers of 200 KB until the
 * disk is full, then reads back everything it acknowledged, and the
 * session is verified as a new reader would. Prints one JSON summary.
 */
import "../_session_key.ts";
import {
  connectGateway,
  denoEntry,
  type Descriptor,
  descriptorOf,
  FAULT,
  serversFile,
} from "../_kit/mcp.ts";
import { McpSession } from "../../lib/persist/mcp_session.ts";

const [mount, home] = Deno.args as [string, string];
const servers = await serversFile(home, {
  fault: { ...denoEntry(FAULT), persist: true },
});
const store = `file:${mount}/store`;
const acked: Descriptor[] = [];
let full: unknown;
let readBack = 0;
let smallAfter = false;
{
  await using gateway = await connectGateway(servers, [
    "--store",
    store,
    "--session",
    "team",
  ]);
  for (let i = 0; i < 200 && full === undefined; i += 1) {
    const answer = await gateway.call("fault__big", {
      bytes: 200_000 + 59 * i,
    });
    const descriptor = JSON.parse(answer.content[0].text);
    if (descriptor.result_unavailable !== undefined || answer.isError) {
      full = answer.isError ? answer.content[0].text : descriptor;
    } else acked.push(descriptorOf(answer));
  }
  for (const descriptor of acked) {
    const read = await gateway.call("read_result", {
      reference: {
        ...descriptor.reference,
        select: { kind: "bytes", start: 0, end: 16 },
      },
    });
    if (read.structuredContent?.selected_text === "0123456789abcdef") {
      readBack += 1;
    }
  }
  smallAfter = (await gateway.call("fault__small", {})).isError !== true;
}
const verified = await McpSession.verify("team", {
  root: servers,
  store,
  keyFile: Deno.env.get("LOOM_SESSION_KEY_FILE")!,
});
const digests = new Map(verified.map((r) => [r.id, r.sha256]));
const leftovers: string[] = [];
for await (const entry of Deno.readDir(`${mount}/store/team`)) {
  if (entry.name.startsWith(".tmp-")) leftovers.push(entry.name);
}
for await (const entry of Deno.readDir(`${mount}/store/team/tool-results`)) {
  if (entry.name.startsWith(".tmp-")) leftovers.push(entry.name);
}
console.log(JSON.stringify({
  acked: acked.length,
  full,
  readBack,
  smallAfter,
  verified: acked.filter((d) => digests.get(d.result) === d.sha256).length,
  leftovers,
}));
