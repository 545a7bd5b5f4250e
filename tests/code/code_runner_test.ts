import assert from "node:assert/strict";
import { CodeError } from "../../lib/code/code_error.ts";
import { HAVE_BWRAP } from "../security/_bwrap.ts";
import {
  alive,
  attempt,
  childrenMarked,
  CodeRunner,
  recordingBridge,
  toolNames,
} from "./_code_kit.ts";

// The behaviour of runs, confined when bubblewrap works here (CI requires
// it); the attacks are in attacks_test.ts.
const CONFINED = { unconfined: !HAVE_BWRAP };

Deno.test("CodeRunner runs TypeScript as the body of an async function and answers JSON, logs and calls", async (t) => {
  await using runner = await CodeRunner.start(CONFINED);
  assert.equal(runner.confined, HAVE_BWRAP);

  await t.step(
    "the returned value, types stripped; nothing returned is null",
    async () => {
      const outcome = await runner.run(
        "interface Row { n: number }\nconst rows: Row[] = [{ n: 2 }, { n: 1 }];\nreturn rows.sort((a, b) => a.n - b.n);",
        { tools: [], bridge: recordingBridge() },
      );
      assert.deepEqual(outcome.result, [{ n: 1 }, { n: 2 }]);
      assert.equal(outcome.resultJson, '[{"n":1},{"n":2}]');
      assert.equal(outcome.calls, 0);
      assert.ok(outcome.ms > 0);
      assert.equal(
        (await attempt(runner, "const x = 1;") as { result: unknown }).result,
        null,
      );
    },
  );

  await t.step(
    "console output in order, warnings and errors marked",
    async () => {
      const run = await attempt(
        runner,
        "console.log('a', 1, { b: [2] }); console.info('i'); console.warn('w'); console.error(new Error('e').message); console.debug('d');",
      );
      assert.deepEqual(run.logs, [
        "a 1 { b: [ 2 ] }",
        "i",
        "[warn] w",
        "[error] e",
        "d",
      ]);
    },
  );

  await t.step(
    "tools.<server>.<tool> and callTool reach the bridge with the original names",
    async () => {
      const bridge = recordingBridge({
        "my-fs/read-file": (args) => ({
          content: [{ type: "text", text: `read ${args.path}` }],
        }),
        "my-fs/stat": () => ({
          content: [{ type: "text", text: '{"size": 3}' }],
          structuredContent: { size: 3 },
        }),
        "my-fs/list": () => ({
          content: [{ type: "text", text: "[1, 2]" }, {
            type: "image",
            data: "AA==",
          }],
        }),
      });
      const tools = toolNames(["my-fs/read-file", "my-fs/stat", "my-fs/list"]);
      const outcome = await runner.run(
        `const a = await tools.my_fs.read_file({ path: "x" });
       const b = await callTool("my-fs", "stat", {});
       const c = await tools.my_fs.list();
       return [text(a), json(b), json(c), text(c)];`,
        { tools, bridge },
      );
      assert.deepEqual(outcome.result, [
        "read x",
        { size: 3 },
        [1, 2],
        "[1, 2]",
      ]);
      assert.equal(outcome.calls, 3);
      assert.deepEqual(outcome.called, [["my-fs", "read-file"], [
        "my-fs",
        "stat",
      ], ["my-fs", "list"]]);
      assert.deepEqual(bridge.calls.map((c) => c.args), [
        { path: "x" },
        {},
        {},
      ]);
    },
  );

  await t.step(
    "json() says why when a result is neither structured nor JSON",
    async () => {
      const bridge = recordingBridge({
        "s/t": () => ({ content: [{ type: "text", text: "not json" }] }),
      });
      const run = await attempt(runner, "return json(await tools.s.t());", {
        bridge,
        tools: toolNames(["s/t"]),
      });
      assert.equal(run.ok, false);
      assert.match(
        (run as { message: string }).message,
        /json\(\): the result has no structuredContent and its text is not JSON/,
      );
    },
  );

  await t.step(
    "an unknown server or tool names the ones there are",
    async () => {
      const run = await attempt(runner, "return await tools.fs.nope();", {
        tools: toolNames(["fs/read", "fs/write"]),
      });
      assert.match(
        (run as { message: string }).message,
        /tools\.fs\.nope does not exist; tools\.fs has read, write/,
      );
    },
  );

  await t.step(
    "ToolError: an isError result throws with server, tool and result; a failed call too, with its code",
    async () => {
      const bridge = recordingBridge({
        "s/fails": () => ({
          content: [{ type: "text", text: "no such file" }],
          isError: true,
        }),
      });
      const outcome = await runner.run(
        `const seen = [];
       for (const call of [() => tools.s.fails({}), () => callTool("s", "missing", {})]) {
         try { await call(); } catch (e) {
           seen.push([e instanceof ToolError, e.name, e.server, e.tool, e.message, e.code ?? null, e.result.isError]);
         }
       }
       return seen;`,
        { tools: toolNames(["s/fails"]), bridge },
      );
      assert.deepEqual(outcome.result, [
        [true, "ToolError", "s", "fails", "no such file", null, true],
        [
          true,
          "ToolError",
          "s",
          "missing",
          "No tool s/missing",
          "unknown_tool",
          true,
        ],
      ]);
    },
  );

  await t.step(
    "an uncaught error is code_error with its name, message and stack lines numbered as in the code",
    async () => {
      const run = await attempt(
        runner,
        "const a = 1;\n\nfunction f() {\n  throw new RangeError('deep');\n}\nf();",
        {},
      );
      assert.equal(run.ok, false);
      const { code, message } = run as { code: string; message: string };
      assert.equal(code, "code_error");
      assert.match(message, /^RangeError: deep\n/);
      assert.match(message, /at f \(code:4:9\)/);
      assert.match(message, /at run_code \(code:6:1\)/);
      assert.doesNotMatch(message, /data:|runtime\.js/);
      const first = await attempt(runner, "throw new Error('first line');");
      assert.match((first as { message: string }).message, /code:1:7\)/);
    },
  );

  await t.step(
    "a syntax error names its line and column in the code",
    async () => {
      const run = await attempt(runner, "const a = 1;\nlet b = ;\n");
      const { code, message } = run as { code: string; message: string };
      assert.equal(code, "code_error");
      assert.match(message, /^SyntaxError: Expression expected/);
      assert.match(message, /2 \| let b = ;/);
      assert.match(message, /code:2:9/);
      const line1 = await attempt(runner, "let b = ;");
      assert.match(
        (line1 as { message: string }).message,
        /1 \| let b = ;\n\s+\| {9}~/,
      );
    },
  );

  await t.step(
    "a value that is not JSON is an error that says which",
    async () => {
      const cases: [string, RegExp][] = [
        ["return { f() {} }", /\$\.f is a function/],
        [
          "const a: any = { b: [] }; a.b.push(a); return a",
          /\$\.b\[0\] is a cycle/,
        ],
        ["return { big: 10n }", /\$\.big is a BigInt \(10n\)/],
        ["return [1, undefined]", /\$\[1\] is undefined/],
        ["return { 'a b': NaN }", /\$\["a b"\] is NaN/],
        ["return new Map()", /\$ is a Map, not a plain object/],
      ];
      for (const [code, expected] of cases) {
        const run = await attempt(runner, code);
        assert.equal(run.ok, false, code);
        assert.match(
          (run as { message: string }).message,
          /^TypeError: The returned value is not JSON: /,
        );
        assert.match((run as { message: string }).message, expected);
      }
      const dropped = await attempt(
        runner,
        "return { a: undefined, d: new Date(0) }",
      );
      assert.deepEqual((dropped as { result: unknown }).result, {
        d: "1970-01-01T00:00:00.000Z",
      });
      const args = await attempt(
        runner,
        "return await tools.s.t({ f: () => 1 })",
        { tools: toolNames(["s/t"]) },
      );
      assert.match(
        (args as { message: string }).message,
        /The arguments of s\/t is not JSON: \$\.f is a function/,
      );
    },
  );

  await t.step("loom.read and loom.store go through the bridge", async () => {
    const bridge = recordingBridge({}, { "result-7": { rows: [3, 1, 2] } });
    const outcome = await runner.run(
      `const value = await loom.read({ result: "result-7", sha256: "00" });
       const text = await loom.store("a\\nb", { mediaType: "text/csv" });
       const json = await loom.store({ sorted: value.rows.sort() });
       let missing;
       try { await loom.read({ result: "result-9" }); } catch (e) { missing = [e.name, e.code, e.message]; }
       return { text, json, missing };`,
      { tools: [], bridge },
    );
    assert.deepEqual(outcome.result, {
      text: { result: "result-1", utf8_bytes: 3 },
      json: { result: "result-2", utf8_bytes: 18 },
      missing: [
        "LoomError",
        "unknown_result",
        "No stored result has the id result-9",
      ],
    });
    assert.deepEqual(bridge.stored, [
      { text: "a\nb", json: false, mediaType: "text/csv" },
      { text: '{"sorted":[1,2,3]}', json: true },
    ]);
  });

  await t.step(
    "a deadline past the maximum is cut to it; a cancelled run stops",
    async () => {
      await using short = await CodeRunner.start({
        ...CONFINED,
        maxTimeoutMs: 300,
      });
      const run = await attempt(short, "await new Promise(() => {});", {
        timeoutMs: 60_000,
      });
      assert.equal((run as { code: string }).code, "code_timeout");
      assert.match((run as { message: string }).message, /deadline of 300 ms/);
      const controller = new AbortController();
      const bridge = recordingBridge({
        "s/t":
          () => (controller.abort(new Error("host cancelled")),
            new Promise(() => {})),
      });
      await assert.rejects(
        runner.run("await tools.s.t();", {
          tools: toolNames(["s/t"]),
          bridge,
          signal: controller.signal,
        }),
        /host cancelled/,
      );
    },
  );
});

