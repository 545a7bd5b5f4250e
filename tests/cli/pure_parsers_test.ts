// Every command's parse…Arguments function runs without any permission: it
// reads no file, variable or network, so a subprocess granted nothing parses
// each command's full set of flags (effects would throw NotCapable there).
import assert from "node:assert/strict";
import { join } from "node:path";
import { deno, REPO_ROOT, tempDir } from "../_kit.ts";

const cli = (name: string) =>
  new URL(`../../lib/cli/${name}.ts`, import.meta.url).href;

const PROBE = `
import { parseMainArguments } from "${cli("main")}";
import { parseRunArguments } from "${cli("run")}";
import { parseCostArguments } from "${cli("cost")}";
import { parseDemoArguments } from "${cli("demo")}";
import { parseInspectArguments } from "${cli("inspect")}";
import { parseRenderArguments } from "${cli("render")}";
import { parseReportArguments } from "${cli("report")}";
import { parseSelectArguments } from "${cli("select")}";
import { parseSessionArguments } from "${cli("session")}";
const slice = "--workspace /nonexistent/ws --intent-file /nonexistent/i.txt"
  + " --test deno --test-timeout 1m --max-steps 3 --context-policy bounded";
const parsed = [
  parseMainArguments("help run".split(" ")),
  parseRunArguments((slice + " --model recorded:/nonexistent/r.json"
    + " --base-url http://127.0.0.1:1/v1 --model-timeout 1s --run-timeout 1m"
    + " --context-report /nonexistent/r.json --record /nonexistent/rec.json"
    + " --session /nonexistent/s --persist-config /nonexistent/p.json"
    + " --persist-threshold tests.run=9 --test-env HOME --test-network"
    + " --protect a/** --edit-test-files --json").split(" ")),
  parseRunArguments(("--resume /nonexistent/s --max-steps 9"
    + " --test-env HOME --persist-threshold tests.run=9").split(" ")),
  parseCostArguments((slice + " --model openai:gpt-4.1 --recording /r.json"
    + " --prices /nonexistent/p.json --call-interval 2s --roll-batch 2"
    + " --retire-target 9").split(" ")),
  parseDemoArguments("--context-report /nonexistent/r.json".split(" ")),
  parseInspectArguments("/nonexistent/f --partial".split(" ")),
  parseRenderArguments("/nonexistent/c.yaml --format anthropic --breakpoints focus --ttl 1h".split(" ")),
  parseReportArguments("--markdown /nonexistent/r.json".split(" ")),
  parseSelectArguments("/nonexistent/f --pointer /a --json".split(" ")),
  parseSessionArguments("show /nonexistent/s --verify".split(" ")),
];
console.log(JSON.stringify(parsed.map((p) => p.kind ?? "arguments")));
`;

Deno.test("every parse…Arguments function runs with no permission at all", async () => {
  await using dir = await tempDir();
  const probe = join(dir.path, "probe.ts");
  await Deno.writeTextFile(probe, PROBE);
  // No --allow-* flag: any read, env or net access throws NotCapable.
  const out = await deno(
    "run",
    "--no-prompt",
    "--config",
    join(REPO_ROOT, "deno.json"),
    probe,
  );
  assert.deepEqual(JSON.parse(out), [
    "command",
    "run",
    "resume",
    "arguments",
    "arguments",
    "arguments",
    "arguments",
    "arguments",
    "arguments",
    "arguments",
  ]);
});
