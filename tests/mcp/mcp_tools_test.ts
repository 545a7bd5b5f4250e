// The five tools in-process, without the protocol: limits, budgets, atomic
// writes and argument checks.
import assert from "node:assert/strict";
import { McpTools, type ToolAnswer } from "../../lib/mcp/mcp_tools.ts";
import { tempDir } from "../_kit.ts";

type Reference = { result: string; sha256: string; select: unknown };

function ok(answer: ToolAnswer): Record<string, unknown> {
  assert.ok(answer.ok, answer.ok ? "" : `${answer.code}: ${answer.message}`);
  return answer.structured;
}

function code(answer: ToolAnswer): string {
  return answer.ok ? "ok" : answer.code;
}

function referenceOf(answer: ToolAnswer): Reference {
  const files = ok(answer).files as { reference: Reference }[];
  return files[0]!.reference;
}

Deno.test("McpTools keeps the store's limits: a full store answers result_unavailable, a file over the per-result limit is too_large", async () => {
  await using root = await tempDir();
  await Deno.writeTextFile(`${root.path}/a.txt`, "alpha\n");
  await Deno.writeTextFile(`${root.path}/b.txt`, "beta\n");
  await Deno.writeTextFile(`${root.path}/big.txt`, "x".repeat(64));
  const tools = await McpTools.start({
    root: root.path,
    limits: { maxResults: 1, maxResultBytes: 32 },
  });
  try {
    ok(await tools.call("inspect_files", { paths: ["a.txt"] }));
    const full = ok(await tools.call("inspect_files", { paths: ["b.txt"] }));
    const [descriptor] = full.files as Record<string, unknown>[];
    assert.equal(descriptor?.result_unavailable, "store_full");
    assert.equal(descriptor?.reference, undefined);
    assert.equal(descriptor?.preview, "beta\n");
    const big = await tools.call("inspect_files", { paths: ["big.txt"] });
    assert.equal(code(big), "too_large");
    assert.match(big.ok ? "" : big.message, /--max-result-bytes is 32/);
  } finally {
    tools.close();
  }
});

Deno.test("McpTools.call() answers 8 KiB per read with a next reference, and pages the catalogue by 8", async () => {
  await using root = await tempDir();
  await Deno.writeTextFile(`${root.path}/long.txt`, "y".repeat(9000));
  const tools = await McpTools.start({ root: root.path });
  try {
    const reference = referenceOf(
      await tools.call("inspect_files", { paths: ["long.txt"] }),
    );
    const whole = ok(await tools.call("read_result", { reference }));
    assert.equal(whole.truncated, true);
    assert.equal(whole.total_bytes, 9000);
    assert.deepEqual((whole.next as Reference).select, {
      kind: "bytes",
      start: 8192,
      end: 9000,
    });
    const rest = ok(await tools.call("read_result", { reference: whole.next }));
    assert.equal(rest.selected_text, "y".repeat(808));
    assert.equal(rest.truncated, undefined);
    const part = await tools.call("read_result", {
      reference: {
        ...reference,
        select: { kind: "bytes", start: 0, end: 8192 },
      },
    });
    assert.equal((ok(part).selected_text as string).length, 8192);
    for (let i = 0; i < 9; i++) {
      ok(await tools.call("inspect_files", { paths: ["long.txt"] }));
    }
    const first = ok(await tools.call("list_results", {}));
    assert.equal((first.results as unknown[]).length, 8);
    assert.equal(first.next_offset, 8);
    const second = ok(await tools.call("list_results", { offset: 8 }));
    assert.equal((second.results as unknown[]).length, 2);
    assert.equal(second.next_offset, null);
  } finally {
    tools.close();
  }
});

Deno.test("McpTools write_file replaces a file atomically, and a write that does not resolve leaves it byte-identical", async () => {
  await using root = await tempDir();
  await Deno.writeTextFile(`${root.path}/src.txt`, "one\ntwo\nthree\n");
  await Deno.writeTextFile(`${root.path}/out.txt`, "old\n");
  const tools = await McpTools.start({ root: root.path });
  try {
    const reference = referenceOf(
      await tools.call("inspect_files", { paths: ["src.txt"] }),
    );
    const lines = (start: number, end: number) => ({
      ...reference,
      select: { kind: "lines", start, end },
    });
    const failed = await tools.call("write_file", {
      path: "out.txt",
      contents: ["new\n", lines(1, 9)],
    });
    assert.equal(code(failed), "invalid_range");
    assert.equal(await Deno.readTextFile(`${root.path}/out.txt`), "old\n");
    const written = ok(
      await tools.call("write_file", {
        path: `${root.path}/out.txt`,
        contents: [lines(3, 3), "TWO\n", lines(1, 1)],
      }),
    );
    assert.equal(
      await Deno.readTextFile(`${root.path}/out.txt`),
      "three\nTWO\none\n",
    );
    assert.equal(written.origin, "write_file out.txt");
    const names = [];
    for await (const entry of Deno.readDir(root.path)) names.push(entry.name);
    assert.deepEqual(names.sort(), ["out.txt", "src.txt"]);
  } finally {
    tools.close();
  }
});

Deno.test("McpTools.call() refuses unknown tools and arguments outside the schema by code", async () => {
  await using root = await tempDir();
  const tools = await McpTools.start({ root: root.path });
  try {
    assert.equal(code(await tools.call("rm", {})), "unknown_tool");
    assert.equal(
      code(await tools.call("inspect_files", { paths: [] })),
      "invalid_arguments",
    );
    assert.equal(
      code(await tools.call("inspect_files", { paths: ["."] })),
      "invalid_path",
    );
    assert.equal(
      code(await tools.call("write_file", { path: "a", contents: [1] })),
      "invalid_arguments",
    );
    assert.equal(
      code(await tools.call("write_file", { path: "a\\b", contents: [] })),
      "invalid_path",
    );
    assert.equal(
      code(await tools.call("list_results", { offset: "1" })),
      "invalid_reference",
    );
  } finally {
    tools.close();
  }
});

Deno.test("McpTools accepts absolute paths under the root as it was given, also through a symlink to it", async () => {
  await using home = await tempDir();
  await Deno.mkdir(`${home.path}/real`);
  await Deno.writeTextFile(`${home.path}/real/a.txt`, "a\n");
  await Deno.symlink(`${home.path}/real`, `${home.path}/link`);
  const tools = await McpTools.start({ root: `${home.path}/link` });
  try {
    for (const path of [`${home.path}/link/a.txt`, `${home.path}/real/a.txt`]) {
      ok(await tools.call("inspect_files", { paths: [path] }));
    }
    assert.equal(
      code(
        await tools.call("inspect_files", { paths: [`${home.path}/a.txt`] }),
      ),
      "outside_root",
    );
  } finally {
    tools.close();
  }
});