Deno.test("CodeRunner runs at most four programs at once; the others wait in order", async () => {
  await using runner = await CodeRunner.start(CONFINED);
  const gates: (() => void)[] = [];
  const arrived: number[] = [];
  let fourArrived!: () => void;
  const four = new Promise<void>((resolve) => fourArrived = resolve);
  const nextArrival: (() => void)[] = [];
  const bridge = recordingBridge({
    "s/wait": (args) =>
      new Promise((resolve) => {
        arrived.push(args.n as number);
        if (arrived.length === 4) fourArrived();
        nextArrival.shift()?.();
        gates.push(() => resolve({ content: [] }));
      }),
  });
  const tools = toolNames(["s/wait"]);
  const runs = [1, 2, 3, 4, 5, 6].map((n) =>
    runner.run(`await tools.s.wait({ n: ${n} }); return ${n};`, {
      tools,
      bridge,
    })
  );
  await four;
  // Nothing else can arrive while four runs hold the four turns.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(arrived.length, 4);
  assert.equal(bridge.peak(), 4);
  for (const expected of [5, 6]) {
    const arrival = new Promise<void>((resolve) => nextArrival.push(resolve));
    gates.shift()!();
    await arrival;
    assert.equal(arrived.at(-1), expected);
  }
  for (const gate of gates) gate();
  assert.deepEqual(
    (await Promise.all(runs)).map((o) => o.result),
    [1, 2, 3, 4, 5, 6],
  );
  assert.equal(bridge.peak(), 4);
});

