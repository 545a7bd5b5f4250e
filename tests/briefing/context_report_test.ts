import assert from "node:assert/strict";
import { ContextReportBuilder } from "../../lib/briefing/context_report.ts";
import {
  serializeTurnRequest,
  type TurnRequest,
} from "../../lib/briefing/turn_request.ts";
import { CONTEXT_REPORT_KEYS } from "../_kit.ts";
import {
  commonPrefixLength,
  neutralRequestParts,
} from "../../lib/briefing/request_prefix.ts";

const encoder = new TextEncoder();

function request(text: string): TurnRequest {
  return {
    system: [{
      type: "text",
      text: "SECRET INSTRUCTIONS",
      cache_control: { type: "ephemeral" },
    }],
    messages: [{ role: "user", content: [{ type: "text", text }] }],
    tool: {
      name: "select_action",
      description: "d",
      input_schema: { type: "object" },
    },
    tool_choice: { type: "tool", name: "select_action" },
  };
}

Deno.test("ContextReportBuilder builds exactly the closed report of wire-formats.md", () => {
  const builder = new ContextReportBuilder("bounded");
  const a = request("file text: TOP SECRET CONTENT");
  const b = request("file text: TOP SECRET CONTENT and more");
  const parts = (n: number) => ({
    tool_definitions: n,
    foundation: 1,
    focus: 2,
    topic: 3,
    convo: 4,
    descriptors: 5,
    tool_results_inline: 6,
    step: 7,
    attention: 8,
    framing: 9,
  });
  builder.addRequest(a, {
    phase: "selection",
    elapsedMs: 1.23456,
    step: 1,
    bytesByPart: parts(10),
  });
  builder.addRequest(b, {
    phase: "arguments",
    elapsedMs: 2,
    usage: { input_tokens: 100, output_tokens: 9, cache_read_tokens: 50 },
    step: 1,
    checkpoint: true,
    bytesByPart: parts(20),
  });
  // The test lines pass into the report as they are (frozen: untouched).
  const tests = Object.freeze([
    { step: 2, exit_code: 1, timed_out: false, revision: null },
    { step: 4, exit_code: 0, timed_out: false, revision: "rev-1-abcdefabcdef" },
  ].map((line) => Object.freeze(line)));
  const report = builder.build({
    stop: "completed",
    detail: "Tests validate rev-1",
  }, {
    checkpoints: 2,
    retrievals: 5,
    argumentsReparsed: 1,
    modelCalls: 2,
    elapsedMs: 12.5,
    model: "recorded:/home/me/SECRET-recording.json",
    steps: 4,
    revision: "rev-1-abcdefabcdef",
    testsValidateLatestRevision: true,
    tests,
  });
  assert.deepEqual(Object.keys(report), CONTEXT_REPORT_KEYS);
  // Measured on the parts in Anthropic's cache order: tools first.
  const joined = (r: TurnRequest) =>
    encoder.encode(neutralRequestParts(r).map((p) => p.json).join(""));
  const prefix = commonPrefixLength(joined(a), joined(b));
  // The system block's breakpoint ends after the tools part and the
  // block's content, before its marker.
  const breakpoint = (r: TurnRequest) => {
    const [tools, system] = neutralRequestParts(r);
    return encoder.encode(tools!.json).byteLength +
      encoder.encode(system!.json.split(',"cache_control"')[0]).byteLength;
  };
  assert.deepEqual(report, {
    version: 2,
    policy: "bounded",
    outcome: { stop: "completed", detail: "Tests validate rev-1" },
    requests: [
      {
        phase: "selection",
        request_bytes: encoder.encode(serializeTurnRequest(a)).byteLength,
        prefix_stable_bytes: 0,
        first_divergence: null,
        elapsed_ms: 1.235,
        final_usage: false,
        input_tokens: null,
        cache_read_tokens: null,
        cache_write_tokens: null,
        output_tokens: null,
        step: 1,
        checkpoint: false,
        bytes_by_part: parts(10),
        cache_order_bytes: joined(a).byteLength,
        cache_breakpoints: [breakpoint(a)],
      },
      {
        phase: "arguments",
        request_bytes: encoder.encode(serializeTurnRequest(b)).byteLength,
        prefix_stable_bytes: prefix,
        first_divergence: { offset: prefix, part: "message 0 block 0" },
        elapsed_ms: 2,
        final_usage: true,
        input_tokens: 100,
        cache_read_tokens: 50,
        cache_write_tokens: null,
        output_tokens: 9,
        step: 1,
        checkpoint: true,
        bytes_by_part: parts(20),
        cache_order_bytes: joined(b).byteLength,
        cache_breakpoints: [breakpoint(b)],
      },
    ],
    checkpoints: 2,
    retrievals: 5,
    arguments_reparsed: 1,
    model_calls: 2,
    elapsed_ms: 12.5,
    // A recording is named, not located.
    model: "recorded",
    steps: 4,
    revision: "rev-1-abcdefabcdef",
    tests_validate_latest_revision: true,
    tests,
  });
  assert.ok(
    prefix >
      encoder.encode('{"type":"text","text":"SECRET INSTRUCTIONS"}').byteLength,
  );
  const json = JSON.stringify(report);
  assert.ok(
    !json.includes("SECRET"),
    "the report contains no prompt or file text",
  );
});

