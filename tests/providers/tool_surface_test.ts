/**
 * The tool surface as the official SDKs send it: every request of a run
 * carries byte-identical tools and tool_choice, under both policies and both
 * wire formats, captured on a local replay server.
 */
import assert from "node:assert/strict";
import { runSlice } from "../../lib/slice/run.ts";
import {
  checkCommand,
  type FixtureName,
  INTENTS,
  prepareWorkspace,
  recordingPath,
} from "../e2e/_workspace.ts";
import { replayServer, type ReplayWire } from "./_replay_server.ts";

const MODEL: Readonly<Record<ReplayWire, string>> = {
  anthropic: "anthropic:claude-sonnet-4-5",
  openai: "openai:gpt-4.1",
};

/** Replays a fixture through a live provider; returns the raw bodies. */
export async function replayBodies(
  fixture: FixtureName,
  wire: ReplayWire,
  policy: "legacy" | "bounded",
  maxSteps: number,
): Promise<string[]> {
  const prepared = await prepareWorkspace(fixture);
  try {
    await using server = await replayServer(wire, recordingPath(fixture));
    const outcome = await runSlice({
      intent: INTENTS[fixture],
      workspace: prepared.workspace,
      test: { command: checkCommand(), timeoutMs: 60_000 },
      maxSteps,
      provider: MODEL[wire],
    }, {
      contextPolicy: policy,
      baseUrl: server.url,
      env: { ANTHROPIC_API_KEY: "sk-test", OPENAI_API_KEY: "sk-test" },
    });
    // The hostile recording ends on a ninth lookup, by design.
    assert.equal(
      outcome.stop,
      fixture === "hostile" ? "suspended" : "completed",
      outcome.detail,
    );
    return [...server.bodies];
  } finally {
    await prepared.cleanup();
  }
}

function toolParts(body: string): string {
  const json = JSON.parse(body) as Record<string, unknown>;
  return JSON.stringify([json["tools"], json["tool_choice"]]);
}

for (const fixture of ["bugfix", "hostile"] as const) {
  Deno.test(`every request of a ${fixture} run sends the same tools and tool_choice`, async (t) => {
    for (const wire of ["anthropic", "openai"] as const) {
      for (const policy of ["legacy", "bounded"] as const) {
        await t.step(`${wire}, ${policy}`, async () => {
          const bodies = await replayBodies(fixture, wire, policy, 30);
          assert.ok(bodies.length > 10, `only ${bodies.length} requests`);
          const first = toolParts(bodies[0]!);
          for (const [i, body] of bodies.entries()) {
            assert.equal(toolParts(body), first, `request ${i} differs`);
          }
          // Both stages and every lookup go through the one tool.
          const tools = JSON.parse(first)[0] as unknown[];
          assert.equal(tools.length, 1);
          assert.match(first, /"loom_step"/);
        });
      }
    }
  });
}
