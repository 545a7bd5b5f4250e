/**
 * Every request body of every recorded fixture, under both policies and
 * both providers, built through the real SDKs against the strict replay
 * server, passes all of the services' request rules.
 */
import assert from "node:assert/strict";
import type { ContextPolicy } from "../../lib/briefing/briefing.ts";
import {
  checkAnthropicRequest,
  checkOpenAIRequest,
} from "../../lib/providers/request_rules.ts";
import { runSlice } from "../../lib/slice/run.ts";
import { fixtureCopy } from "../_kit.ts";
import { type FixtureName, recordingPath } from "../e2e/_workspace.ts";
import { replayServer, type ReplayWire } from "./_replay_server.ts";

const FIXTURES: readonly FixtureName[] = ["bugfix", "hostile", "long"];
const POLICIES: readonly ContextPolicy[] = ["legacy", "bounded"];
const MODELS: Readonly<Record<ReplayWire, string>> = {
  anthropic: "anthropic:claude-sonnet-4-5",
  openai: "openai:gpt-5",
};

for (const fixture of FIXTURES) {
  Deno.test(`every request of the ${fixture} recording passes the services' rules under both policies`, async (t) => {
    const calls = (JSON.parse(
      await Deno.readTextFile(recordingPath(fixture)),
    ) as { calls: unknown[] }).calls.length;
    for (const policy of POLICIES) {
      for (const wire of ["anthropic", "openai"] as const) {
        await t.step(`${policy} through ${wire}:`, async () => {
          await using copy = await fixtureCopy(fixture);
          await using server = await replayServer(
            wire,
            recordingPath(fixture),
          );
          const outcome = await runSlice(copy.request(MODELS[wire], 200), {
            contextPolicy: policy,
            baseUrl: server.url,
            env: { ANTHROPIC_API_KEY: "sk-local", OPENAI_API_KEY: "sk-local" },
            maxConsecutiveRefusals: 1_000,
          });
          // The strict server answered every call: none was refused with a 400.
          assert.notEqual(outcome.stop, "provider_error", outcome.detail);
          assert.equal(server.bodies.length, calls, outcome.detail);
          const check = wire === "anthropic"
            ? checkAnthropicRequest
            : checkOpenAIRequest;
          for (const [i, body] of server.bodies.entries()) {
            assert.deepEqual(check(JSON.parse(body)), [], `request ${i + 1}`);
          }
          // One tool, byte-identical in every request of the run.
          const tools = new Set(
            server.bodies.map((b) => {
              const parsed = JSON.parse(b);
              return JSON.stringify([parsed.tools, parsed.tool_choice]);
            }),
          );
          assert.equal(tools.size, 1);
        });
      }
    }
  });
}
