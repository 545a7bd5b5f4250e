/**
 * Every answer valid for every client: each Loom tool listed with an
 * `outputSchema` is called on every answer path — text, JSON, images,
 * audio, blobs, continued reads, searches, listings, writes and errors —
 * through the official SDK client, which (once it has listed the tools)
 * refuses a success without `structuredContent` and validates the
 * `structuredContent` it gets against the tool's `outputSchema`. The
 * gateway serves its retrieval tools, Loom's own root tools and upstream
 * answers offloaded into its store (server-everything's image, the tests'
 * fault server's audio and blob), with a session in a store, so bodies
 * are read back from it.
 */
import "../_session_key.ts";
import assert from "node:assert/strict";
import { Ajv } from "ajv";
import { tempDir } from "../_kit.ts";
import {
  connectGateway,
  denoEntry,
  type Descriptor,
  EVERYTHING,
  FAULT,
  readArgs,
  rootFolder,
  serversFile,
  type ToolAnswer,
} from "../_kit/mcp.ts";

Deno.test("every Loom tool with an outputSchema answers valid structuredContent on every path, through the official SDK client with its validation on", async (t) => {
  await using dir = await tempDir();
  const root = await rootFolder(`${dir.path}/root`, {
    "a.txt": "alpha\nbeta\ngamma\n",
    "rows.json": JSON.stringify({
      rows: Array.from({ length: 900 }, (_, id) => ({ id, name: `row ${id}` })),
    }),
  });
  const servers = await serversFile(dir.path, {
    everything: { ...denoEntry(EVERYTHING, ["stdio"]), persist: true },
    fault: { ...denoEntry(FAULT), persist: true },
  });
  await using gateway = await connectGateway(servers, [
    "--root",
    root,
    "--store",
    `sqlite:${dir.path}/loom.db`,
    "--offload-bytes",
    "256",
  ]);
  // Listing the tools is what turns the client's validation on.
  const listed = await gateway.tools();
  const schemas = new Map(
    listed.filter((tool) => tool.outputSchema !== undefined).map((
      tool,
    ) => [tool.name, tool.outputSchema!]),
  );
  assert.deepEqual([...schemas.keys()].sort(), [
    "find_in_result",
    "inspect_files",
    "list_results",
    "read_result",
    "write_file",
  ]);
  // Our own check as well, against the listed schema, with another validator.
  const ajv = new Ajv({ strict: false, allErrors: true });
  const paths = new Map<string, Set<string>>();
  const call = async (
    path: string,
    name: string,
    args: Record<string, unknown>,
    expect: "ok" | "error" = "ok",
  ): Promise<ToolAnswer> => {
    const answer = await gateway.call(name, args);
    if (expect === "error") {
      assert.equal(answer.isError, true, `${path}: ${JSON.stringify(answer)}`);
    } else {
      assert.notEqual(
        answer.isError,
        true,
        `${path}: ${answer.content?.[0]?.text}`,
      );
      assert.ok(answer.structuredContent !== undefined, path);
    }
    if (answer.structuredContent !== undefined) {
      const valid = ajv.compile(schemas.get(name)!);
      assert.ok(
        valid(answer.structuredContent),
        `${path}: ${ajv.errorsText(valid.errors)}`,
      );
    }
    paths.set(name, (paths.get(name) ?? new Set()).add(path));
    return answer;
  };

  const [text, rows] = (await call("inspect_files", "inspect_files", {
    paths: ["a.txt", "rows.json"],
  })).structuredContent.files as Descriptor[];
  await call("inspect_files outside the root", "inspect_files", {
    paths: ["../x"],
  }, "error");

  await t.step("text: whole, bytes, lines", async () => {
    for (
      const select of [
        { kind: "whole" },
        { kind: "bytes", start: 0, end: 5 },
        { kind: "lines", start: 2, end: 3 },
      ]
    ) {
      await call(`text ${select.kind}`, "read_result", readArgs(text!, select));
    }
  });

  await t.step("JSON: a pointer as text and as JSON", async () => {
    const name = { kind: "json_pointer", pointer: "/rows/7/name" };
    const named = await call(
      "json pointer",
      "read_result",
      readArgs(rows!, name),
    );
    assert.equal(named.structuredContent.selected_text, "row 7");
    const json = await call("json rendering", "read_result", {
      reference: {
        ...rows!.reference,
        select: { kind: "json_pointer", pointer: "/rows/7" },
        rendering: "json",
      },
    });
    assert.equal(
      json.structuredContent.selected_json,
      '{"id":7,"name":"row 7"}',
    );
  });

  await t.step("a continued read: first part, then next", async () => {
    const first = await call(
      "continued read",
      "read_result",
      readArgs(rows!, { kind: "whole" }),
    );
    assert.equal(first.structuredContent.truncated, true);
    await call("continued read, next", "read_result", {
      reference: first.structuredContent.next,
    });
  });

  await t.step(
    "an image stored by the gateway, whole and as bytes",
    async () => {
      const answer = await gateway.call("everything__get-tiny-image", {});
      const { results } = JSON.parse(answer.content[0].text) as {
        results: Descriptor[];
      };
      const image = results.find((d) => d.media_type?.startsWith("image/"))!;
      const whole = await call(
        "image whole",
        "read_result",
        readArgs(image, { kind: "whole" }),
      );
      assert.equal(whole.content[0].type, "image");
      assert.equal(whole.structuredContent.media.type, "image");
      await call(
        "image bytes",
        "read_result",
        readArgs(image, { kind: "bytes", start: 0, end: 16 }),
      );
    },
  );

  await t.step("audio and a blob stored by the gateway, whole", async () => {
    const answer = await gateway.call("fault__media", { chars: 4096 });
    const { results } = JSON.parse(answer.content[0].text) as {
      results: Descriptor[];
    };
    const [audio, blob] = results;
    const heard = await call(
      "audio whole",
      "read_result",
      readArgs(audio!, { kind: "whole" }),
    );
    assert.equal(heard.content[0].type, "audio");
    const kept = await call(
      "blob whole",
      "read_result",
      readArgs(blob!, { kind: "whole" }),
    );
    assert.equal(kept.content[0].resource.blob.length, 4096);
    assert.equal(kept.structuredContent.media.type, "resource");
  });

  await t.step("searches and listings", async () => {
    for (let i = 0; i < 8; i += 1) {
      await Deno.writeTextFile(`${root}/more-${i}.txt`, `more ${i}\n`);
    }
    await call("inspect_files", "inspect_files", {
      paths: Array.from({ length: 8 }, (_, i) => `more-${i}.txt`),
    });
    await call("find literal", "find_in_result", {
      reference: rows!.reference,
      pattern: '{"id":42}',
    });
    await call("find regex, nothing found", "find_in_result", {
      reference: text!.reference,
      pattern: "^delta$",
      regex: true,
    });
    const page = await call("list first page", "list_results", {});
    assert.ok(page.structuredContent.next_offset !== null);
    await call("list next page", "list_results", {
      offset: page.structuredContent.next_offset,
    });
  });

  await t.step("a write from a literal and a reference", async () => {
    await call("write", "write_file", {
      path: "b.txt",
      contents: ["head\n", {
        ...text!.reference,
        select: { kind: "lines", start: 1, end: 1 },
      }],
    });
    await call("write outside the root", "write_file", {
      path: "../b.txt",
      contents: ["x"],
    }, "error");
  });

  await t.step("errors are tool errors, never a refused answer", async () => {
    await call("unknown result", "read_result", {
      reference: { ...text!.reference, result: "result-999" },
    }, "error");
    await call("digest mismatch", "read_result", {
      reference: { ...text!.reference, sha256: "0".repeat(64) },
    }, "error");
    await call("search of an unknown result", "find_in_result", {
      reference: { ...text!.reference, result: "result-999" },
      pattern: "x",
    }, "error");
    await call("list from a bad offset", "list_results", {
      offset: -1,
    }, "error");
  });

  // Every tool with an outputSchema was called.
  assert.deepEqual([...paths.keys()].sort(), [...schemas.keys()].sort());
});
