// A sandbox's end is reported only when none of its processes is left:
// killSandbox kills the init of the sandbox's PID namespace, so bubblewrap
// ends once the kernel has ended the whole namespace. The control kills
// bubblewrap itself (as Loom once did): its init, and with it the rest,
// dies a moment after bubblewrap's end was reported, and processes of the
// sandbox are still alive then. (The probe reads /proc, which needs all
// permissions: it runs as a subprocess.)
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { bwrapTest } from "./_bwrap.ts";

const PROBE = fileURLToPath(
  new URL("./_sandbox_end_probe.ts", import.meta.url),
);

async function probe(...args: string[]): Promise<{ left: number[] }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", PROBE, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.ok(output.success, "the probe ran");
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

bwrapTest(
  "killSandbox: when bubblewrap's end is reported, no process of its sandbox is alive",
  async () => {
    const ended = await probe("25");
    assert.deepEqual(ended.left, new Array(25).fill(0));
    // The control: killing bubblewrap itself leaves some, in some round.
    const control = await probe("--bubblewrap-only", "80");
    assert.ok(
      control.left.some((n) => n > 0),
      `killing bubblewrap itself left nothing in ${control.left.length} rounds`,
    );
  },
);
