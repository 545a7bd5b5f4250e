// The attacks of issue 35 on run_code's sandbox, each through the real
// runner (bubblewrap, no Deno permission) — blocked — and, where
// confinement is what stops it, through an unprotected runner too (every
// Deno permission, no bubblewrap, the test's environment), where it must
// succeed: an attack test that the unprotected runner passes could not fail.
// The attacks the OS layer alone must stop (files, environment, network,
// programs) also run in bubblewrap with every Deno permission. After each
// attack the runner still answers. The limits (deadline, memory, calls,
// logs, frames) are kept by the host; their tests were watched failing with
// the host's check removed (see the notes of issue 35).
import assert from "node:assert/strict";
import { join } from "node:path";
import { bwrapTest } from "../security/_bwrap.ts";
import { usableBwrap } from "../../lib/executor/bubblewrap.ts";
import {
  alive,
  type Attempt,
  attempt,
  childrenMarked,
  CodeRunner,
  countingListener,
  processes,
  processTree,
  recordingBridge,
  toolNames,
} from "./_code_kit.ts";
import { tempDir } from "../_kit.ts";

const SECRET = "s3cret-of-the-gateway";
// The gateway's own environment holds a secret the code must not learn.
Deno.env.set("LOOM_TEST_GATEWAY_SECRET", SECRET);

interface Scene extends AsyncDisposable {
  /** The real runner. */
  readonly confined: CodeRunner;
  /** Every Deno permission, no bubblewrap. */
  readonly open: CodeRunner;
  /** Every Deno permission, inside bubblewrap. */
  readonly osOnly: CodeRunner;
  /** A folder with a JS, a JSON and a text file holding secrets. */
  readonly folder: string;
}

async function scene(): Promise<Scene> {
  const bwrap = await usableBwrap();
  const confined = await CodeRunner.start({});
  const open = await CodeRunner.unprotected({ bwrap: null });
  const osOnly = await CodeRunner.unprotected({ bwrap });
  const dir = await tempDir();
  await Deno.writeTextFile(
    join(dir.path, "secret.js"),
    `export default "${SECRET}";\n`,
  );
  await Deno.writeTextFile(
    join(dir.path, "secret.json"),
    JSON.stringify({ secret: SECRET }),
  );
  return {
    confined,
    open,
    osOnly,
    folder: dir.path,
    async [Symbol.asyncDispose]() {
      await Promise.all([confined.close(), open.close(), osOnly.close()]);
      await dir[Symbol.asyncDispose]();
    },
  };
}

const leaked = (run: Attempt) => JSON.stringify(run).includes(SECRET);

/** The runner still answers after an attack. */
async function stillAnswers(runner: CodeRunner): Promise<void> {
  const run = await attempt(runner, "return 6 * 7;");
  assert.deepEqual(run, { ok: true, result: 42, logs: [] });
}

