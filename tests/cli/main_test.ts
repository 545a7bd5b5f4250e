import assert from "node:assert/strict";
import { VERSION } from "../../lib/version.ts";
import { parseMainArguments } from "../../lib/cli/main.ts";
import { loom, loomIn, tempDir } from "../_kit.ts";
import { checkParser } from "./_arguments.ts";
import { staticClosure } from "./_module_graph.ts";

const AGENT = "fixtures/contexts/agent.yaml";

Deno.test("loom --version prints the package version and exits 0", async () => {
  const config = JSON.parse(await Deno.readTextFile("deno.json"));
  assert.equal(VERSION, config.version);
  const { code, stdout, stderr } = await loomIn("--version");
  assert.equal(code, 0);
  assert.equal(stderr, "");
  assert.equal(stdout, `loom ${VERSION}\n`);
});

Deno.test("loom help <command> prints that command's help", async (t) => {
  const commands = "run cost demo inspect render select session".split(" ");
  for (const command of commands) {
    await t.step(command, async () => {
      const help = await loomIn("help", command);
      const own = await loomIn(command, "--help");
      assert.equal(help.code, 0);
      assert.equal(own.code, 0);
      assert.equal(own.stderr, "");
      assert.equal(help.stdout, own.stdout);
      assert.match(help.stdout, new RegExp(`^Usage: loom ${command}`));
    });
  }
  await t.step(
    "an unknown command exits 2 and lists the commands",
    async () => {
      const { code, stdout, stderr } = await loomIn("help", "frob");
      assert.equal(code, 2);
      assert.equal(stdout, "");
      assert.match(
        stderr,
        /^loom: Unknown command frob; the commands are run,/,
      );
    },
  );
});

Deno.test("loom --help shows the exit code table and where paths resolve", async () => {
  const { code, stdout } = await loomIn("--help");
  assert.equal(code, 0);
  assert.match(stdout, /^loom [0-9.]+ — /);
  assert.match(stdout, /loom help <command>/);
  assert.match(stdout, /loom --version/);
  assert.match(stdout, /resolve against the directory loom was started/);
  for (
    const line of [
      /^ {2}0 {2}done/m,
      /^ {2}1 {2}run: /m,
      /^ {2}2 {2}bad usage/m,
      /^ {2}3 {2}provider/m,
    ]
  ) {
    assert.match(stdout, line);
  }
  const cliPage = await Deno.readTextFile("docs/cli.md");
  for (const exit of ["| 0 ", "| 1 ", "| 2 ", "| 3 "]) {
    assert.ok(
      cliPage.includes(exit),
      `docs/cli.md's exit code table has ${exit}`,
    );
  }
});

Deno.test("The argument parser's messages are reworded with the command's flags", async (t) => {
  const cases: [string, string[], RegExp][] = [
    [
      "a value that looks like an option",
      ["run", "--max-steps", "-5"],
      /^loom run: Missing the value of --max-steps \(-5 looks like an option\); to give a value that starts with a dash write --max-steps=VALUE; run 'loom help run'\n$/,
    ],
    [
      "a missing value",
      ["select", "f", "--bytes"],
      /^loom select: Missing the value of --bytes; run 'loom help select'\n$/,
    ],
    [
      "an unknown option",
      ["inspect", "f", "--frob"],
      /^loom inspect: Unknown option --frob; run 'loom help inspect'\n$/,
    ],
    [
      "a value for a boolean flag",
      ["render", AGENT, "--help=yes"],
      /^loom render: --help takes no value; run 'loom help render'\n$/,
    ],
    [
      "a stray positional argument",
      ["demo", "now"],
      /^loom demo: Unexpected argument now: this command takes no positional arguments; run 'loom help demo'\n$/,
    ],
    [
      "an unterminated quote in --test",
      [
        "run",
        "--workspace",
        ".",
        "--model",
        "recorded:x",
        "--intent",
        "x",
        "--test",
        "deno 'run",
      ],
      /^loom run: Invalid --test deno 'run: unterminated quote; run 'loom help run'\n$/,
    ],
  ];
  await refusals(t, cases, (stderr) => {
    assert.ok(!stderr.includes("'--"), "no quoted flags from node's parser");
  });
});

