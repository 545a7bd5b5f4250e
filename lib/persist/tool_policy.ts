/**
 * Which tool results may be persisted, and above what size. Every action
 * and lookup verb declares `maxResultSizeChars`: `Infinity` for self-bounding
 * tools that read paths back (`repository.inspect`, the lookup verbs), which
 * are never persisted, and a finite threshold that overrides may change for
 * externally bounded ones (`tests.run`). No override turns `Infinity` into a
 * number.
 *
 * @module
 */
import { LoomError } from "../errors.ts";
import { ACTIONS } from "../slice/actions.ts";

/** A tool and the size above which its results may be persisted. */
export interface ToolDeclaration {
  /** The action or lookup verb, e.g. `tests.run` or `$read_result`. */
  readonly name: string;
  /**
   * `Infinity` for self-bounding tools (never persisted); a finite positive
   * number of characters for externally bounded ones.
   */
  readonly maxResultSizeChars: number;
}

/** Threshold overrides by tool name; values not finite and positive are ignored. */
export type PersistenceOverrides = Readonly<Record<string, unknown>>;

/**
 * Default threshold of externally bounded tools, in characters.
 *
 * @example
 * ```ts
 * import { persistenceThreshold } from "@loom/loom/session";
 * import { DEFAULT_PERSISTENCE_THRESHOLD } from "./tool_policy.ts";
 * import assert from "node:assert/strict";
 * assert.equal(persistenceThreshold("tests.run"), DEFAULT_PERSISTENCE_THRESHOLD);
 * ```
 */
export const DEFAULT_PERSISTENCE_THRESHOLD = 30_000;

/**
 * The declared `maxResultSizeChars` of every action and lookup verb.
 *
 * @example
 * ```ts
 * import { TOOL_DECLARATIONS } from "./tool_policy.ts";
 * import assert from "node:assert/strict";
 * assert.equal(TOOL_DECLARATIONS["repository.inspect"]?.maxResultSizeChars, Infinity);
 * assert.equal(TOOL_DECLARATIONS["tests.run"]?.maxResultSizeChars, 30_000);
 * ```
 */
export const TOOL_DECLARATIONS: Readonly<Record<string, ToolDeclaration>> =
  Object.freeze(
    Object.fromEntries(
      ([
        // Actions, from the registry; lookup verbs read the store back.
        ...ACTIONS.map((a) =>
          [
            a.name,
            a.persistence === "self_bounding"
              ? Infinity
              : DEFAULT_PERSISTENCE_THRESHOLD,
          ] as const
        ),
        ["$read_result", Infinity],
        ["$list_results", Infinity],
        ["$read_history", Infinity],
        ["$list_history", Infinity],
      ] as const).map((
        [name, maxResultSizeChars],
      ) => [name, Object.freeze({ name, maxResultSizeChars })]),
    ),
  );

/**
 * Raised for a tool name that declares no `maxResultSizeChars` (an
 * undeclared tool gets no default).
 *
 * @example
 * ```ts
 * import { persistenceThreshold, UnknownToolError } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * assert.throws(() => persistenceThreshold("web.fetch"), UnknownToolError);
 * ```
 */
export class UnknownToolError extends LoomError.RangeError<"UnknownToolError", {
  /** The undeclared tool name. */
  readonly tool: string;
}> {}

/**
 * The declaration of a tool: the given one, or the built-in one for a name.
 *
 * @param tool A declaration, or the name of a built-in action or lookup verb.
 * @returns The declaration (the built-in one for a self-bounding name).
 * @throws {UnknownToolError} When a name is not declared.
 * @throws {TypeError} When a declaration's `maxResultSizeChars` is not a
 *   positive number (`Infinity` included).
 *
 * @example
 * ```ts
 * import { toolDeclaration } from "./tool_policy.ts";
 * import assert from "node:assert/strict";
 * assert.equal(toolDeclaration("repository.inspect").maxResultSizeChars, Infinity);
 * assert.equal(toolDeclaration({ name: "shell", maxResultSizeChars: 50_000 }).name, "shell");
 * ```
 */