bwrapTest(
  "run_code: files, imports, registries, environment, network, programs and libraries are out of reach",
  async (t) => {
    await using s = await scene();
    const attacks: {
      name: string;
      code: string;
      /** Whether the attack got through. */
      got: (run: Attempt) => boolean;
      /** Also stopped by bubblewrap alone (every Deno permission inside). */
      os?: boolean;
    }[] = [
      {
        name: "reading /etc/passwd",
        code: `return await Deno.readTextFile("/etc/passwd");`,
        got: (run) => run.ok && String(run.result).includes("root:"),
        os: true,
      },
      {
        name: "import() of /etc/passwd",
        code:
          `return String(await import("file:///etc/passwd").catch((e) => e.message));`,
        got: (run) => run.ok && String(run.result).includes("root:x"),
        os: true,
      },
      {
        name: "import() of a local module",
        code: `return (await import("file://${s.folder}/secret.js")).default;`,
        got: leaked,
        os: true,
      },
      {
        name: "import() of a JSON file",
        code:
          `return (await import("file://${s.folder}/secret.json", { with: { type: "json" } })).default;`,
        got: leaked,
        os: true,
      },
      {
        name: "a static import of a JSON file, outside the function",
        code:
          `return 1 }}\nimport s from "file://${s.folder}/secret.json" with { type: "json" };\nexport function leak() { return s; }\nexport async function z() {{`,
        // The module fails to load when the import is refused: no answer at all.
        got: (run) => run.ok,
        os: true,
      },
      {
        name: "Deno.env",
        code: `return Deno.env.toObject();`,
        got: leaked,
        os: true,
      },
      {
        name: "the gateway's environment through /proc",
        code: `const out = [];
        for (const p of ["/proc/self/environ", "/proc/1/environ", "/proc/" + (Deno.ppid ?? 1) + "/environ"]) {
          try { out.push(await Deno.readTextFile(p)); } catch (e) { out.push(String(e)); }
        }
        return out;`,
        got: leaked,
        os: true,
      },
      {
        name: "Deno.Command",
        code:
          `const o = await new Deno.Command("/bin/sh", { args: ["-c", "echo pwned-by-code"] }).output();
        return new TextDecoder().decode(o.stdout);`,
        got: (run) => run.ok && String(run.result).includes("pwned-by-code"),
        os: true,
      },
      {
        name: "Deno.dlopen",
        code:
          `const lib = Deno.dlopen("libc.so.6", { getpid: { parameters: [], result: "i32" } });
        return lib.symbols.getpid();`,
        got: (run) => run.ok && typeof run.result === "number",
      },
    ];
    for (const attack of attacks) {
      await t.step(attack.name, async () => {
        const blocked = await attempt(s.confined, attack.code);
        assert.equal(attack.got(blocked), false, JSON.stringify(blocked));
        assert.equal(leaked(blocked), false);
        const unprotected = await attempt(s.open, attack.code);
        assert.equal(
          attack.got(unprotected),
          true,
          `the control run: ${JSON.stringify(unprotected)}`,
        );
        if (attack.os === true) {
          const os = await attempt(s.osOnly, attack.code);
          assert.equal(
            attack.got(os),
            false,
            `bubblewrap alone: ${JSON.stringify(os)}`,
          );
        }
        await stillAnswers(s.confined);
      });
    }

    await t.step(
      "fetch to a listener of the test's on 127.0.0.1, which sees no connection",
      async () => {
        await using listener = countingListener();
        const code =
          `return await (await fetch("http://127.0.0.1:${listener.port}/")).text();`;
        const blocked = await attempt(s.confined, code);
        const os = await attempt(s.osOnly, code);
        assert.equal(blocked.ok || os.ok, false);
        assert.equal(listener.connections(), 0);
        const unprotected = await attempt(s.open, code);
        assert.equal(unprotected.ok, true);
        assert.equal(listener.connections(), 1);
        await stillAnswers(s.confined);
      },
    );

    await t.step("http: and npm: specifiers reach no server", async () => {
      await using listener = countingListener();
      const http =
        `return (await import("http://127.0.0.1:${listener.port}/mod.js")).default;`;
      const npm =
        `return (await import("npm:left-pad@1.3.0")).default("x", 3);`;
      for (const code of [http, npm]) {
        const blocked = await attempt(s.confined, code);
        assert.equal(blocked.ok, false);
        assert.match(
          (blocked as { message: string }).message,
          /--no-npm|import access|--no-remote/,
        );
      }
      assert.equal(listener.connections(), 0);
      const unprotected = await attempt(s.open, http);
      assert.deepEqual(
        unprotected.ok && unprotected.result,
        "from the listener",
      );
      assert.equal(listener.connections(), 1);
      await stillAnswers(s.confined);
    });
  },
);

