/**
 * One of two racers: reads the journal of session `Deno.args[1]` in store
 * `Deno.args[0]`, prints `ready`, waits for a line on standard input, then
 * appends one record sealed on what it read (`by` = `Deno.args[3]`) and
 * prints `won WHO` or `conflict CODE`.
 */
import { openStorage } from "../../lib/storage/open_storage.ts";
import { keyOf } from "./_conformance.ts";
import { sealRecord } from "../../lib/persist/_journal.ts";

const [url, name, keyFile, who] = Deno.args as [string, string, string, string];
const key = await keyOf(keyFile);
const store = await openStorage(url);
const journal = store.session(name).journal;
const read = await journal.read();
const last = JSON.parse(read.records.at(-1)!) as { mac: string };
const sealed = sealRecord(key, last.mac, {
  seq: read.end,
  type: "step",
  by: who,
});
await Deno.stdout.write(new TextEncoder().encode("ready\n"));
for await (const _ of Deno.stdin.readable) break;
let said: string;
try {
  await journal.append(read.end, [sealed.text]);
  said = `won ${who}`;
} catch (error) {
  said = `conflict ${(error as { code?: string }).code}`;
}
await store.close();
await Deno.stdout.write(new TextEncoder().encode(`${said}\n`));
