/**
 * Tests that need bubblewrap. Where `bwrap` cannot build a sandbox they are
 * reported as ignored, with one loud line saying why; with
 * `LOOM_REQUIRE_BWRAP=1` (CI) they run anyway and fail.
 */

function probe(): boolean {
  try {
    return new Deno.Command("bwrap", {
      args: [
        "--unshare-all",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--",
        "true",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
}

/** Whether bubblewrap works here. */
export const HAVE_BWRAP: boolean = probe();
const REQUIRED = Deno.env.get("LOOM_REQUIRE_BWRAP") === "1";
let warned = false;

/** `Deno.test` that is ignored (loudly) without bubblewrap, unless required. */
export function bwrapTest(
  name: string,
  fn: (t: Deno.TestContext) => Promise<void>,
): void {
  const ignore = !HAVE_BWRAP && !REQUIRED;
  if (ignore && !warned) {
    warned = true;
    // One loud line in the test report (`deno test --quiet` drops plain
    // console output made before the tests start).
    Deno.test(
      "!!! bubblewrap (bwrap) cannot sandbox here: the tests that need it are IGNORED; install bubblewrap, or set LOOM_REQUIRE_BWRAP=1 to make them fail",
      () => {
        if (probe()) {
          throw new Error("bubblewrap works after all: rerun the tests");
        }
      },
    );
  }
  Deno.test({ name, ignore, fn });
}
