/**
 * Clipping of model-controlled text (paths, names) before it reaches a
 * refusal reason, a note or the working state: those are mandatory content
 * of a bounded request, so a long string from the model must never make
 * them grow without bound.
 *
 * @module
 */

/** Longest model-controlled string kept in a reason, in UTF-16 code units. */
export const MODEL_TEXT_CHARS = 200;

/** Longest message made elsewhere from model-controlled strings. */
export const MODEL_MESSAGE_CHARS = 4 * MODEL_TEXT_CHARS;

/**
 * Clips model-controlled text to {@linkcode MODEL_TEXT_CHARS} characters
 * plus `…`, never splitting a surrogate pair.
 *
 * @param text Text the model chose.
 * @returns The text, or its clipped head followed by `…`.
 */
export function clipModelText(text: string): string {
  return clipTo(text, MODEL_TEXT_CHARS);
}

/**
 * Shows model-controlled text as a clipped JSON string, the way commission
 * names paths in its refusals.
 *
 * @param text Text the model chose.
 * @returns The clipped text as a JSON string literal.
 */
export function showModelText(text: string): string {
  return JSON.stringify(clipModelText(text));
}

/**
 * Bounds a message made elsewhere (an executor error) that may name the
 * paths of the arguments: each such path is clipped like
 * {@linkcode clipModelText}, then the whole message is clipped to
 * {@linkcode MODEL_MESSAGE_CHARS}, so text derived from a path stays bounded.
 *
 * @param message The message.
 * @param args The action arguments (`paths`, or `files[].path`).
 * @returns The bounded message.
 */
export function clipMessage(message: string, args: unknown): string {
  let out = message;
  for (const path of pathsOf(args)) {
    if (path.length > MODEL_TEXT_CHARS) {
      out = out.replaceAll(path, clipModelText(path));
    }
  }
  return clipTo(out, MODEL_MESSAGE_CHARS);
}

function pathsOf(args: unknown): string[] {
  if (args === null || typeof args !== "object") return [];
  const { paths, files } = args as { paths?: unknown; files?: unknown };
  const list = Array.isArray(paths)
    ? paths
    : Array.isArray(files)
    ? files.map((f) => (f as { path?: unknown } | null)?.path)
    : [];
  return list.filter((p): p is string => typeof p === "string");
}

function clipTo(text: string, chars: number): string {
  if (text.length <= chars) return text;
  let end = chars;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
