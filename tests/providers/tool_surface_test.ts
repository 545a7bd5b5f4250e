/**
 * The tool surface as the official SDKs send it: every request of a run
 * carries byte-identical tools and tool_choice, under both policies and both
 * wire formats, captured on a local replay server.
 */
import assert from "node:assert/strict";
import type { ContextReport } from "../../lib/briefing/context_report.ts";
import { providerRequestParts } from "../../lib/providers/request_parts.ts";
import { runSlice } from "../../lib/slice/run.ts";
import { replayRecording } from "../../lib/cost/replay.ts";
import {
  type FixtureName,
  fixtureReplay,
  recordingPath,
} from "../e2e/_workspace.ts";
import { fixtureCopy } from "../_kit.ts";
import { replayServer, type ReplayWire } from "./_replay_server.ts";
import type { ContextPolicy } from "../../lib/briefing/briefing.ts";
import { commonPrefixLength } from "../../lib/briefing/request_prefix.ts";

const encoder = new TextEncoder();

const MODEL: Readonly<Record<ReplayWire, string>> = {
  anthropic: "anthropic:claude-sonnet-4-5",
  openai: "openai:gpt-4.1",
};

/** Replays a fixture through a live provider; returns the raw bodies and the report. */
async function replayBodies(
  fixture: FixtureName,
  wire: ReplayWire,
  policy: ContextPolicy,
  maxSteps: number,
): Promise<{ bodies: string[]; report: ContextReport }> {
  await using copy = await fixtureCopy(fixture);
  const contextReport = `${copy.root}/report.json`;
  await using server = await replayServer(wire, recordingPath(fixture));
  const outcome = await runSlice(copy.request(MODEL[wire], maxSteps), {
    contextPolicy: policy,
    contextReport,
    baseUrl: server.url,
    env: { ANTHROPIC_API_KEY: "sk-test", OPENAI_API_KEY: "sk-test" },
  });
  // The hostile recording ends on a ninth lookup, by design.
  assert.equal(
    outcome.stop,
    fixture === "hostile" ? "suspended" : "completed",
    outcome.detail,
  );
  return {
    bodies: [...server.bodies],
    report: JSON.parse(await Deno.readTextFile(contextReport)),
  };
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
          const { bodies, report } = await replayBodies(
            fixture,
            wire,
            policy,
            30,
          );
          assert.ok(bodies.length > 10, `only ${bodies.length} requests`);
          const first = toolParts(bodies[0]!);
          for (const [i, body] of bodies.entries()) {
            assert.equal(toolParts(body), first, `request ${i} differs`);
          }
          // Both stages and every lookup go through the one tool.
          const tools = JSON.parse(first)[0] as unknown[];
          assert.equal(tools.length, 1);
          assert.match(first, /"loom_step"/);
          // The report measures the bodies as sent, in cache order, and
          // after the first request they never diverge inside the tools.
          assert.equal(report.requests.length, bodies.length);
          const joined = bodies.map((b) =>
            encoder.encode(
              providerRequestParts(wire, JSON.parse(b)).map((p) => p.json)
                .join(""),
            )
          );
          for (const [i, line] of report.requests.entries()) {
            if (i === 0) {
              assert.equal(line.first_divergence, null);
              continue;
            }
            const offset = commonPrefixLength(joined[i - 1]!, joined[i]!);
            assert.equal(line.prefix_stable_bytes, offset, `request ${i}`);
            assert.equal(line.first_divergence?.offset, offset);
            assert.notEqual(line.first_divergence?.part, "tools");
          }
        });
      }
    }
  });
}

Deno.test("the offline replay of loom cost builds exactly the bodies the SDKs send", async (t) => {
  for (const wire of ["anthropic", "openai"] as const) {
    await t.step(wire, async () => {
      const { bodies } = await replayBodies("bugfix", wire, "bounded", 30);
      const offline = await replayRecording({
        ...fixtureReplay("bugfix", 30),
        policy: "bounded",
        wire,
        model: MODEL[wire].slice(wire.length + 1),
      });
      assert.equal(offline.calls.length, bodies.length);
      for (const [i, call] of offline.calls.entries()) {
        assert.deepEqual(call.body, JSON.parse(bodies[i]!), `request ${i}`);
      }
    });
  }
});