Deno.test("CodeRunner.start() refuses without a working bubblewrap unless unconfined", async () => {
  for (const sandbox of [null, "/nonexistent/bwrap"]) {
    await assert.rejects(
      CodeRunner.start({ sandbox }),
      (error: Error & { code?: string }) =>
        error.code === "confinement_unavailable" &&
        /--code-unconfined/.test(error.message),
    );
  }
  await using runner = await CodeRunner.start({
    sandbox: null,
    unconfined: true,
  });
  assert.equal(runner.confined, false);
  await assert.rejects(CodeRunner.start({ memoryMiB: 0 }), RangeError);
});

Deno.test("CodeError carries the logs, calls and time of the run", () => {
  const error = new CodeError("code_calls", "Too many", {
    logs: ["a"],
    calls: 501,
    ms: 3,
  });
  assert.deepEqual([error.code, error.logs, error.calls, error.ms], [
    "code_calls",
    ["a"],
    501,
    3,
  ]);
});

Deno.test("CodeRunner.close() leaves no process: not the run's, not the one started ahead", async () => {
  // A heap limit no other runner has marks this runner's processes.
  const memoryMiB = 500 + Math.floor(Math.random() * 200);
  const marker = `--max-old-space-size=${memoryMiB}`;
  const runner = await CodeRunner.start({ ...CONFINED, memoryMiB });
  await attempt(runner, "return 1");
  assert.ok(childrenMarked(marker).length >= 1, "the next run's process waits");
  await runner.close();
  assert.deepEqual(childrenMarked(marker).filter(alive), []);
});
