/**
 * What content spans carry, by `LOOM_OTEL_CONTENT`:
 *
 * - `none` (the default): no content at all;
 * - `reference`: where the conventions would put content (tool arguments
 *   and results), Loom references instead — result id, SHA-256, byte size,
 *   media type and where the store keeps it (secrets redacted by the caller),
 *   readable later with `loom select` or `read_result`;
 * - `full`: the content itself, as the conventions define it
 *   (`gen_ai.input.messages`, `gen_ai.output.messages`,
 *   `gen_ai.system_instructions`, `gen_ai.tool.definitions`,
 *   `gen_ai.tool.call.arguments` and `.result`).
 *
 * No mode ever records an API key, a token or a store password: content is
 * what the model saw or sent, and store locations arrive redacted.
 *
 * @module
 */

/** The three content modes. */
export type ContentMode = "none" | "reference" | "full";

/** The environment variable that chooses the mode. */
export const CONTENT_VARIABLE = "LOOM_OTEL_CONTENT";

const MODES: readonly ContentMode[] = ["none", "reference", "full"];

let cached: ContentMode | undefined;

/**
 * Parses a content mode.
 *
 * @param text The variable's value.
 * @returns The mode.
 * @throws {RangeError} When it is none of `none`, `reference`, `full`.
 *
 * @example
 * ```ts
 * import { parseContentMode } from "./content.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parseContentMode("reference"), "reference");
 * assert.throws(() => parseContentMode("all"), RangeError);
 * ```
 */
export function parseContentMode(text: string): ContentMode {
  const mode = MODES.find((m) => m === text);
  if (mode === undefined) {
    throw new RangeError(
      `Invalid ${CONTENT_VARIABLE} ${
        JSON.stringify(text.slice(0, 40))
      }: expected none, reference or full`,
    );
  }
  return mode;
}

/**
 * The content mode of this process, read once from `LOOM_OTEL_CONTENT`
 * (only when read access to it is granted: a library never prompts for
 * it); `none` when unset or not readable. Callers ask only for a span that
 * records. An invalid value counts as `none` here (the CLI refuses it at
 * start-up).
 *
 * @returns The mode.
 */
export function contentMode(): ContentMode {
  if (cached !== undefined) return cached;
  let mode: ContentMode = "none";
  try {
    const state = Deno.permissions.querySync({
      name: "env",
      variable: CONTENT_VARIABLE,
    }).state;
    const value = state === "granted"
      ? Deno.env.get(CONTENT_VARIABLE)
      : undefined;
    if (value !== undefined && value !== "") {
      mode = MODES.find((m) => m === value) ?? "none";
    }
  } catch {
    mode = "none";
  }
  cached = mode;
  return mode;
}

/** A Loom reference as spans carry it in `reference` mode. */
export interface ContentReference {
  /** The result id, e.g. `result-3`. */
  readonly result: string;
  /** SHA-256 of its bytes, lowercase hex. */
  readonly sha256: string;
  /** Its size in bytes. */
  readonly bytes: number;
  /** Its media type, e.g. `text/plain`. */
  readonly media_type: string;
  /**
   * Where the bytes can be read back (a session folder, a redacted store
   * URL, a workspace file), when they outlive the process.
   */
  readonly location?: string;
}

/**
 * The JSON an attribute carries for references: `{"loom.references": […]}`.
 *
 * @param references The references.
 * @returns The attribute value.
 *
 * @example
 * ```ts
 * import { referencesJson } from "./content.ts";
 * import assert from "node:assert/strict";
 * const json = referencesJson([{ result: "result-1", sha256: "ab", bytes: 2, media_type: "text/plain" }]);
 * assert.deepEqual(JSON.parse(json)["loom.references"][0].result, "result-1");
 * ```
 */
export function referencesJson(
  references: readonly ContentReference[],
): string {
  return JSON.stringify({ "loom.references": references });
}
