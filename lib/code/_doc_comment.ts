/**
 * JSDoc comments from untrusted text: a description can hold anything,
 * including a comment terminator, so it is normalised, bounded and escaped
 * before it goes inside a block comment.
 *
 * @module
 */

/**
 * `text` as a JSDoc block at `indent`, or `""` for no text. Line breaks of
 * any kind become `\n`, other control characters spaces, a comment
 * terminator (`*` then `/`) is written `*\/`, runs of blank lines shrink to
 * one, and text past `maxChars` is cut with `…`.
 */
export function docComment(
  text: string,
  indent: string,
  maxChars: number,
): string {
  const lines = cleanText(text, maxChars).split("\n");
  if (lines.length === 1 && lines[0] === "") return "";
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  const body = lines.map((l) => l === "" ? `${indent} *` : `${indent} * ${l}`);
  return `${indent}/**\n${body.join("\n")}\n${indent} */\n`;
}

/** Normalised, bounded, comment-safe text (see {@linkcode docComment}). */
export function cleanText(text: string, maxChars: number): string {
  let clean = text.length > maxChars * 2 ? text.slice(0, maxChars * 2) : text;
  clean = clean
    .replace(/\r\n?|[\u2028\u2029\u0085\v\f]/g, "\n")
    // deno-lint-ignore no-control-regex
    .replace(/[\u0000-\u0008\u000e-\u001f\u007f\t]/g, " ")
    .split("\n").map((l) => l.trimEnd()).join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  if (clean.length > maxChars) {
    // Never cut between the halves of a surrogate pair.
    let end = maxChars;
    const code = clean.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end--;
    clean = `${clean.slice(0, end).trimEnd()}…`;
  }
  return clean.replaceAll("*/", "*\\/");
}