export function toolDeclaration(
  tool: string | ToolDeclaration,
): ToolDeclaration {
  if (typeof tool === "string") {
    const declared = Object.hasOwn(TOOL_DECLARATIONS, tool)
      ? TOOL_DECLARATIONS[tool]
      : undefined;
    if (declared === undefined) {
      throw new UnknownToolError(
        "unknown_tool",
        `Cannot decide persistence for tool ${
          JSON.stringify(tool)
        }: it declares no maxResultSizeChars`,
        { tool },
      );
    }
    return declared;
  }
  // A built-in self-bounding name cannot be redeclared as finite.
  const builtin = typeof tool?.name === "string" &&
      Object.hasOwn(TOOL_DECLARATIONS, tool.name)
    ? TOOL_DECLARATIONS[tool.name]
    : undefined;
  if (builtin !== undefined && !Number.isFinite(builtin.maxResultSizeChars)) {
    return builtin;
  }
  const size = tool?.maxResultSizeChars;
  if (typeof size !== "number" || Number.isNaN(size) || size <= 0) {
    throw new TypeError(
      `Cannot use tool ${
        JSON.stringify(tool?.name)
      }: maxResultSizeChars must be a positive number or Infinity`,
    );
  }
  return tool;
}

/**
 * Whether a tool is self-bounding (declares `Infinity`, never persisted).
 *
 * @param tool A declaration or a built-in tool name.
 * @returns `true` for self-bounding tools.
 * @throws {UnknownToolError} When a name is not declared.
 *
 * @example
 * ```ts
 * import { isSelfBounding } from "./tool_policy.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isSelfBounding("repository.inspect"), true);
 * assert.equal(isSelfBounding("$read_result"), true);
 * assert.equal(isSelfBounding("tests.run"), false);
 * ```
 */
export function isSelfBounding(tool: string | ToolDeclaration): boolean {
  return !Number.isFinite(toolDeclaration(tool).maxResultSizeChars);
}

/**
 * The effective persistence threshold of a tool: `Infinity` for a
 * self-bounding tool whatever the overrides hold, else a finite positive
 * override, else the declared value.
 *
 * @param tool A declaration or a built-in tool name.
 * @param overrides Threshold overrides by tool name (values unchecked).
 * @returns `Infinity` (never persist) or a finite positive threshold.
 * @throws {UnknownToolError} When a name is not declared.
 *
 * @example
 * ```ts
 * import { persistenceThreshold } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * // The sentinel wins over any override.
 * assert.equal(persistenceThreshold("repository.inspect", { "repository.inspect": 100 }), Infinity);
 * // Finite positive overrides apply to externally bounded tools.
 * assert.equal(persistenceThreshold("tests.run", { "tests.run": 5_000 }), 5_000);
 * // Anything else is ignored.
 * assert.equal(persistenceThreshold("tests.run", { "tests.run": -1 }), 30_000);
 * ```
 */
export function persistenceThreshold(
  tool: string | ToolDeclaration,
  overrides: PersistenceOverrides = {},
): number {
  const declared = toolDeclaration(tool);
  if (!Number.isFinite(declared.maxResultSizeChars)) return Infinity;
  const override = overrides !== null && typeof overrides === "object" &&
      Object.hasOwn(overrides, declared.name)
    ? overrides[declared.name]
    : undefined;
  if (
    typeof override === "number" && Number.isFinite(override) && override > 0
  ) {
    return override;
  }
  return declared.maxResultSizeChars;
}

/**
 * Whether a result of `chars` characters is written to
 * `tool-results/<sha256>.txt`: only for a session owner, only for an
 * externally bounded tool, only above its effective threshold.
 *
 * @param tool A declaration or a built-in tool name.
 * @param chars The result's length in characters.
 * @param options `owner`: whether the caller owns the session's storage
 *   root (ephemeral stages pass `false`); `overrides`: threshold overrides.
 * @returns `true` when the result should be written to the session.
 * @throws {UnknownToolError} When a name is not declared.
 *
 * @example
 * ```ts
 * import { shouldPersist } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * assert.equal(shouldPersist("tests.run", 40_000, { owner: true }), true);
 * assert.equal(shouldPersist("tests.run", 40_000, { owner: false }), false);
 * assert.equal(shouldPersist("repository.inspect", 10_000_000, { owner: true }), false);
 * ```
 */
export function shouldPersist(
  tool: string | ToolDeclaration,
  chars: number,
  options: {
    readonly owner: boolean;
    readonly overrides?: PersistenceOverrides;
  },
): boolean {
  const threshold = persistenceThreshold(tool, options.overrides);
  return options.owner === true && Number.isFinite(threshold) &&
    chars > threshold;
}