bwrapTest(
  "run_code: limits end a run with a typed error and its logs, and the runner still answers",
  async (t) => {
    await using runner = await CodeRunner.start({
      memoryMiB: 64,
      maxCalls: 500,
    });
    /** One attack on a limit: its run checked, then the runner answers. */
    const limit = (
      name: string,
      code: string,
      options: Parameters<typeof attempt>[2],
      check: (run: Attempt) => void,
    ) =>
      t.step(name, async () => {
        check(await attempt(runner, code, options));
        await stillAnswers(runner);
      });
    const codeOf = (run: Attempt) => (run as { code: string }).code;
    const long = { timeoutMs: 60_000 };

    await limit(
      "while (true) {} ends at the deadline (code_timeout)",
      "console.log('spinning'); while (true) {}",
      { timeoutMs: 500 },
      (run) =>
        assert.deepEqual(
          [run.ok, codeOf(run), run.logs],
          [false, "code_timeout", ["spinning"]],
        ),
    );
    await limit(
      "a heap bomb ends at the heap limit (code_memory)",
      "const keep = []; while (true) keep.push({ n: keep.length, s: 'x'.repeat(64) + keep.length });",
      long,
      (run) => assert.equal(codeOf(run), "code_memory"),
    );
    await limit(
      "array buffers past the data limit fail inside the code, not on the machine",
      "const keep = []; try { for (let i = 0; i < 64; i++) keep.push(new Uint8Array(1 << 30).fill(1)); } catch (e) { return [e.name, keep.length]; }",
      long,
      (run) => assert.deepEqual(run.ok && run.result, ["RangeError", 0]),
    );
    await limit(
      "a log flood ends past 1 MiB of logs (code_output)",
      "while (true) console.log('x'.repeat(1000));",
      long,
      (run) => {
        assert.equal(codeOf(run), "code_output");
        assert.ok(run.logs.length > 1000 && run.logs.length <= 1049);
      },
    );
    // Code that calls the tool s/t, answered by `bridge`.
    const callingThrough = (bridge: ReturnType<typeof recordingBridge>) => ({
      bridge,
      tools: toolNames(["s/t"]),
      ...long,
    });
    const calls = recordingBridge({ "s/t": () => ({ content: [] }) });
    await limit(
      "10,000 calls end at the 500th (code_calls), and no call past it reaches a tool",
      "for (let i = 0; i < 10000; i++) await tools.s.t({ i });",
      callingThrough(calls),
      (run) => {
        assert.equal(codeOf(run), "code_calls");
        assert.equal(calls.calls.length, 500);
      },
    );
    const slow = recordingBridge({
      "s/t": () =>
        new Promise((resolve) => setTimeout(() => resolve({ content: [] }), 1)),
    });
    await limit(
      "1,000 concurrent calls reach the tools 16 at a time, and end at the 500th",
      "await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.s.t({ i })));",
      callingThrough(slow),
      (run) => {
        assert.equal(codeOf(run), "code_calls");
        assert.equal(slow.peak(), 16);
        assert.equal(slow.calls.length, 500);
      },
    );
  },
);

/** Code that writes raw bytes, built from a frame's pieces, to stdout. */
function forge(frames: string): string {
  return `const encode = (m) => { const h = new TextEncoder().encode(JSON.stringify(m));
      const p = new Uint8Array(8 + h.length); const v = new DataView(p.buffer);
      v.setUint32(0, h.length); v.setUint32(4, 0); p.set(h, 8); return p; };
    const write = (bytes) => { let at = 0; while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at)); };
    ${frames}
    await new Promise(() => {});`;
}

