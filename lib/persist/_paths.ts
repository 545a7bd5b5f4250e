import {
  basename,
  dirname,
  isAbsolute,
  join,
  relative,
  resolve,
} from "node:path";

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
