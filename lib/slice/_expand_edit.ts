/** Expansion of segment contents in edit arguments. */
import { expandEditContents } from "../reference/edit_contents.ts";
import type { ResultStore } from "../store/result_store.ts";
import { clipModelText } from "./_clip.ts";
import { isPlainObject } from "../plain_object.ts";

const MAX_EXPANDED_BYTES = 16 * 1024 * 1024;
const encoder = new TextEncoder();

/** Expanded edit arguments, or why they do not resolve. */
export type Expansion =
  | { readonly ok: true; readonly args: unknown }
  | { readonly ok: false; readonly code: string; readonly reason: string };

/**
 * Expands segment contents of edit arguments into literal text.
 *
 * @param args The generated edit arguments.
 * @param results The store segments refer to.
 * @returns The arguments with literal contents, or a refusal.
 */
export async function expandEdit(
  args: unknown,
  results: ResultStore,
): Promise<Expansion> {
  if (!isPlainObject(args) || !Array.isArray(args["files"])) {
    return { ok: true, args }; // commission refuses the shape
  }
  const files: unknown[] = [];
  let total = 0;
  for (const [index, file] of args["files"].entries()) {
    if (!isPlainObject(file) || !("contents" in file)) {
      files.push(file);
      continue;
    }
    const contents = file["contents"];
    let text: string;
    if (typeof contents === "string") {
      text = contents;
    } else {
      try {
        text = await expandEditContents(contents, { results });
      } catch (error) {
        const code = (error as { code?: unknown })?.code;
        if (typeof code !== "string") throw error;
        const where = typeof file["path"] === "string"
          ? ` (${clipModelText(file["path"])})`
          : "";
        return {
          ok: false,
          code,
          reason: `The contents of file ${index}${where} do not resolve: ${
            (error as Error).message
          }`,
        };
      }
    }
    total += encoder.encode(text).byteLength;
    if (total > MAX_EXPANDED_BYTES) {
      return {
        ok: false,
        code: "edit_too_large",
        reason:
          `The expanded edit contents pass ${MAX_EXPANDED_BYTES} bytes, the limit of one edit`,
      };
    }
    files.push({ ...file, contents: text });
  }
  return { ok: true, args: { ...args, files } };
}
