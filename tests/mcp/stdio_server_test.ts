// `loom mcp` end to end: the MCP SDK's own client over stdio, spawning the
// real command on a temporary root, as a host (Claude Code, Codex, Cursor)
// would. Every refusal is a tool error naming its code and changes nothing
// outside the root.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { apiDump, REPO_ROOT, tempDir } from "../_kit.ts";
import { bwrapTest } from "../security/_bwrap.ts";
import {
  connectRoot,
  initializeMessage,
  mcpArgs,
  readArgs,
  textOf,
} from "../_kit/mcp.ts";

interface Descriptor {
  result: string;
  sha256: string;
  utf8_bytes: number;
  preview: string;
  preview_truncated: boolean;
  reference: { result: string; sha256: string; select: unknown };
}

function sha256(text: string | Uint8Array): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Every file under `dir` with its digest (a snapshot to compare). */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(path: string, rel: string): Promise<void> {
    for await (const entry of Deno.readDir(path)) {
      const full = `${path}/${entry.name}`;
      const name = rel === "" ? entry.name : `${rel}/${entry.name}`;
      const info = await Deno.lstat(full);
      if (info.isDirectory) await walk(full, name);
      else if (info.isFile) out[name] = sha256(await Deno.readFile(full));
      else {out[name] = info.isSymlink
          ? `-> ${await Deno.readLink(full)}`
          : "special";}
    }
  }
  await walk(dir, "");
  return out;
}

Deno.test("an MCP host inspects a large JSON file, reads one pointer by verified reference, lists and writes a composed file", async () => {
  await using root = await tempDir();
  const document = apiDump(12_000, 1);
  await Deno.writeTextFile(`${root.path}/events.json`, document);
  await using server = await connectRoot(root.path);
  const client = server;

  const tools = await client.tools();
  assert.deepEqual(tools.map((t) => t.name), [
    "inspect_files",
    "read_result",
    "find_in_result",
    "list_results",
    "write_file",
  ]);
  // Claude Code would spill a long answer to a file again without this.
  assert.equal(
    tools.find((t) => t.name === "find_in_result")?._meta
      ?.["anthropic/maxResultSizeChars"],
    200_000,
  );
  const annotations = Object.fromEntries(
    tools.map((t) => [t.name, t.annotations?.readOnlyHint]),
  );
  assert.deepEqual(annotations, {
    inspect_files: true,
    read_result: true,
    find_in_result: true,
    list_results: true,
    write_file: false,
  });

  const inspected = await client.call("inspect_files", {
    paths: ["events.json"],
  });
  assert.equal(inspected.isError, undefined, textOf(inspected));
  const [file] = (inspected.structuredContent as { files: Descriptor[] }).files;
  assert.ok(file !== undefined);
  assert.equal(file.result, "result-1");
  assert.equal(file.sha256, sha256(document));
  assert.equal(file.utf8_bytes, new TextEncoder().encode(document).length);
  assert.ok(file.utf8_bytes > 1_000_000);
  assert.equal(file.preview_truncated, true);
  assert.ok(new TextEncoder().encode(file.preview).length <= 1024);
  // Never the whole text: the answer is a descriptor, a few KiB at most.
  assert.ok(
    textOf(inspected).length < 4096,
    `${textOf(inspected).length} characters`,
  );
  assert.deepEqual(file.reference, {
    result: "result-1",
    sha256: file.sha256,
    select: { kind: "whole" },
    rendering: "text",
  });

  const parsed = JSON.parse(document);
  const name = await client.call(
    "read_result",
    readArgs(file, {
      kind: "json_pointer",
      pointer: "/data/11999/customer/name",
    }),
  );
  assert.deepEqual(name.structuredContent, {
    selected_text: parsed.data[11999].customer.name,
  });
  assert.equal(
    textOf(name),
    JSON.stringify({ selected_text: "Kunde 11999 — Zürich" }),
  );
  const lexeme = await client.call("read_result", {
    reference: {
      ...file.reference,
      select: { kind: "json_pointer", pointer: "/data/42" },
      rendering: "json",
    },
  });
  const json =
    (lexeme.structuredContent as { selected_json: string }).selected_json;
  assert.deepEqual(JSON.parse(json), parsed.data[42]);

  // A search hit carries the pointer of the value that holds it.
  const found = await client.call("find_in_result", {
    reference: file.reference,
    pattern: "Kunde 11999 ",
  });
  const [hit] =
    (found.structuredContent as { matches: { pointer: string }[] }).matches;
  assert.equal(hit?.pointer, "/data/11999/customer/name");

  const listed = await client.call("list_results", { offset: 0 });
  assert.deepEqual(listed.structuredContent, {
    results: [{
      origin: "inspect_files events.json",
      origin_truncated: false,
      capture: "complete",
      utf8_bytes: file.utf8_bytes,
      reference: file.reference,
    }],
    next_offset: null,
  });

  const written = await client.call("write_file", {
    path: "notes/customer.txt",
    contents: [
      "Last customer: ",
      {
        ...file.reference,
        select: { kind: "json_pointer", pointer: "/data/11999/customer/name" },
      },
      "\n",
    ],
  });
  assert.equal(written.isError, undefined, textOf(written));
  const expected = "Last customer: Kunde 11999 — Zürich\n";
  assert.equal(
    await Deno.readTextFile(`${root.path}/notes/customer.txt`),
    expected,
  );
  const descriptor = written.structuredContent as unknown as Descriptor & {
    origin: string;
  };
  assert.equal(descriptor.result, "result-2");
  assert.equal(descriptor.origin, "write_file notes/customer.txt");
  assert.equal(descriptor.sha256, sha256(expected));
  assert.equal(descriptor.preview, expected);
});

