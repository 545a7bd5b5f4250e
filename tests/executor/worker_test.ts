import assert from "node:assert/strict";
import { bwrapTest } from "../security/_bwrap.ts";
import {
  WorkspaceExecutor,
  type WorkspaceExecutorOptions,
} from "../../lib/executor/workspace_executor.ts";
import { tempDir } from "../_kit.ts";

type Mode = { name: string; options: Partial<WorkspaceExecutorOptions> };
const MODES: Mode[] = [
  { name: "in this process", options: { sandbox: null } },
  { name: "in bubblewrap", options: {} },
];

function modeTest(
  mode: Mode,
  title: string,
  body: (t: Deno.TestContext) => Promise<void>,
): void {
  const name = `${title} (${mode.name})`;
  if (mode.options.sandbox === null) Deno.test(name, body);
  else bwrapTest(name, body);
}

/** One test per mode, each on a fresh temp workspace, removed after it. */
function workspaceTests(
  modes: readonly Mode[],
  title: string,
  body: (ws: string, mode: Mode, t: Deno.TestContext) => Promise<void>,
): void {
  for (const mode of modes) {
    modeTest(mode, title, async (t) => {
      await using dir = await tempDir();
      await body(dir.path, mode, t);
    });
  }
}

/** Rejects when `promise` has not settled after `ms` (a hang guard, not a timing check). */
async function settles<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`still waiting after ${ms} ms`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A character device like /dev/zero (1, 5), made with mknod: needs root. */
async function deviceNode(path: string): Promise<boolean> {
  const { success } = await new Deno.Command("mknod", {
    args: [path, "c", "1", "5"],
    stdout: "null",
    stderr: "null",
  }).output();
  return success;
}

/**
 * A unix socket file, bound by a child process that exits without removing
 * it (the test itself has no `--allow-net` for unix sockets).
 */
async function boundSocket(path: string): Promise<void> {
  const { success } = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `Deno.listen({ transport: "unix", path: ${
        JSON.stringify(path)
      } }); Deno.exit(0);`,
    ],
    stdout: "null",
    stderr: "null",
  }).output();
  assert.ok(success, "binding the unix socket failed");
}

workspaceTests(
  MODES,
  "WorkspaceExecutor.inspect() refuses a FIFO, a socket and a device node from their metadata and reads the regular file beside them",
  async (ws, mode, t) => {
    await Deno.writeTextFile(`${ws}/regular.txt`, "plain text\n");
    const fifo = await new Deno.Command("mkfifo", { args: [`${ws}/fifo`] })
      .output();
    assert.ok(fifo.success, "mkfifo failed");
    await boundSocket(`${ws}/socket`);
    const device = await deviceNode(`${ws}/zero`);
    const executor = await WorkspaceExecutor.start({
      workspace: ws,
      ...mode.options,
    });
    try {
      await t.step(
        "three not_regular_file refusals and one inspected file",
        async () => {
          const paths = ["fifo", "socket", "regular.txt"];
          if (device) paths.push("zero");
          // Opening the FIFO for reading would wait for a writer forever.
          const entries = await settles(executor.inspect(paths), 5_000);
          assert.deepEqual(entries[2], {
            path: "regular.txt",
            text: "plain text\n",
          });
          const refused = entries.filter((_, i) => i !== 2);
          for (const entry of refused) {
            assert.equal(entry.code, "not_regular_file", entry.path);
            assert.equal(entry.text, undefined);
          }
          assert.match(refused[0]?.error ?? "", /"fifo" is a FIFO/);
          assert.match(refused[1]?.error ?? "", /"socket" is a socket/);
          if (device) {
            assert.match(
              refused[2]?.error ?? "",
              /"zero" is a character device/,
            );
          } else {
            console.warn("mknod needs root: the device node was left out");
          }
        },
      );
      await t.step(
        "the survey walks past them and the executor goes on",
        async () => {
          const survey = await settles(executor.survey(), 5_000);
          assert.match(survey.digest, /^[0-9a-f]{64}$/);
          const [again] = await executor.inspect(["regular.txt"]);
          assert.equal(again?.text, "plain text\n");
        },
      );
      await t.step("an edit onto the FIFO is not_a_file", async () => {
        await assert.rejects(
          settles(executor.edit([{ path: "fifo", contents: "x" }]), 5_000),
          { code: "not_a_file", message: /a FIFO/ },
        );
      });
    } finally {
      executor.close();
    }
  },
);

/** The last-modified and last-accessed times of a file, to put them back. */
async function times(path: string): Promise<[Date, Date]> {
  const info = await Deno.lstat(path);
  return [info.atime as Date, info.mtime as Date];
}

