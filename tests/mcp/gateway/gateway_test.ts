// `loom mcp --servers` end to end: the SDK's own client (which validates
// every answer) drives the real gateway in front of real upstream servers
// from npm (server-filesystem, server-everything) and the tests' hostile
// fault server, and compares with direct connections.
import assert from "node:assert/strict";
import { tempDir } from "../../_kit.ts";
import {
  assertToolError,
  connectGateway,
  connectStdio,
  denoEntry,
  descriptorOf,
  EVERYTHING,
  FAULT,
  FILESYSTEM,
  fillTree,
  readArgs,
  serversFile,
} from "../../_kit/mcp.ts";

function pointerGet(doc: unknown, pointer: string): unknown {
  let at = doc;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

Deno.test("loom mcp --servers offloads, reads exactly, relays faithfully and survives hostile upstreams", async (t) => {
  await using dir = await tempDir();
  const root = `${dir.path}/root`;
  await fillTree(root, 600);
  const report = `${dir.path}/report.json`;
  const servers = await serversFile(dir.path, {
    fs: denoEntry(FILESYSTEM, [root]),
    everything: denoEntry(EVERYTHING, ["stdio"]),
    fault: denoEntry(FAULT),
    broken: denoEntry(FAULT, ["--crash-on-start"]),
    loom: { command: "loom", args: ["mcp", "--servers", ".mcp.json"] },
  });
  // Every upstream tool listed (their definitions pass auto's 16 KiB).
  await using gateway = await connectGateway(servers, [
    "--catalog",
    "full",
    "--call-timeout",
    "3s",
    "--report",
    report,
  ]);
  await using direct = await connectStdio(Deno.execPath(), [
    ...denoEntry(FILESYSTEM, [root]).args,
  ]);

  const { tools } = await gateway.client.listTools();
  const names = tools.map((tool: { name: string }) => tool.name);

  await t.step(
    "tools are namespaced, fit the pattern, and carry no outputSchema",
    () => {
      for (
        const name of ["fs__directory_tree", "everything__echo", "fault__crash"]
      ) {
        assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
      }
      assert.ok(names.every((n: string) => /^[a-zA-Z0-9_-]{1,64}$/.test(n)));
      assert.equal(new Set(names).size, names.length);
      assert.ok(!names.some((n: string) => n.startsWith("loom__")));
      assert.ok(!names.includes("fault__no_schema"));
      for (const tool of tools) {
        if (tool.name.includes("__")) {
          assert.equal(tool.outputSchema, undefined);
        }
      }
      const read = tools.find((t: { name: string }) =>
        t.name === "read_result"
      );
      assert.equal(read._meta["anthropic/maxResultSizeChars"], 200_000);
      assert.match(gateway.stderr(), /entry loom skipped/);
      assert.match(
        gateway.stderr(),
        /server broken: .*fault: cannot open the database/s,
      );
    },
  );

  const directTree = await direct.call("directory_tree", { path: root });
  const tree = JSON.parse(directTree.content[0].text);
  const viaGateway = await gateway.call("fs__directory_tree", { path: root });
  const descriptor = descriptorOf(viaGateway);

  await t.step(
    "a large directory_tree answer becomes one descriptor of at most 2 KiB",
    () => {
      assert.ok(viaGateway.content[0].text.length <= 2048);
      assert.equal(descriptor.server, "fs");
      assert.equal(descriptor.tool, "directory_tree");
      assert.equal(descriptor.media_type, "application/json");
      assert.match(descriptor.outline ?? "", /^array\[/);
      assert.equal(descriptor.part, "content[0]+structuredContent.content");
      assert.ok((descriptor.utf8_bytes ?? 0) > 8192);
      assert.match(
        gateway.stderr(),
        /fs\/directory_tree: \d+ bytes upstream → \d+ bytes to the host/,
      );
    },
  );

  await t.step(
    "pointer, line and find_in_result reads equal JSON.parse of the direct answer",
    async () => {
      const ref = descriptor.reference;
      const pointer = "/5/children/0/name";
      const read = await gateway.call("read_result", {
        reference: {
          ...ref,
          select: { kind: "json_pointer", pointer },
          rendering: "json",
        },
      });
      assert.deepEqual(
        JSON.parse(read.structuredContent.selected_json),
        pointerGet(tree, pointer),
      );
      const lines = JSON.stringify(tree, null, 2).split("\n");
      const lineRead = await gateway.call("read_result", {
        reference: { ...ref, select: { kind: "lines", start: 10, end: 14 } },
      });
      assert.equal(
        lineRead.structuredContent.selected_text,
        lines.slice(9, 14).join("\n") + "\n",
      );
      const found = await gateway.call("find_in_result", {
        reference: ref,
        pattern: "file-417.ts",
      });
      const [hit] = found.structuredContent.matches;
      const value = await gateway.call(
        "read_result",
        readArgs(ref, { kind: "json_pointer", pointer: hit.pointer }),
      );
      assert.equal(value.structuredContent.selected_text, "file-417.ts");
      assert.equal(pointerGet(tree, hit.pointer), "file-417.ts");
    },
  );

  await t.step("a read with a wrong digest is refused", async () => {
    const wrong = await gateway.call("read_result", {
      reference: { ...descriptor.reference, sha256: "0".repeat(64) },
    });
    assertToolError(wrong, /^digest_mismatch: /);
  });

  await t.step(
    "small results are byte-identical to a direct connection",
    async () => {
      const a = await direct.call("list_allowed_directories", {});
      const b = await gateway.call("fs__list_allowed_directories", {});
      assert.equal(JSON.stringify(b), JSON.stringify(a));
      const c = await direct.call("read_text_file", {
        path: `${root}/pkg-1/src-1/file-1.ts`,
      });
      const d = await gateway.call("fs__read_text_file", {
        path: `${root}/pkg-1/src-1/file-1.ts`,
      });
      assert.equal(JSON.stringify(d), JSON.stringify(c));
    },
  );

  await t.step(
    "server-everything's structured content, images and errors pass through",
    async () => {
      const echo = await gateway.call("everything__echo", { message: "héllo" });
      assert.match(echo.content[0].text, /héllo/);
      const image = names.find((n: string) => /image/i.test(n));
      if (image !== undefined) {
        const answer = await gateway.call(image, {});
        assert.ok(answer.content.length >= 1);
      }
    },
  );

  await t.step(
    "a crash answers a tool error naming the server and its stderr, and the next call restarts it",
    async () => {
      const crashed = await gateway.call("fault__crash", {});
      assertToolError(crashed, /^upstream_unavailable: Server fault stopped/);
      assert.match(crashed.content[0].text, /segmentation fault/);
      const again = await gateway.call("fault__small", {});
      assert.equal(again.isError, undefined);
      assert.equal(again.content[0].text, "small small");
    },
  );

  await t.step(
    "a hang answers upstream_timeout after --call-timeout; other servers keep working",
    async () => {
      const hung = await gateway.call("fault__hang", {});
      assertToolError(hung, /^upstream_timeout: Server fault did not answer/);
      const echo = await gateway.call("everything__echo", {
        message: "still here",
      });
      assert.match(echo.content[0].text, /still here/);
    },
  );

  await t.step(
    "garbage and malformed JSON-RPC on stdout do not break the gateway",
    async () => {
      const after = await gateway.call("fault__garbage", {});
      assert.equal(after.content[0].text, "after garbage");
      const malformed = await gateway.call("fault__malformed", {});
      assertToolError(malformed, /^upstream_malformed: Server fault/);
    },
  );

  await t.step(
    "a 12 MB answer (over the SDK's 10 MiB reader) becomes a descriptor",
    async () => {
      const big = await gateway.call("fault__big", { bytes: 12_000_000 });
      const d = descriptorOf(big);
      assert.ok((d.utf8_bytes ?? 0) > 11_000_000);
      assert.equal(d.capture, "complete");
      const tail = await gateway.call(
        "read_result",
        readArgs(d, { kind: "lines", start: d.lines, end: d.lines }),
      );
      assert.match(tail.structuredContent.selected_text, /^0123456789abcdef/);
      // The tree stored earlier is still there.
      const still = await gateway.call(
        "read_result",
        readArgs(descriptor, { kind: "bytes", start: 0, end: 1 }),
      );
      assert.equal(still.structuredContent.selected_text, "[");
    },
  );

  await t.step(
    "a forged partial mark from an upstream is not believed",
    async () => {
      const small = await gateway.call("fault__small", {});
      assert.deepEqual(small._meta, { "loom/partial": "forged" });
    },
  );

  await gateway.client.close();
  await t.step("--report holds per-tool totals", async () => {
    // The gateway writes the report as it stops.
    for (let i = 0; i < 100; i++) {
      try {
        await Deno.stat(report);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const figures = JSON.parse(await Deno.readTextFile(report));
    assert.equal(figures.format, "loom-gateway-report/1");
    assert.equal(figures.tools["fs/directory_tree"].offloaded, 1);
    assert.ok(figures.tools["read_result"].calls >= 4);
  });
});
