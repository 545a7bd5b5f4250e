/** Small helpers of the session store. */
import { isWithin } from "./_paths.ts";
import { SessionError } from "./session_error.ts";
import type { PersistenceOverrides } from "./tool_policy.ts";

/** The overrides with finite thresholds only. */
export function finiteOverrides(
  overrides: PersistenceOverrides,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [tool, value] of Object.entries(overrides)) {
    if (typeof value === "number" && Number.isFinite(value) && value > 0) {
      out[tool] = value;
    }
  }
  return out;
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

/** Whether a path exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** The last path segment. */
export function basenameOf(path: string): string {
  const parts = path.split(/[\\/]/).filter((p) => p !== "");
  return parts.at(-1) ?? "session";
}

/** The message of an error, or the value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