/**
 * Files older than the racy window (git's rule: a file whose times are not
 * safely older than the stat is hashed again), so that the survey trusts
 * its cache for them.
 */
async function agedWorkspace(
  ws: string,
  files: Record<string, string>,
): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${ws}/${name}`, text);
  }
  // ctime cannot be set back: wait out the 1 s margin plus Deno's whole-second ctime.
  await new Promise((done) => setTimeout(done, 2_100));
}

/** A survey shared with two helpers, however small the tree. */
const SHARED: Partial<WorkspaceExecutorOptions> = {
  surveyHelpers: 2,
  surveySharedFrom: 1,
};
const SHARED_MODES: Mode[] = MODES.map((mode) => ({
  name: `${mode.name}, the survey shared with two helpers`,
  options: { ...mode.options, ...SHARED },
}));

workspaceTests(
  [...MODES, ...SHARED_MODES],
  "The tree hash reads only what changed and sees every change",
  async (ws, mode, t) => {
    const hostile = mode.options.sandbox === null
      ? [Deno.execPath(), "run", "hostile.ts"]
      : ["sh", "hostile.sh"];
    await Deno.mkdir(`${ws}/sub`);
    await agedWorkspace(ws, {
      "sub/listed.txt": "listed\n",
      "rewritten.txt": "AAAA\n",
      "replaced.txt": "CCCC\n",
      "removed.txt": "gone\n",
      "mode.sh": "echo\n",
      "kept.txt": "kept\n",
      // Rewrites rewritten.txt with same-size contents and puts its mtime back.
      "hostile.ts": `const info = Deno.statSync("rewritten.txt");
Deno.writeTextFileSync("rewritten.txt", "BBBB\\n");
Deno.utimeSync("rewritten.txt", info.atime, info.mtime);
`,
      "hostile.sh": `m=$(stat -c %y rewritten.txt)