Deno.test("wrong digests, unknown results, paths outside the root, escaping symlinks, .git writes and FIFOs are tool errors that change nothing outside the root", async (t) => {
  await using root = await tempDir();
  await using outside = await tempDir();
  await Deno.writeTextFile(`${outside.path}/secret.txt`, "secret\n");
  await Deno.writeTextFile(`${root.path}/data.json`, '{"a":{"b":[1,2,3]}}\n');
  await Deno.mkdir(`${root.path}/.git`);
  await Deno.writeTextFile(`${root.path}/.git/config`, "[core]\n");
  await Deno.symlink(outside.path, `${root.path}/out`);
  await Deno.symlink(
    `${outside.path}/secret.txt`,
    `${root.path}/secret-link.txt`,
  );
  await Deno.symlink(".git", `${root.path}/git-link`);
  await Deno.link(`${outside.path}/secret.txt`, `${root.path}/hard.txt`);
  const fifo = await new Deno.Command("mkfifo", { args: [`${root.path}/pipe`] })
    .output();
  assert.ok(fifo.success, "mkfifo failed");
  const outsideBefore = await snapshot(outside.path);
  const rootBefore = await snapshot(root.path);

  await using server = await connectRoot(root.path);
  const client = server;
  const inspected = await client.call("inspect_files", {
    paths: ["data.json"],
  });
  const [file] = (inspected.structuredContent as { files: Descriptor[] }).files;
  assert.ok(file !== undefined);

  async function refused(
    name: string,
    args: Record<string, unknown>,
    code: string,
  ): Promise<void> {
    const result = await client.call(name, args);
    assert.equal(
      result.isError,
      true,
      `${name} ${JSON.stringify(args)}: ${textOf(result)}`,
    );
    assert.equal(result.structuredContent, undefined);
    const text = textOf(result);
    assert.ok(
      text.startsWith(`${code}: `),
      `${name} ${JSON.stringify(args)}: ${text}`,
    );
    // A host path appears only when the host sent it.
    if (!JSON.stringify(args).includes(outside.path)) {
      assert.ok(
        !text.includes(outside.path),
        `the error names a host path: ${text}`,
      );
    }
  }

  await t.step(
    "a wrong digest is digest_mismatch",
    () =>
      refused("read_result", {
        reference: { ...file.reference, sha256: "0".repeat(64) },
      }, "digest_mismatch"),
  );
  await t.step(
    "an unknown result is unknown_result",
    () =>
      refused("read_result", {
        reference: { ...file.reference, result: "result-99" },
      }, "unknown_result"),
  );
  await t.step("a missing pointer is pointer_not_found", () =>
    refused(
      "read_result",
      {
        reference: {
          ...file.reference,
          select: { kind: "json_pointer", pointer: "/a/c" },
        },
      },
      "pointer_not_found",
    ));
  await t.step(
    "a composed write with a wrong digest writes nothing",
    () =>
      refused("write_file", {
        path: "x.txt",
        contents: ["a", { ...file.reference, sha256: "f".repeat(64) }],
      }, "digest_mismatch"),
  );
  await t.step("paths outside the root are outside_root", async () => {
    await refused("inspect_files", {
      paths: [`../${outside.path.split("/").at(-1)}/secret.txt`],
    }, "outside_root");
    await refused(
      "inspect_files",
      { paths: [`${outside.path}/secret.txt`] },
      "outside_root",
    );
    await refused("inspect_files", { paths: ["/etc/passwd"] }, "outside_root");
    await refused("write_file", {
      path: `${outside.path}/new.txt`,
      contents: ["x"],
    }, "outside_root");
    await refused(
      "write_file",
      { path: "../new.txt", contents: ["x"] },
      "outside_root",
    );
  });
  await t.step("symlinks leaving the root are symlink_escape", async () => {
    await refused(
      "inspect_files",
      { paths: ["secret-link.txt"] },
      "symlink_escape",
    );
    await refused(
      "inspect_files",
      { paths: ["out/secret.txt"] },
      "symlink_escape",
    );
    await refused(
      "write_file",
      { path: "out/new.txt", contents: ["x"] },
      "symlink_escape",
    );
    await refused(
      "write_file",
      { path: "secret-link.txt", contents: ["x"] },
      "symlink_escape",
    );
  });
  await t.step(
    "writes into .git are git_write, also through a symlink",
    async () => {
      await refused("write_file", {
        path: ".git/config",
        contents: ["[core]\nhooksPath=/tmp\n"],
      }, "git_write");
      await refused("write_file", {
        path: "sub/../.GIT/hooks/pre-commit",
        contents: ["#!/bin/sh\n"],
      }, "git_write");
      await refused(
        "write_file",
        { path: "git-link/config", contents: ["x"] },
        "git_write",
      );
    },
  );
  await t.step(
    "a FIFO is not_regular_file, for reading and writing, and the server keeps answering",
    async () => {
      await refused("inspect_files", { paths: ["pipe"] }, "not_regular_file");
      await refused(
        "write_file",
        { path: "pipe", contents: ["x"] },
        "not_regular_file",
      );
      const listed = await client.call("list_results", {});
      assert.equal(
        (listed.structuredContent as { results: unknown[] }).results.length,
        1,
      );
    },
  );
  await t.step(
    "malformed arguments and unknown tools are refused by code",
    async () => {
      await refused(
        "inspect_files",
        { paths: ["data.json"], extra: 1 },
        "invalid_arguments",
      );
      await refused(
        "read_result",
        { reference: { result: "result-1" } },
        "invalid_reference",
      );
      await refused("list_results", { offset: -1 }, "invalid_range");
      await refused("delete_everything", {}, "unknown_tool");
    },
  );

  assert.deepEqual(await snapshot(outside.path), outsideBefore);
  assert.deepEqual(await snapshot(root.path), rootBefore);
});