bwrapTest(
  "run_code: forged frames on standard output end the run, and the runner still answers",
  async (t) => {
    await using runner = await CodeRunner.start({});
    const cases: [string, string, string, RegExp][] = [
      [
        "bytes that are no frame",
        `write(new TextEncoder().encode("Content-Length: 5\\r\\n\\r\\nhello"));`,
        "code_error",
        /header of \d+ bytes exceeds/,
      ],
      [
        "a header that is not JSON",
        `const p = new Uint8Array(10); new DataView(p.buffer).setUint32(0, 2); p.set([123, 123], 8); write(p);`,
        "code_error",
        /not a frame/,
      ],
      [
        "a 4 GiB body announced",
        `const p = new Uint8Array(8); new DataView(p.buffer).setUint32(0, 2); new DataView(p.buffer).setUint32(4, 0xffffffff); write(p);`,
        "code_error",
        /body of 4294967295 bytes exceeds/,
      ],
      [
        "a frame of the host's kind",
        `write(encode({ t: "reply", id: 1, ok: true }));`,
        "code_error",
        /kind "reply"/,
      ],
      [
        "a call reusing a live id",
        `const a = new TextEncoder().encode("{}"); write(encode({ t: "call", id: 5, server: "s", tool: "t", args: { $b: [0, 0] } })); write(encode({ t: "call", id: 5, server: "s", tool: "t", args: { $b: [0, 0] } }));`,
        "code_error",
        /fresh id|without server/,
      ],
      [
        "seventeen calls at once, past the runtime's queue",
        `for (let i = 100; i < 117; i++) { const h = new TextEncoder().encode(JSON.stringify({ t: "call", id: i, server: "s", tool: "t", args: { $b: [0, 2] } })); const p = new Uint8Array(8 + h.length + 2); const v = new DataView(p.buffer); v.setUint32(0, h.length); v.setUint32(4, 2); p.set(h, 8); p.set([123, 125], 8 + h.length); write(p); }`,
        "code_calls",
        /more than 16 requests in flight/,
      ],
    ];
    for (const [name, frames, code, message] of cases) {
      await t.step(name, async () => {
        const bridge = recordingBridge({ "s/t": () => new Promise(() => {}) });
        const run = await attempt(runner, forge(frames), {
          bridge,
          tools: toolNames(["s/t"]),
          timeoutMs: 20_000,
        });
        assert.equal((run as { code: string }).code, code, JSON.stringify(run));
        assert.match((run as { message: string }).message, message);
        assert.ok(bridge.calls.length <= 16);
        await stillAnswers(runner);
      });
    }
  },
);

bwrapTest(
  "run_code: nothing outlives its run — a spinning loop past its deadline, timers, a child, a detached grandchild",
  async () => {
    // A heap limit no other runner has marks this test's processes (test
    // files run in parallel in one process, each runner with a spare).
    const memoryMiB = 300 + Math.floor(Math.random() * 200);
    await using runner = await CodeRunner.start({ memoryMiB });
    await using open = await CodeRunner.unprotected({ bwrap: null, memoryMiB });
    // Unique durations mark the attack's processes anywhere on the machine.
    const sleeps = `${3000 + Math.floor(Math.random() * 1000)}.${Deno.pid}`;
    const code = `setInterval(() => {}, 10);
    const quiet = { stdin: "null", stdout: "null", stderr: "null" };
    try { new Deno.Command("sleep", { args: ["${sleeps}1"], ...quiet }).spawn().unref(); } catch {}
    try { await new Deno.Command("/bin/sh", { args: ["-c", "sleep ${sleeps}2 >/dev/null 2>&1 &"], ...quiet }).output(); } catch {}
    await tools.s.hold();
    while (true) {}`;
    const marked = () => markedProcesses(sleeps);
    const heap = `--max-old-space-size=${memoryMiB}`;
    const runners = [
      ["confined", runner, false, `${heap} /loom/runtime.js`],
      ["unprotected", open, true, `--allow-all --v8-flags=${heap}`],
    ] as const;
    for (const [which, r, survives, marker] of runners) {
      // The run takes the process its runner started ahead (and starts the
      // next one): the processes there before the run are the run's.
      const before = childrenMarked(marker);
      let tree: number[] = [];
      const bridge = recordingBridge({
        "s/hold": () => {
          tree = processTree(before);
          return { content: [] };
        },
      });
      const run = await attempt(r, code, {
        bridge,
        tools: toolNames(["s/hold"]),
        timeoutMs: 1500,
      });
      assert.equal(
        (run as { code: string }).code,
        "code_timeout",
        JSON.stringify(run),
      );
      assert.ok(tree.length >= 1, `${which}: the run's processes were seen`);
      if (survives) {
        // The control: without a sandbox the detached grandchild outlives the run.
        const left = marked();
        assert.ok(left.length > 0, "the unprotected run's grandchild survived");
        for (const pid of left) Deno.kill(pid, "SIGKILL");
      } else {
        assert.deepEqual(
          tree.filter(alive),
          [],
          `${which}: processes left after the run`,
        );
        assert.deepEqual(marked(), []);
      }
    }
    await stillAnswers(runner);
  },
);

/** Live processes whose command line holds `marker`. */
function markedProcesses(marker: string): number[] {
  return processes()
    .filter((p) => p.args.includes(marker) && !p.state.startsWith("Z"))
    .map((p) => p.pid);
}
