import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { parseSelectArguments } from "../../lib/cli/select.ts";
import { loomIn as loom, tempDir } from "../_kit.ts";
import { checkParser } from "./_arguments.ts";

const DIGEST = "ab".repeat(32);

Deno.test("parseSelectArguments() reads FILE, one selector and the flags", async (t) => {
  await checkParser(t, parseSelectArguments, [
    ["--bytes, nothing read", ["/nonexistent", "--bytes", "5:12"], {
      file: "/nonexistent",
      selector: { kind: "bytes", start: 5, end: 12 },
      json: false,
    }],
    ["--lines", ["f", "--lines=-1:2"], {
      file: "f",
      selector: { kind: "lines", start: -1, end: 2 },
      json: false,
    }],
    ["--pointer, --json and an uppercase --sha256", [
      "f",
      "--pointer",
      "/a",
      "--json",
      "--sha256",
      DIGEST.toUpperCase(),
    ], {
      file: "f",
      selector: { kind: "json_pointer", pointer: "/a" },
      json: true,
      sha256: DIGEST,
    }],
    ["--help wins", ["--bytes", "1:2", "--help"], {
      help: /^Usage: loom select FILE/,
    }],
    ["no file", ["--bytes", "0:1"], { usage: "Expected exactly one FILE" }],
    ["no selector", ["f"], {
      usage: "Give exactly one of --bytes, --lines, --pointer",
    }],
    ["two selectors", ["f", "--bytes", "1:2", "--lines", "1:1"], {
      usage: "Give exactly one of --bytes, --lines, --pointer",
    }],
    ["a range that is not A:B", ["f", "--bytes", "1-2"], {
      usage: "Invalid --bytes 1-2: expected A:B with integers A and B",
    }],
    ["--json without --pointer", ["f", "--lines", "1:1", "--json"], {
      usage: "--json needs --pointer: byte and line selections print raw text",
    }],
    ["a short --sha256", ["f", "--lines", "1:1", "--sha256", "abc"], {
      usage: "Invalid --sha256 abc: expected 64 hexadecimal digits",
    }],
    ["a missing value", ["f", "--bytes"], {
      usage: "Missing the value of --bytes",
    }],
  ]);
});

Deno.test("loom select prints a selection raw or fails with its code", async (t) => {
  await using temp = await tempDir();
  const dir = temp.path;
  const text = `${dir}/text.txt`;
  const json = `${dir}/doc.json`;
  await Deno.writeTextFile(text, "one\r\ntwo €\nthree");
  await Deno.writeTextFile(
    json,
    '{"name": "lo\\u006fm", "big": 123456789012345678901234567890, "list": [1, 2]}',
  );
  await t.step(
    "--bytes prints exactly the range, no newline added",
    async () => {
      const { code, stdout, stderr } = await loom(
        "select",
        text,
        "--bytes",
        "5:12",
      );
      assert.equal(stderr, "");
      assert.equal(code, 0);
      assert.equal(stdout, "two €");
    },
  );
  await t.step("--lines keeps the original endings", async () => {
    const { code, stdout } = await loom("select", text, "--lines", "1:2");
    assert.equal(code, 0);
    assert.equal(stdout, "one\r\ntwo €\n");
    assert.equal(
      (await loom("select", text, "--lines", "3:3")).stdout,
      "three",
    );
  });
  await t.step(
    "--pointer decodes a string; --json prints the lexeme",
    async () => {
      assert.equal(
        (await loom("select", json, "--pointer", "/name")).stdout,
        "loom",
      );
      assert.equal(
        (await loom("select", json, "--pointer", "/name", "--json")).stdout,
        '"lo\\u006fm"',
      );
      assert.equal(
        (await loom("select", json, "--pointer", "/big", "--json")).stdout,
        "123456789012345678901234567890",
      );
    },
  );
  await t.step("--sha256 verifies the file first", async () => {
    const sha256 = createHash("sha256").update(await Deno.readFile(text))
      .digest("hex");
    assert.equal(
      (await loom("select", text, "--lines", "1:1", "--sha256", sha256))
        .stdout,
      "one\r\n",
    );
    const wrong = await loom(
      "select",
      text,
      "--lines",
      "1:1",
      "--sha256",
      "0".repeat(64),
    );
    assert.equal(wrong.code, 2);
    assert.equal(wrong.stdout, "");
    assert.match(wrong.stderr, /^loom select: digest_mismatch: /);
  });
  const failures: [string, string[]][] = [
    ["not_char_boundary", [text, "--bytes", "5:10"]],
    ["invalid_range", [text, "--bytes", "0:99"]],
    ["invalid_range", [text, "--lines", "2:9"]],
    ["not_a_string", [json, "--pointer", "/big"]],
    ["pointer_not_found", [json, "--pointer", "/list/2"]],
    ["invalid_pointer", [json, "--pointer", "/list/01"]],
    ["invalid_json", [text, "--pointer", ""]],
  ];
  for (const [failure, args] of failures) {
    await t.step(`${failure} goes to stderr with exit 2`, async () => {
      const { code, stdout, stderr } = await loom("select", ...args);
      assert.equal(code, 2);
      assert.equal(stdout, "");
      assert.match(
        stderr,
        new RegExp(`^loom select: ${failure}: [A-Z].*[^.]\\n$`),
      );
    });
  }
  await t.step("invalid UTF-8 is refused", async () => {
    const bad = `${dir}/bad.bin`;
    await Deno.writeFile(bad, new Uint8Array([0xc0, 0xaf]));
    const { code, stderr } = await loom("select", bad, "--bytes", "0:0");
    assert.equal(code, 2);
    assert.match(
      stderr,
      /^loom select: invalid_utf8: Cannot select .*bad\.bin: byte 0/,
    );
  });
  await t.step("bad usage exits 2", async () => {
    for (
      const args of [
        [text],
        [text, "--bytes", "1:2", "--lines", "1:1"],
        [text, "--bytes", "1-2"],
        [text, "--lines", "1:1", "--json"],
        [text, "--lines", "1:1", "--sha256", "abc"],
        ["--bytes", "0:1"],
      ]
    ) {
      const { code, stderr } = await loom("select", ...args);
      assert.equal(code, 2, args.join(" "));
      assert.match(stderr, /^loom select: /);
    }
  });
});