Deno.test("loom mcp writes only JSON-RPC to standard output, answers every request it read and exits 0 when its input ends", async () => {
  await using root = await tempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: mcpArgs(["--root", root.path]),
    cwd: REPO_ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const messages = [
    initializeMessage(),
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "inspect_files", arguments: { paths: ["nope.txt"] } },
    },
  ];
  // All at once, and the input ends at once: every answer still arrives.
  const writer = child.stdin.getWriter();
  await writer.write(
    new TextEncoder().encode(
      messages.map((m) => JSON.stringify(m) + "\n").join(""),
    ),
  );
  await writer.close();
  const stdout = await new Response(child.stdout).text();
  const status = await child.status;
  const stderr = new TextDecoder().decode(
    await new Response(child.stderr).arrayBuffer(),
  );
  assert.equal(status.code, 0, stderr);
  const lines = stdout.split("\n").filter((line) => line !== "");
  assert.equal(lines.length, 3, stdout);
  const replies = lines.map((line) => JSON.parse(line));
  assert.ok(replies.every((r) => r.jsonrpc === "2.0"));
  assert.deepEqual(replies.map((r) => r.id), [1, 2, 3]);
  assert.equal(replies[0].result.serverInfo.name, "loom");
  assert.equal(replies[1].result.tools.length, 5);
  assert.equal(replies[2].result.isError, true);
  assert.match(replies[2].result.content[0].text, /^not_found: /);
  assert.match(stderr, /loom mcp: serving 5 tools over stdio/);
});