Deno.test("Every command exits 2 on bad input and prefixes its messages with loom <command>:", async (t) => {
  await using temp = await tempDir();
  const dir = temp.path;
  const binary = `${dir}/binary.bin`;
  await Deno.writeFile(binary, new Uint8Array([0x61, 0xff]));
  const cases: [string, string[], RegExp][] = [
    [
      "inspect binary",
      ["inspect", binary],
      /^loom inspect: invalid_utf8: Cannot inspect .*binary\.bin: byte 1 /,
    ],
    [
      "inspect a missing file",
      ["inspect", `${dir}/nope`],
      /^loom inspect: Cannot read .*nope: it does not exist\n$/,
    ],
    [
      "select binary",
      ["select", binary, "--bytes", "0:1"],
      /^loom select: invalid_utf8: Cannot select .*binary\.bin: byte 1 /,
    ],
    [
      "render a missing file",
      ["render", `${dir}/nope.yaml`],
      /^loom render: unreadable_context_file: /,
    ],
    ["session without a directory", ["session", "ls"], /^loom session: /],
    [
      "run without a workspace",
      ["run", "--model", "m", "--intent", "x"],
      /^loom run: Missing --workspace DIR/,
    ],
    [
      "demo with a bad flag",
      ["demo", "--frob"],
      /^loom demo: Unknown option --frob/,
    ],
    ["an unknown command", ["frob"], /^loom: Unknown command frob/],
  ];
  await refusals(t, cases, (stderr) => {
    assert.ok(!/os error|\(os error/.test(stderr), stderr);
  });
});

/** Each row exits 2, prints nothing on stdout and its message on stderr. */
async function refusals(
  t: Deno.TestContext,
  cases: readonly [string, string[], RegExp][],
  check: (stderr: string) => void,
): Promise<void> {
  for (const [name, args, expected] of cases) {
    await t.step(name, async () => {
      const { code, stdout, stderr } = await loomIn(...args);
      assert.equal(code, 2);
      assert.equal(stdout, "");
      assert.match(stderr, expected);
      check(stderr);
    });
  }
}

Deno.test("loom select words its errors with its own flags", async (t) => {
  await using dir = await tempDir();
  const json = `${dir.path}/doc.json`;
  await Deno.writeTextFile(json, '{"a": [1, 2]}');
  {
    await t.step("a non-string value suggests --json", async () => {
      const { code, stderr } = await loomIn("select", json, "--pointer", "");
      assert.equal(code, 2);
      assert.match(
        stderr,
        /^loom select: not_a_string: .*add --json to print its JSON\n$/,
      );
      assert.ok(!stderr.includes("json rendering"));
    });
    await t.step("an uppercase --sha256 is the same digest", async () => {
      const bytes = await Deno.readFile(json);
      const digest = Array.from(
        new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)),
        (b) => b.toString(16).padStart(2, "0"),
      ).join("");
      const { code, stdout } = await loomIn(
        "select",
        json,
        "--pointer",
        "/a",
        "--json",
        "--sha256",
        digest.toUpperCase(),
      );
      assert.equal(code, 0);
      assert.equal(stdout, "[1, 2]");
    });
    await t.step("a malformed --sha256 names the flag", async () => {
      const flags = "--pointer /a --sha256 xyz".split(" ");
      const { code, stderr } = await loomIn("select", json, ...flags);
      assert.equal(code, 2);
      assert.match(
        stderr,
        /^loom select: Invalid --sha256 xyz: expected 64 hexadecimal digits/,
      );
      assert.ok(!stderr.includes("malformed"));
    });
  }
});