Deno.test("ContextReportBuilder counts model calls from requests by default and reports partial usage", () => {
  const builder = new ContextReportBuilder("legacy");
  builder.addRequest(request("x"), {
    phase: "selection",
    usage: { input_tokens: 3 },
    finalUsage: false,
  });
  const report = builder.build({
    stop: "provider_error",
    detail: "Provider returned HTTP 500",
  });
  assert.equal(report.model_calls, 1);
  assert.equal(report.requests[0]?.final_usage, false);
  assert.equal(report.requests[0]?.input_tokens, 3);
  assert.ok(report.elapsed_ms >= 0);
});

Deno.test("commonPrefixLength() compares unaligned and aligned bytes alike", () => {
  const base = encoder.encode("a".repeat(1000) + "b");
  for (const cut of [0, 1, 3, 4, 5, 999, 1000]) {
    const other = new Uint8Array(base);
    if (cut < other.length) other[cut] = 0x7a;
    assert.equal(commonPrefixLength(base, other), cut);
    assert.equal(
      commonPrefixLength(base.subarray(1), other.subarray(1)),
      cut === 0 ? base.length - 1 : cut - 1,
    );
  }
  assert.equal(commonPrefixLength(base, base.subarray(0, 10)), 10);
});

Deno.test("first_divergence names the part of the provider body where a request first differs", () => {
  const builder = new ContextReportBuilder("bounded");
  const parts = (tools: string, system: string, block: string) => [
    { part: "tools", json: tools },
    { part: "system block 0", json: system },
    { part: "message 0 block 0", json: block },
  ];
  const r = request("x");
  builder.addRequest(r, { phase: "selection", parts: parts("T", "S", "AB") });
  // Each request against the one before it.
  const cases = [{
    name: "same tools and system, block differs at its fourth byte",
    phase: "arguments",
    parts: parts("T", "S", "AC"),
    divergence: { offset: 3, part: "message 0 block 0" },
    stable: 3,
  }, {
    name: "tools differ",
    phase: "selection",
    parts: parts("U", "S", "AC"),
    divergence: { offset: 0, part: "tools" },
  }, {
    name: "the system block differs",
    phase: "selection",
    parts: parts("U", "Sé", "AC"),
    divergence: { offset: 2, part: "system block 0" },
  }, {
    name: "a block is added",
    phase: "selection",
    parts: [...parts("U", "Sé", "AC"), {
      part: "message 0 block 1",
      json: "D",
    }],
    divergence: { offset: 6, part: "message 0 block 1" },
  }, {
    name: "the body ends earlier",
    phase: "selection",
    parts: parts("U", "Sé", "AC"),
    divergence: { offset: 6, part: "end" },
  }] as const;
  for (const c of cases) {
    const measured = builder.addRequest(r, { phase: c.phase, parts: c.parts });
    assert.deepEqual(measured.first_divergence, c.divergence, c.name);
    if ("stable" in c) assert.equal(measured.prefix_stable_bytes, c.stable);
  }
});
