/**
 * Tests that need bubblewrap. Where `bwrap` cannot build a sandbox they are
 * reported as ignored, with one loud line saying why; with
 * `LOOM_REQUIRE_BWRAP=1` (CI) they run anyway and fail.
 */
import { commandSucceeds, type TestBody, testsNeeding } from "../_kit/needs.ts";

function probe(): boolean {
  return commandSucceeds("bwrap", [
    "--unshare-all",
    "--die-with-parent",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--",
    "true",
  ]);
}

/** Whether bubblewrap works here. */
export const HAVE_BWRAP: boolean = probe();
const REQUIRED = Deno.env.get("LOOM_REQUIRE_BWRAP") === "1";

const bwrapTests = testsNeeding({
  runs: HAVE_BWRAP || REQUIRED,
  ignored:
    "!!! bubblewrap (bwrap) cannot sandbox here: the tests that need it are IGNORED; install bubblewrap, or set LOOM_REQUIRE_BWRAP=1 to make them fail",
  present: probe,
  presentAfterAll: "bubblewrap works after all: rerun the tests",
});

/** `Deno.test` that is ignored (loudly) without bubblewrap, unless required. */
export function bwrapTest(name: string, fn: TestBody): void {
  bwrapTests(name, fn);
}