Deno.test("loom render refuses flags the chosen format does not use", async (t) => {
  const cases: [string, string[], RegExp][] = [
    ["--breakpoints with openai", [
      "--format",
      "openai",
      "--breakpoints",
      "foundation",
    ], /--breakpoints has no effect with --format openai/],
    [
      "--breakpoints with text",
      ["--breakpoints", "foo", "--ttl", "2h"],
      /--breakpoints has no effect with --format text/,
    ],
    [
      "--ttl with text",
      ["--ttl", "1h"],
      /--ttl has no effect with --format text/,
    ],
    ["--ttl in seconds", [
      "--format",
      "anthropic",
      "--breakpoints",
      "focus",
      "--ttl",
      "3600",
    ], /Invalid --ttl 3600: expected 5m or 1h;/],
    [
      "--ttl without --breakpoints",
      ["--format", "anthropic", "--ttl", "1h"],
      /--ttl needs --breakpoints/,
    ],
    ["an unknown section", [
      "--format",
      "anthropic",
      "--breakpoints",
      "history",
    ], /Unknown section history in --breakpoints: sections are foundation,/],
    ["five sections", [
      "--format",
      "messages",
      "--breakpoints",
      "foundation,focus,topic,convo,attention",
    ], /--breakpoints names 5 sections: a request takes at most 4/],
    [
      "an empty list",
      ["--format", "anthropic", "--breakpoints", ","],
      /Invalid --breakpoints: expected section names/,
    ],
  ];
  await refusals(
    t,
    cases.map(([name, flags, expected]) => [
      name,
      ["render", AGENT, ...flags],
      expected,
    ]),
    (stderr) => assert.match(stderr, /^loom render: /),
  );
  await t.step("anthropic with breakpoints and a TTL still works", async () => {
    const flags = "--format anthropic --breakpoints foundation --ttl 1h";
    const { code, stdout } = await loomIn("render", AGENT, ...flags.split(" "));
    assert.equal(code, 0);
    assert.match(stdout, /"ttl": "1h"/);
  });
});

Deno.test("loom demo checks --context-report before it starts", async () => {
  const { code, stdout, stderr } = await loomIn(
    "demo",
    "--context-report",
    "/nonexistent-loom-folder/report.json",
  );
  assert.equal(code, 2);
  assert.equal(stdout, "");
  assert.match(
    stderr,
    /^loom demo: Cannot write --context-report \/nonexistent-loom-folder\/report\.json: its folder \/nonexistent-loom-folder does not exist/,
  );
  assert.ok(!stderr.includes("replaying"), "nothing was started");
});

