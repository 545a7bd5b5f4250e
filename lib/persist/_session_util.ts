/** Small path and file helpers of session storage. */
import {
  basename,
  dirname,
  isAbsolute,
  join,
  relative,
  resolve,
} from "node:path";
import { SessionError } from "./session_error.ts";
import type { PersistenceOverrides } from "./tool_policy.ts";

/**
 * The absolute, symlink-free form of a path that may not exist yet: the
 * real path of its longest existing ancestor joined with the rest.
 */
export function realish(path: string): string {
  let current = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      const real = Deno.realPathSync(current);
      return rest.length === 0 ? real : join(real, ...rest.reverse());
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      const parent = dirname(current);
      if (parent === current) return resolve(path);
      rest.push(basename(current));
      current = parent;
    }
  }
}

/** Whether `child` is `parent` or lies below it (both absolute). */
export function isWithin(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * Whether a catalogue path is a clean workspace-relative path: not empty,
 * not absolute, no `.`/`..`/empty segments, no backslashes or NULs.
 */
export function isCleanRelative(path: string): boolean {
  if (path === "" || isAbsolute(path) || /[\\\0]/.test(path)) return false;
  return path.split("/").every((s) => s !== "" && s !== "." && s !== "..");
}

/** Refuses a session root that overlaps the workspace. */
export function refuseOverlap(root: string, workspace: string): void {
  if (isWithin(root, workspace) || isWithin(workspace, root)) {
    throw new SessionError(
      "session_inside_workspace",
      `Cannot use session root ${root}: it ${
        isWithin(root, workspace) ? "lies inside" : "contains"
      } the workspace ${workspace}, and the model could read or edit its files`,
      { file: root },
    );
  }
}

/** The overrides with finite thresholds only. */
export function finiteOverrides(
  overrides: PersistenceOverrides,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(overrides).filter(([, value]) =>
      typeof value === "number" && Number.isFinite(value) && value > 0
    ),
  ) as Record<string, number>;
}