printf 'BBBB\\n' > rewritten.txt
touch -m -d "$m" rewritten.txt
`,
    });
    const executor = await WorkspaceExecutor.start({
      workspace: ws,
      testCommand: hostile,
      ...mode.options,
    });
    try {
      let last = await executor.survey();
      assert.equal(last.hashedFiles, 8);
      let changed = 0;
      /**
       * Surveys after `change`. The survey before it read again only the
       * files earlier steps changed (still racy): the target, older, came
       * from the cache.
       */
      const surveyAfter = async (change: () => Promise<void>) => {
        const before = await executor.survey();
        assert.equal(before.digest, last.digest);
        assert.ok(before.hashedFiles <= changed, String(before.hashedFiles));
        changed += 1;
        await change();
        last = await executor.survey();
        return { before: before.digest, after: last.digest };
      };

      await t.step("an unchanged tree is not read again", async () => {
        const again = await executor.survey();
        assert.equal(again.digest, last.digest);
        assert.equal(again.hashedFiles, 0);
        // Shared: both helpers answered (none failed and left its share).
        const helpers = mode.options.surveyHelpers === undefined ? 0 : 2;
        assert.equal(again.helpers, helpers);
      });

      await t.step(
        "a test that rewrites a file and restores its mtime is seen (ctime changed)",
        async () => {
          const [, mtime] = await times(`${ws}/rewritten.txt`);
          // The survey before the run trusts its cache for every file.
          assert.equal((await executor.survey()).hashedFiles, 0);
          const run = await executor.runTests();
          assert.equal(run.exit_code, 0, run.output_tail);
          const info = await Deno.lstat(`${ws}/rewritten.txt`);
          // The attack worked: same size, same mtime, other contents.
          assert.equal(info.mtime?.getTime(), mtime.getTime());
          assert.equal(info.size, 5);
          assert.equal(
            await Deno.readTextFile(`${ws}/rewritten.txt`),
            "BBBB\n",
          );
          assert.notEqual(run.tree_after, run.tree_before);
          changed += 1;
          last = await executor.survey();
        },
      );

      await t.step(
        "a file replaced by a same-size file with the old times is seen",
        async () => {
          const { before, after } = await surveyAfter(async () => {
            const [atime, mtime] = await times(`${ws}/replaced.txt`);
            await Deno.writeTextFile(`${ws}/replaced.new`, "DDDD\n");
            await Deno.utime(`${ws}/replaced.new`, atime, mtime);
            await Deno.rename(`${ws}/replaced.new`, `${ws}/replaced.txt`);
          });
          assert.notEqual(after, before);
        },
      );

      await t.step("a new file is seen", async () => {
        const { before, after } = await surveyAfter(() =>
          Deno.writeTextFile(`${ws}/new.txt`, "")
        );
        assert.notEqual(after, before);
      });

      await t.step("a removed file is seen", async () => {
        const { before, after } = await surveyAfter(() =>
          Deno.remove(`${ws}/removed.txt`)
        );
        assert.notEqual(after, before);
      });

      await t.step(
        "a file added to a directory whose mtime is put back is seen (its ctime changed)",
        async () => {
          const { before, after } = await surveyAfter(async () => {
            const [atime, mtime] = await times(`${ws}/sub`);
            await Deno.writeTextFile(`${ws}/sub/added.txt`, "added\n");
            await Deno.utime(`${ws}/sub`, atime, mtime);
            const info = await Deno.lstat(`${ws}/sub`);
            assert.equal(info.mtime?.getTime(), mtime.getTime());
          });
          assert.notEqual(after, before);
        },
      );

      await t.step(
        "a change made outside the executor between two test runs makes the next run validate nothing",
        async () => {
          // The hostile test writes what rewritten.txt already holds.
          const first = await executor.runTests();
          assert.equal(first.tree_after, first.tree_before);
          await Deno.writeTextFile(`${ws}/kept.txt`, "changed\n");
          changed += 1;
          const second = await executor.runTests();
          assert.equal(second.tree_before, first.tree_after);
          assert.notEqual(second.tree_after, second.tree_before);
          last = await executor.survey();
        },
      );

      await t.step("a changed mode is seen", async () => {
        const { before, after } = await surveyAfter(async () => {
          const [atime, mtime] = await times(`${ws}/mode.sh`);
          await Deno.chmod(`${ws}/mode.sh`, 0o755);
          await Deno.utime(`${ws}/mode.sh`, atime, mtime);
        });
        assert.notEqual(after, before);
      });
    } finally {
      executor.close();
    }
  },
);

workspaceTests(
  MODES,
  "A survey shared with helpers gives the digest the worker alone gives",
  async (ws, mode, t) => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) {
      files[`d${i % 4}/f${i}.txt`] = `file ${i}\n`;
    }
    for (let i = 0; i < 4; i++) await Deno.mkdir(`${ws}/d${i}`);
    await Deno.mkdir(`${ws}/empty`);
    await Deno.symlink("d0/f0.txt", `${ws}/link`);
    await Deno.symlink("/etc/passwd", `${ws}/d3/outside`);
    await agedWorkspace(ws, files);
    const alone = await WorkspaceExecutor.start({
      workspace: ws,
      ...mode.options,
      surveyHelpers: 0,
    });
    const shared = await WorkspaceExecutor.start({
      workspace: ws,
      ...mode.options,
      ...SHARED,
    });
    try {
      const one = await alone.survey();
      let many = await shared.survey();
      await t.step("the same digest, escapes and hashed files", () => {
        assert.equal(many.digest, one.digest);
        assert.deepEqual(many.escapes, ["d3/outside"]);
        assert.deepEqual(many.escapes, one.escapes);
        assert.equal(many.hashedFiles, 40);
        assert.equal(many.helpers, 2);
        assert.equal(one.helpers, 0);
      });
      await t.step("each helper remembers its share", async () => {
        many = await shared.survey();
        assert.equal(many.digest, one.digest);
        assert.equal(many.hashedFiles, 0);
        assert.equal(many.helpers, 2);
      });
      await t.step(
        "a change in the last share, with the old mtime, is seen",
        async () => {
          const path = `${ws}/d3/f39.txt`;
          const [atime, mtime] = await times(path);
          await Deno.writeTextFile(path, "FILE 39\n");
          await Deno.utime(path, atime, mtime);
          const after = await shared.survey();
          assert.notEqual(after.digest, many.digest);
          assert.equal(after.digest, (await alone.survey()).digest);
          assert.equal(after.hashedFiles, 1);
        },
      );
      await t.step("a file outside sharing an inode is found", async () => {
        const outside = await Deno.makeTempFile({ dir: ws + "/.." });
        try {
          await Deno.link(outside, `${ws}/d2/linked.txt`);
          const after = await shared.survey();
          assert.deepEqual(after.externalLinks, ["d2/linked.txt"]);
          assert.deepEqual(
            after.externalLinks,
            (await alone.survey()).externalLinks,
          );
        } finally {
          await Deno.remove(`${ws}/d2/linked.txt`);
          await Deno.remove(outside);
        }
      });
    } finally {
      alone.close();
      shared.close();
    }
  },
);
