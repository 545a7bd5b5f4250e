// run_code end to end (issue 35's proof): the SDK's own client drives the
// real `loom mcp --servers FILE --code` in front of the real upstream
// servers from npm (server-filesystem, server-everything). The model's code
// sorts and filters a large JSON file, passes one tool's answer to another,
// reads a reference from an earlier offloaded call, returns a value too
// large to answer (read back by pointer), catches a ToolError and leaves
// one uncaught; "code": false keeps a tool out of reach; attacks end their
// run and the gateway still answers.
import assert from "node:assert/strict";
import { tempDir } from "../../_kit.ts";
import {
  assertToolError,
  connectGateway,
  denoEntry,
  descriptorOf,
  EVERYTHING,
  FILESYSTEM,
  readArgs,
  serversFile,
  textOf,
  type ToolAnswer,
} from "../../_kit/mcp.ts";
import { bwrapTest } from "../../security/_bwrap.ts";
import { writeSaleItems } from "../../code/_sale_items.ts";

function answerOf(answer: ToolAnswer): Record<string, unknown> {
  assert.notEqual(answer.isError, true, textOf(answer));
  return answer.structuredContent as Record<string, unknown>;
}

bwrapTest(
  "run_code through the gateway: data moves between real upstream tools without passing through the host",
  async (t) => {
    await using dir = await tempDir();
    const root = `${dir.path}/root`;
    await Deno.mkdir(root);
    const { path: data, items } = await writeSaleItems(root);
    const servers = await serversFile(dir.path, {
      fs: denoEntry(FILESYSTEM, [root]),
      everything: {
        ...denoEntry(EVERYTHING, ["stdio"]),
        tools: { "get-env": { code: false } },
      },
    });
    await using gateway = await connectGateway(servers, [
      "--code",
      "--catalog",
      "full",
    ]);
    const run = (code: string, extra: Record<string, unknown> = {}) =>
      gateway.call("run_code", { code, ...extra });
    // The code's first line where it works on the sale items.
    const readItems =
      `const { items } = JSON.parse(text(await tools.fs.read_text_file({ path: ${
        JSON.stringify(data)
      } })));`;

    await t.step(
      "run_code is listed with the same description on every listing, saying it is confined",
      async () => {
        const first = (await gateway.tools()).find((tool) =>
          tool.name === "run_code"
        );
        assert.ok(first);
        const again = (await gateway.tools()).find((tool) =>
          tool.name === "run_code"
        );
        assert.equal(JSON.stringify(again), JSON.stringify(first));
        // Two servers' declarations pass 6 KiB: the names, typed by the listing.
        assert.match(
          first.description!,
          /tools\.fs: read_file, read_text_file,/,
        );
        assert.match(
          first.description!,
          /tools\.everything: echo, get_annotated_message,/,
        );
        assert.doesNotMatch(first.description!, /get_env/);
        assert.match(gateway.stderr(), /run_code confined by bubblewrap/);
      },
    );

    await t.step(
      "sorting and filtering a 1.3 MB JSON file answers a few hundred bytes",
      async () => {
        const answer = await run(`
      ${readItems}
      const sale = items.filter((item: { tags: string[] }) => item.tags.includes("sale"));
      console.log("on sale", sale.length);
      return sale.sort((a, b) => b.price - a.price || a.id - b.id).slice(0, 5).map((item) => item.id);`);
        const expected = items.filter((i) => i.tags.includes("sale"))
          .sort((a, b) => b.price - a.price || a.id - b.id).slice(0, 5).map((
            i,
          ) => i.id);
        const got = answerOf(answer);
        assert.deepEqual(got.result, expected);
        assert.deepEqual(got.logs, ["on sale 10000"]);
        assert.equal(got.calls, 1);
        assert.deepEqual(answer._meta, {
          "loom/code": { confinement: "bubblewrap" },
        });
        assert.ok(textOf(answer).length < 300, textOf(answer));
      },
    );

    await t.step("one tool's answer passed to another", async () => {
      const answer = await run(`
      const sum = text(await tools.everything.get_sum({ a: 40, b: 2 }));
      await tools.fs.write_file({ path: ${
        JSON.stringify(`${root}/sum.txt`)
      }, content: sum });
      return text(await tools.fs.read_text_file({ path: ${
        JSON.stringify(`${root}/sum.txt`)
      } }));`);
      const got = answerOf(answer);
      assert.match(String(got.result), /42/);
      assert.equal(await Deno.readTextFile(`${root}/sum.txt`), got.result);
      assert.equal(got.calls, 3);
    });

    await t.step(
      "a reference from an earlier offloaded call, read whole in code",
      async () => {
        const direct = await gateway.call("fs__read_text_file", { path: data });
        const descriptor = descriptorOf(direct);
        const answer = await run(`
      const doc = await loom.read(${JSON.stringify(descriptor.reference)});
      const price = await loom.read({ ...${
          JSON.stringify(descriptor.reference)
        }, select: { kind: "json_pointer", pointer: "/items/29999/price" } });
      return { length: doc.length, price };`);
        const got = answerOf(answer);
        assert.deepEqual(got.result, {
          length: JSON.stringify({ items }).length,
          price: items[29_999]!.price,
        });
        const forged = await run(
          `return await loom.read({ ...${
            JSON.stringify(descriptor.reference)
          }, sha256: "${"0".repeat(64)}" });`,
        );
        assertToolError(forged, /digest_mismatch|does not match/);
      },
    );

    await t.step(
      "a value too large to answer is stored and read back by pointer",
      async () => {
        const answer = await run(`
      ${readItems}
      return items.filter((item) => item.price >= 990);`);
        const got = answerOf(answer);
        assert.equal(got.result, undefined);
        const stored = got.result_stored as {
          reference: { result: string; sha256: string };
          utf8_bytes: number;
        };
        const expected = items.filter((i) => i.price >= 990);
        assert.ok(stored.utf8_bytes > 8192);
        const { reference } = readArgs(stored, {
          kind: "json_pointer",
          pointer: `/${expected.length - 1}/id`,
        });
        const read = await gateway.call("read_result", {
          reference: { ...reference, rendering: "json" },
        });
        assert.deepEqual(read.structuredContent, {
          selected_json: String(expected.at(-1)!.id),
        });
      },
    );

    await t.step(
      "a ToolError caught in code, and one left uncaught",
      async () => {
        const caught = await run(`
      try { await tools.fs.read_text_file({ path: "/nowhere/at/all" }); }
      catch (e) { return [e instanceof ToolError, e.server, e.tool, e.result.isError]; }`);
        assert.deepEqual(answerOf(caught).result, [
          true,
          "fs",
          "read_text_file",
          true,
        ]);
        const uncaught = await run(
          `console.log("about to fail");\nawait tools.fs.read_text_file({ path: "/nowhere/at/all" });`,
        );
        assertToolError(
          uncaught,
          /^code_error: ToolError: .*\n\s+at async run_code \(code:2:/,
        );
        assert.match(textOf(uncaught), /about to fail/);
      },
    );

    await t.step(
      'a tool marked "code": false is out of reach, with a clear error',
      async () => {
        const answer = await run(
          `try { await callTool("everything", "get-env", {}); } catch (e) { return [e.code, e.message]; }`,
        );
        assert.deepEqual(answerOf(answer).result, [
          "code_disabled",
          'everything/get-env is not callable from code: the servers file says "code": false',
        ]);
      },
    );

    await t.step(
      "attacks end their run, and the gateway still answers",
      async () => {
        const attacks: [string, Record<string, unknown>, RegExp][] = [
          [
            "return await Deno.readTextFile('/etc/passwd');",
            {},
            /^code_error: NotCapable/,
          ],
          ["return Deno.env.toObject();", {}, /^code_error: NotCapable/],
          ["while (true) {}", { timeout_ms: 300 }, /^code_timeout/],
          [
            "Deno.stdout.writeSync(new TextEncoder().encode('garbage that is not a frame'));\nawait new Promise(() => {});",
            {},
            /^code_error: The run wrote something/,
          ],
        ];
        for (const [code, extra, expected] of attacks) {
          const answer = await run(code, extra);
          assertToolError(answer, expected, code);
          const echo = await gateway.call("everything__echo", {
            message: "still here",
          });
          assert.match(textOf(echo), /still here/);
        }
      },
    );

    await t.step(
      "in search mode run_code is a constant tool, and search_tools declares what code calls",
      async () => {
        await using search = await connectGateway(servers, [
          "--code",
          "--catalog",
          "search",
        ]);
        const listed = await search.tools();
        const runCode = listed.find((tool) => tool.name === "run_code");
        assert.ok(runCode);
        assert.ok(listed.some((tool) => tool.name === "search_tools"));
        assert.doesNotMatch(runCode.description!, /tools\.fs|read_text_file/);
        assert.match(runCode.description!, /detail: "typescript"/);
        const found = await search.call("search_tools", {
          query: "read_text_file",
          detail: "typescript",
          limit: 1,
        });
        const [first] = JSON.parse(textOf(found)).tools;
        assert.match(first.typescript, /fs: \{[\s\S]*read_text_file\(args: \{/);
        const answer = await search.call("run_code", {
          code: `return text(await tools.fs.read_text_file({ path: ${
            JSON.stringify(`${root}/sum.txt`)
          } }));`,
        });
        assert.match(String(answerOf(answer).result), /42/);
      },
    );
  },
);