Deno.test("with --session the stored results outlive the server, and a tampered journal is refused", async () => {
  await using root = await tempDir();
  await using sessions = await tempDir();
  const session = `${sessions.path}/mcp`;
  await Deno.writeTextFile(`${root.path}/a.json`, '{"k":"v1"}');
  let reference: Descriptor["reference"];
  {
    await using server = await connectRoot(root.path, ["--session", session]);
    const inspected = await server.call("inspect_files", { paths: ["a.json"] });
    reference =
      (inspected.structuredContent as { files: Descriptor[] }).files[0]!
        .reference;
  }
  // The file changes; the stored result does not.
  await Deno.writeTextFile(`${root.path}/a.json`, '{"k":"v2"}');
  {
    await using server = await connectRoot(root.path, ["--session", session]);
    const read = await server.call(
      "read_result",
      readArgs(reference, { kind: "json_pointer", pointer: "/k" }),
    );
    assert.deepEqual(read.structuredContent, { selected_text: "v1" });
    const again = await server.call("inspect_files", { paths: ["a.json"] });
    assert.equal(
      (again.structuredContent as { files: Descriptor[] }).files[0]!.result,
      "result-2",
    );
    assert.match(server.stderr(), /1 results restored/);
  }
  const journal = `${session}/journal.jsonl`;
  const text = await Deno.readTextFile(journal);
  await Deno.writeTextFile(
    journal,
    text.replace("inspect_files a.json", "inspect_files b.json"),
  );
  const output = await new Deno.Command(Deno.execPath(), {
    args: mcpArgs(["--root", root.path, "--session", session]),
    cwd: REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 2);
  assert.equal(output.stdout.length, 0);
  assert.match(new TextDecoder().decode(output.stderr), /session_tampered/);
});

bwrapTest(
  "where bubblewrap works, the server's file effects run inside it and still see only the root",
  async () => {
    await using root = await tempDir();
    await Deno.writeTextFile(`${root.path}/a.txt`, "inside\n");
    await using server = await connectRoot(root.path);
    assert.match(
      server.stderr(),
      /serving 5 tools over stdio, root .* \(bubblewrap\)/,
    );
    const inside = await server.call("inspect_files", { paths: ["a.txt"] });
    assert.equal(inside.isError, undefined, textOf(inside));
    const outside = await server.call("inspect_files", {
      paths: ["/etc/hostname"],
    });
    assert.match(textOf(outside), /^outside_root: /);
  },
);
