import assert from "node:assert/strict";
import { createProvider } from "../../lib/providers/create_provider.ts";
import { RecordedProvider } from "../../lib/providers/recorded_provider.ts";
import { argumentsCall, selectionCall } from "./_requests.ts";
import { providerError } from "./_contract.ts";
import { tempDir } from "../_kit.ts";

const TWO_CALLS = {
  format: "loom-recording/1",
  calls: [
    {
      phase: "selection",
      tool: "select_action",
      arguments: { action: "repository.inspect" },
      usage: { input_tokens: 1200, output_tokens: 9 },
    },
    {
      phase: "arguments",
      tool: "action_arguments",
      arguments: { paths: ["README.md"] },
    },
  ],
};

/** A temporary recording file holding `content` (JSON unless a string), removed when disposed. */
async function recordingFile(
  content: unknown,
): Promise<AsyncDisposable & { readonly path: string }> {
  const dir = await tempDir();
  const path = `${dir.path}/recording.json`;
  await Deno.writeTextFile(
    path,
    typeof content === "string" ? content : JSON.stringify(content),
  );
  return { path, [Symbol.asyncDispose]: dir[Symbol.asyncDispose] };
}

Deno.test("a recorded provider replays calls in order with their usage", async () => {
  await using recording = await recordingFile(TWO_CALLS);
  const { path } = recording;
  const provider = createProvider(`recorded:${path}`);
  assert.ok(provider instanceof RecordedProvider);
  assert.equal(provider.spec, `recorded:${path}`);
  assert.equal(provider.callsUsed, 0);
  assert.equal(provider.callsTotal, 2);

  const first = await provider.call(selectionCall());
  assert.deepEqual(first, {
    arguments: { action: "repository.inspect" },
    usage: {
      input_tokens: 1200,
      output_tokens: 9,
      cache_read_tokens: null,
      cache_write_tokens: null,
    },
    final_usage: true,
  });
  assert.equal(provider.callsUsed, 1);

  const second = await provider.call(argumentsCall());
  assert.deepEqual(second.arguments, { paths: ["README.md"] });
  assert.deepEqual(second.usage, {
    input_tokens: null,
    output_tokens: null,
    cache_read_tokens: null,
    cache_write_tokens: null,
  });
  assert.equal(provider.callsUsed, 2);
});

Deno.test("a recorded provider hands out copies, so callers cannot alter the recording", async () => {
  const recording = {
    ...TWO_CALLS,
    calls: [TWO_CALLS.calls[0], TWO_CALLS.calls[0]],
  };
  const provider = RecordedProvider.parse(JSON.stringify(recording), {
    source: "mem",
  });
  const first = await provider.call(selectionCall());
  (first.arguments as { action: string }).action = "tampered";
  const second = await provider.call(selectionCall());
  assert.deepEqual(second.arguments, { action: "repository.inspect" });
});

Deno.test("a recorded provider fails explicitly when phase or tool differ", async (t) => {
  await t.step(
    "a phase mismatch names the call index, expected and recorded",
    async () => {
      await using recording = await recordingFile(TWO_CALLS);
      const { path } = recording;
      const provider = createProvider(`recorded:${path}`) as RecordedProvider;
      await assert.rejects(
        provider.call(argumentsCall()),
        providerError(
          "recording_mismatch",
          /at call 0: expected arguments\/action_arguments, recorded selection\/select_action/,
        ),
      );
      assert.equal(
        provider.callsUsed,
        0,
        "a mismatched call is not consumed",
      );
    },
  );

  await t.step(
    "a tool mismatch with the right phase is a mismatch too",
    async () => {
      const recording = {
        format: "loom-recording/1",
        calls: [{
          phase: "selection",
          tool: "action_arguments",
          arguments: {},
        }],
      };
      const provider = RecordedProvider.parse(JSON.stringify(recording), {
        source: "r.json",
      });
      await assert.rejects(
        provider.call(selectionCall()),
        providerError(
          "recording_mismatch",
          /r\.json .*call 0: expected selection\/select_action, recorded selection\/action_arguments/,
        ),
      );
    },
  );
});

Deno.test("a recorded provider fails explicitly when the recording runs out", async () => {
  await using recording = await recordingFile(TWO_CALLS);
  const { path } = recording;
  const provider = createProvider(`recorded:${path}`);
  await provider.call(selectionCall());
  await provider.call(argumentsCall());
  await assert.rejects(
    provider.call(selectionCall()),
    providerError("recording_exhausted", /asked for call 2 .*holds 2 calls/),
  );
});