Deno.test("loom run --help documents where paths resolve and exit 2 for every bad input", async () => {
  const { code, stdout } = await loomIn("help", "run");
  assert.equal(code, 0);
  assert.match(stdout, /Paths resolve against the directory loom was started/);
  assert.match(
    stdout,
    /2 bad usage or bad\ninput \(flags, files, model spec, API key, recording/,
  );
});

Deno.test("The demo, test and loom tasks print no package download or check noise", async () => {
  const { tasks } = JSON.parse(await Deno.readTextFile("deno.json")) as {
    tasks: Record<string, string>;
  };
  for (const name of ["demo", "test", "loom"]) {
    assert.match(tasks[name]!, /deno (run|test) --quiet /, name);
  }
  // The demo's command module graph holds no provider SDK: it loads only
  // for live runs.
  const statics = await staticClosure("lib/cli/demo.ts");
  assert.ok(statics.some((s) => s.endsWith("/lib/cli/demo.ts")));
  const sdks = [...statics].filter((s) =>
    s.startsWith("npm:") && /anthropic-ai|openai/.test(s)
  );
  assert.deepEqual(sdks, []);
});

Deno.test("describeFailure() names the operation and file of a raw OS error", async () => {
  const { describeFailure } = await import("../../lib/cli/_failure.ts");
  let error: unknown;
  try {
    await Deno.lstat("/nonexistent-loom/session.json");
  } catch (e) {
    error = e;
  }
  const failure = describeFailure("run", error);
  assert.equal(failure.exitCode, 3);
  assert.equal(
    failure.text,
    "loom run: internal error: the file operation lstat on /nonexistent-loom/session.json failed: it does not exist\n",
  );
});

Deno.test("Each command's exit codes follow the table", async (t) => {
  await using temp = await tempDir();
  const dir = temp.path;
  const text = `${dir}/notes.txt`;
  await Deno.writeTextFile(text, "one\ntwo\n");
  const workspace = `${dir}/ws`;
  await Deno.mkdir(`${workspace}/src`, { recursive: true });
  for (const name of ["check.ts", "src/stats.ts"]) {
    await Deno.copyFile(
      `fixtures/workspaces/bugfix/${name}`,
      `${workspace}/${name}`,
    );
  }
  const run = [
    "run",
    "--workspace",
    workspace,
    "--intent-file",
    "fixtures/intents/bugfix.txt",
    "--model",
    "recorded:fixtures/recordings/bugfix.json",
  ];
  const cases: [string, string[], number][] = [
    ["inspect: done", ["inspect", text], 0],
    ["inspect: bad input", ["inspect", `${dir}/nope`], 2],
    ["select: done", ["select", text, "--lines", "1:1"], 0],
    ["select: bad input", ["select", text, "--lines", "1:9"], 2],
    ["render: done", ["render", AGENT], 0],
    ["render: bad input", ["render", AGENT, "--format", "xml"], 2],
    ["session: done", ["session", "ls", dir], 0],
    ["session: bad input", ["session", "show", `${dir}/nope`], 2],
    ["demo: bad input", ["demo", "--keep=1"], 2],
    ["run: stopped without completing", [...run, "--max-steps", "1"], 1],
    ["run: bad input", [...run, "--model", "claude"], 2],
  ];
  for (const [name, args, expected] of cases) {
    await t.step(name, async () => {
      const { code, stderr } = await loomIn(...args);
      assert.equal(code, expected, stderr);
      if (expected === 2) assert.match(stderr, /^loom [a-z]+( [a-z]+)?: /);
    });
  }
});

Deno.test("parseMainArguments() picks the command before any module loads", async (t) => {
  await checkParser(t, parseMainArguments, [
    ["--version", ["--version", "run"], { kind: "version" }],
    ["-V", ["-V"], { kind: "version" }],
    ["no arguments: the help, exit 2", [], { kind: "help", asked: false }],
    ["--help", ["--help"], { kind: "help", asked: true }],
    ["help alone", ["help"], { kind: "help", asked: true }],
    ["a command and its arguments", ["inspect", "f", "--frob"], {
      kind: "command",
      name: "inspect",
      args: ["f", "--frob"],
    }],
    ["help <command> is the command's --help", ["help", "session"], {
      kind: "command",
      name: "session",
      args: ["--help"],
    }],
    ["help help is the top-level help", ["help", "help"], {
      kind: "help",
      asked: true,
    }],
    ["an unknown command", ["frob", "x"], {
      usage:
        "Unknown command frob; the commands are run, cost, demo, inspect, mcp, render, report, select, session, view (run 'loom --help')",
    }],
    ["a name from Object.prototype is no command", ["toString"], {
      usage: /^Unknown command toString;/,
    }],
    ["help with two commands", ["help", "run", "cost"], {
      usage: "Expected one command, got run cost",
    }],
  ]);
  await t.step("help with two commands prints loom help:", async () => {
    const { code, stdout, stderr } = await loomIn("help", "run", "cost");
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assert.equal(stderr, "loom help: Expected one command, got run cost\n");
  });
  await t.step("no arguments print the help and exit 2", async () => {
    const { code, stdout } = await loomIn();
    assert.equal(code, 2);
    assert.match(stdout, /^loom [0-9.]+ — /);
  });
});

Deno.test("loom --help and a bad command work as a program (subprocess smoke test)", async () => {
  const help = await loom("--help");
  assert.equal(help.code, 0, help.stderr);
  assert.equal(help.stderr, "");
  assert.equal(help.stdout, (await loomIn("--help")).stdout);
  const bad = await loom("frob");
  assert.equal(bad.code, 2);
  assert.equal(bad.stdout, "");
  assert.match(bad.stderr, /^loom: Unknown command frob; /);
});
