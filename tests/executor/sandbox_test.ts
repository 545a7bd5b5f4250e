/**
 * The worker is confined by Deno, not only by commission: these tests call
 * the executor (and its worker) directly, with commission bypassed.
 */
import assert from "node:assert/strict";
import { WorkspaceExecutor } from "../../lib/executor/workspace_executor.ts";
import { workerPermissions } from "../../lib/executor/_permissions.ts";
import type { Reply, Request } from "../../lib/executor/_protocol.ts";
import { WORKER_SOURCE } from "../../lib/executor/_worker.ts";
import { tempDir } from "../_kit.ts";

const DENIED = /outside the workspace/;

/** An executor on a workspace beside `outside.txt`; disposing closes and removes both. */
async function besideOutside(): Promise<
  AsyncDisposable & {
    executor: WorkspaceExecutor;
    workspace: string;
    root: string;
  }
> {
  const root = await tempDir();
  const workspace = `${root.path}/workspace`;
  await Deno.mkdir(workspace);
  await Deno.writeTextFile(`${root.path}/outside.txt`, "outside secret\n");
  const executor = await WorkspaceExecutor.start({ workspace });
  return {
    executor,
    workspace,
    root: root.path,
    [Symbol.asyncDispose]: () => {
      executor.close();
      return root[Symbol.asyncDispose]();
    },
  };
}

Deno.test("The executor's worker is denied by Deno outside the workspace", async (t) => {
  await using scene = await besideOutside();
  const { executor, workspace, root } = scene;
  await t.step("inspect of /etc/passwd is NotCapable", async () => {
    const [entry] = await executor.inspect(["/etc/passwd"]);
    assert.equal(entry?.text, undefined);
    assert.equal(entry?.code, "outside_workspace");
    assert.match(
      entry?.error ?? "",
      /"\/etc\/passwd": it lies outside the workspace/,
    );
  });

  await t.step(
    "inspect of ../outside.txt next to the workspace is NotCapable",
    async () => {
      const [relative, absolute] = await executor.inspect([
        "../outside.txt",
        `${root}/outside.txt`,
      ]);
      for (const entry of [relative, absolute]) {
        assert.equal(entry?.text, undefined);
        assert.match(entry?.error ?? "", DENIED);
        assert.doesNotMatch(entry?.error ?? "", /outside secret/);
      }
    },
  );

  await t.step(
    "an edit outside is denied and changes nothing, inside or out",
    async () => {
      await Deno.writeTextFile(`${workspace}/kept.txt`, "kept\n");
      for (
        const path of [
          "../outside.txt",
          `${root}/outside.txt`,
          "../new-outside.txt",
        ]
      ) {
        await assert.rejects(
          executor.edit([
            { path: "kept.txt", contents: "changed\n" },
            { path, contents: "pwned\n" },
          ]),
          (error: Error & { code?: string }) => {
            assert.equal(error.code, "edit_failed");
            assert.match(error.message, DENIED);
            return true;
          },
        );
      }
      assert.equal(
        await Deno.readTextFile(`${root}/outside.txt`),
        "outside secret\n",
      );
      assert.equal(
        await Deno.readTextFile(`${workspace}/kept.txt`),
        "kept\n",
      );
      await assert.rejects(
        Deno.stat(`${root}/new-outside.txt`),
        Deno.errors.NotFound,
      );
    },
  );

  await t.step(
    "a symlink leading outside is refused by the worker's real-path check",
    async () => {
      // Deno checks the path as written and would follow the link; the
      // worker resolves it and refuses.
      await Deno.symlink(`${root}/outside.txt`, `${workspace}/link.txt`);
      await Deno.symlink(root, `${workspace}/up`);
      const [file] = await executor.inspect(["link.txt"]);
      assert.equal(file?.code, "symlink_escape");
      assert.doesNotMatch(file?.error ?? "", new RegExp(root));
      assert.equal(file?.text, undefined);
      await assert.rejects(
        executor.edit([{ path: "up/planted.txt", contents: "x" }]),
        { code: "symlink_escape" },
      );
      await assert.rejects(
        Deno.stat(`${root}/planted.txt`),
        Deno.errors.NotFound,
      );
    },
  );
});

/** Sends requests to a worker made exactly as the executor makes it. */
function rawWorker(
  workspace: string,
): Disposable & { call(request: Request): Promise<Reply> } {
  const url = URL.createObjectURL(
    new Blob([WORKER_SOURCE], { type: "text/javascript" }),
  );
  const worker = new Worker(url, {
    type: "module",
    deno: { permissions: workerPermissions(workspace) },
  });
  const waiting = new Map<number, (reply: Reply) => void>();
  worker.onmessage = (event: MessageEvent<Reply>) => {
    waiting.get(event.data.id)?.(event.data);
  };
  return {
    call(request) {
      return new Promise((resolve) => {
        waiting.set(request.id, resolve);
        worker.postMessage(request);
      });
    },
    [Symbol.dispose]() {
      worker.terminate();
      URL.revokeObjectURL(url);
    },
  };
}

Deno.test("The executor's worker holds no net, env, sys or ffi permission", async () => {
  await using dir = await tempDir();
  const workspace = dir.path;
  using worker = rawWorker(workspace);
  const init = await worker.call({
    op: "init",
    id: 1,
    workspace,
    maxFileBytes: 1024,
    digestFileBytes: 1024,
    surveyHelpers: 0,
    surveySharedFrom: 4096,
  });
  assert.ok("ok" in init && init.ok);
  const states =
    (init.value as { permissions: Record<string, string> }).permissions;
  for (const name of ["read", "write", "run", "net", "env", "sys", "ffi"]) {
    assert.notEqual(states[name], "granted", name);
  }
  assert.equal(states["read:workspace"], "granted");
  assert.equal(states["write:workspace"], "granted");
});