Deno.test("startAtCall resumes a recording at the next unused call", async (t) => {
  await using recording = await recordingFile(TWO_CALLS);
  const { path } = recording;
  await t.step("calls before the start are skipped", async () => {
    const provider = createProvider(`recorded:${path}`, {
      startAtCall: 1,
    }) as RecordedProvider;
    assert.equal(provider.callsUsed, 1);
    const reply = await provider.call(argumentsCall());
    assert.deepEqual(reply.arguments, { paths: ["README.md"] });
    assert.equal(provider.callsUsed, 2);
  });

  await t.step(
    "starting at the end leaves the recording exhausted",
    async () => {
      const provider = createProvider(`recorded:${path}`, { startAtCall: 2 });
      await assert.rejects(
        provider.call(selectionCall()),
        providerError("recording_exhausted"),
      );
    },
  );

  await t.step(
    "a start beyond the end or not an integer is refused at creation",
    () => {
      for (const startAtCall of [3, -1, 1.5]) {
        assert.throws(
          () => createProvider(`recorded:${path}`, { startAtCall }),
          providerError("bad_option", /holds 2 calls/),
        );
      }
    },
  );
});

Deno.test("an invalid recording fails at creation naming the file and the offending key", async (t) => {
  const cases: [string, unknown, RegExp][] = [
    [
      "an unknown top-level key",
      { ...TWO_CALLS, extra: true },
      /unknown key extra/,
    ],
    [
      "an unknown key in a call",
      {
        format: "loom-recording/1",
        calls: [{ ...TWO_CALLS.calls[0], note: "x" }],
      },
      /unknown key calls\[0\]\.note/,
    ],
    [
      "an unknown usage counter",
      {
        format: "loom-recording/1",
        calls: [{
          ...TWO_CALLS.calls[1],
          usage: { input_tokens: 1, tokens: 2 },
        }],
      },
      /unknown key calls\[0\]\.usage\.tokens/,
    ],
    ["a wrong format", { ...TWO_CALLS, format: "loom-recording/2" }, /format/],
    [
      "a missing arguments key",
      {
        format: "loom-recording/1",
        calls: [{ phase: "selection", tool: "select_action" }],
      },
      /missing key calls\[0\]\.arguments/,
    ],
    [
      "an unknown phase",
      {
        format: "loom-recording/1",
        calls: [{ ...TWO_CALLS.calls[1], phase: "planning" }],
      },
      /calls\[0\]\.phase/,
    ],
    [
      "a negative counter",
      {
        format: "loom-recording/1",
        calls: [{ ...TWO_CALLS.calls[1], usage: { output_tokens: -1 } }],
      },
      /calls\[0\]\.usage\.output_tokens/,
    ],
    [
      "a missing calls array",
      { format: "loom-recording/1" },
      /missing key calls/,
    ],
    ["text that is not JSON", "{not json", /not valid JSON/],
  ];
  for (const [name, content, pattern] of cases) {
    await t.step(name, async () => {
      await using recording = await recordingFile(content);
      const { path } = recording;
      assert.throws(
        () => createProvider(`recorded:${path}`),
        (error: unknown) => {
          providerError("recording_invalid", pattern)(error);
          assert.ok(
            (error as Error).message.includes(path),
            "names the file",
          );
          return true;
        },
      );
      return Promise.resolve();
    });
  }

  await t.step("a file that does not exist", () => {
    assert.throws(
      () => createProvider("recorded:/nonexistent/loom/recording.json"),
      providerError(
        "recording_invalid",
        /Cannot read recording \/nonexistent\/loom\/recording\.json/,
      ),
    );
  });
});

Deno.test("usage counters may be null or absent in a recording", async () => {
  const recording = {
    format: "loom-recording/1",
    calls: [{
      ...TWO_CALLS.calls[0],
      usage: {
        input_tokens: null,
        cache_read_tokens: 7,
        cache_write_tokens: 3,
      },
    }],
  };
  const provider = RecordedProvider.parse(JSON.stringify(recording), {
    source: "r",
  });
  const reply = await provider.call(selectionCall());
  assert.deepEqual(reply.usage, {
    input_tokens: null,
    output_tokens: null,
    cache_read_tokens: 7,
    cache_write_tokens: 3,
  });
});
