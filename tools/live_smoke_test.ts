/**
 * The live smoke suite: a short real slice (the bug-fix fixture, at most 8
 * steps, both context policies) through `anthropic:` and `openai:` against
 * the real services, for the people who have keys. It is not part of
 * `deno task test` or `.ci/run` (which scan lib/ and tests/ only); run it
 * with
 *
 * ```sh
 * ANTHROPIC_API_KEY=… OPENAI_API_KEY=… deno task test:live
 * ```
 *
 * A provider whose key is not set is skipped with one loud line. The models
 * default to `claude-haiku-4-5` and `gpt-5-mini`; set
 * `LOOM_LIVE_ANTHROPIC_MODEL` / `LOOM_LIVE_OPENAI_MODEL` to use others. What
 * it proves: every request of the run is one the service accepts (no HTTP
 * 400, no `provider_contract`), and the run ends by its own rules
 * (completed, or the step budget or refusals), not by a provider failure.
 * See docs/cost.md for what a run costs.
 */
import assert from "node:assert/strict";
import type { ContextPolicy } from "../lib/briefing/briefing.ts";
import type { ContextReport } from "../lib/briefing/context_report.ts";
import { runSlice } from "../lib/slice/run.ts";
import { fixtureCopy } from "../tests/_kit.ts";

const PROVIDERS = [
  {
    name: "anthropic",
    key: "ANTHROPIC_API_KEY",
    model: Deno.env.get("LOOM_LIVE_ANTHROPIC_MODEL") ?? "claude-haiku-4-5",
  },
  {
    name: "openai",
    key: "OPENAI_API_KEY",
    model: Deno.env.get("LOOM_LIVE_OPENAI_MODEL") ?? "gpt-5-mini",
  },
] as const;

const MAX_STEPS = 8;

for (const provider of PROVIDERS) {
  const key = Deno.env.get(provider.key) ?? "";
  if (key === "") {
    console.error(
      `\n!!! SKIPPED live ${provider.name}: ${provider.key} is not set, so no request was made to ${provider.name}:${provider.model} !!!\n`,
    );
  }
  Deno.test({
    name:
      `a real ${provider.name}:${provider.model} slice on the bug-fix fixture is accepted request by request under both policies`,
    ignore: key === "",
    fn: async (t) => {
      for (const policy of ["legacy", "bounded"] as ContextPolicy[]) {
        await t.step(policy, async () => {
          await using copy = await fixtureCopy("bugfix");
          const reportPath = `${copy.root}/report.json`;
          const outcome = await runSlice(
            copy.request(`${provider.name}:${provider.model}`, MAX_STEPS),
            {
              contextPolicy: policy,
              contextReport: reportPath,
              onProgress: (line) => console.error(line),
            },
          );
          const report = JSON.parse(
            await Deno.readTextFile(reportPath),
          ) as ContextReport;
          const input = report.requests.reduce(
            (n, r) => n + (r.input_tokens ?? 0),
            0,
          );
          const cached = report.requests.reduce(
            (n, r) => n + (r.cache_read_tokens ?? 0),
            0,
          );
          const output = report.requests.reduce(
            (n, r) => n + (r.output_tokens ?? 0),
            0,
          );
          console.error(
            `live ${provider.name}:${provider.model} ${policy}: ${outcome.stop} after ${outcome.steps} steps, ${outcome.model_calls} calls, input ${input} tokens (cache reads ${cached}), output ${output}, reparsed ${report.arguments_reparsed}`,
          );
          assert.notEqual(outcome.stop, "provider_error", outcome.detail);
          assert.ok(
            ["completed", "step_budget", "refused"].includes(outcome.stop),
            `${outcome.stop}: ${outcome.detail}`,
          );
          assert.ok(outcome.model_calls > 0);
        });
      }
    },
  });
}
