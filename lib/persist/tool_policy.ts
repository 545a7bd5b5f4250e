/**
 * Which tool results may be persisted, and above what size. Every action
 * and lookup verb declares `maxResultSizeChars`. Self-bounding tools — those
 * that read arbitrary paths back, such as `repository.inspect` and the
 * lookup verbs — declare `Infinity` and are never persisted: a persisted
 * copy would be a file the model could read back with the same tool,
 * forever. Externally bounded tools (`tests.run`, …) declare a finite
 * threshold that overrides may change, but no override can turn the
 * `Infinity` sentinel into a number.
 *
 * @module
 */
import { brand, causeOf, type LoomErrorOptions } from "../errors.ts";
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

/**
 * Threshold overrides by tool name, from a config file, flags or an
 * embedder. Values are deliberately `unknown`: anything that is not a finite
 * positive number is ignored.
 */
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
 * The declared `maxResultSizeChars` of every action and lookup verb of a
 * slice. `repository.inspect` and the four lookup verbs are self-bounding
 * (`Infinity`).
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
        // Actions, from the registry: self-bounding ones read arbitrary
        // workspace paths back; external ones bring output from outside the store.
        ...ACTIONS.map((a) =>
          [
            a.name,
            a.persistence === "self_bounding"
              ? Infinity
              : DEFAULT_PERSISTENCE_THRESHOLD,
          ] as const
        ),
        // Lookup verbs read stored results and events back: self-bounding.
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
 * Raised for a tool name that declares no `maxResultSizeChars`: an
 * undeclared tool gets no default, so it cannot slip into persistence.
 *
 * @example
 * ```ts
 * import { persistenceThreshold, UnknownToolError } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * assert.throws(() => persistenceThreshold("web.fetch"), UnknownToolError);
 * ```
 */
export class UnknownToolError extends RangeError {
  /** Always `unknown_tool`. */
  readonly code: "unknown_tool";
  /** The undeclared tool name. */
  readonly tool: string;

  /**
   * Creates the error for an undeclared tool.
   *
   * @param code Always `unknown_tool`.
   * @param message What is wrong, naming the tool.
   * @param options The undeclared tool name and the cause.
   */
  constructor(
    code: "unknown_tool",
    message: string,
    options: LoomErrorOptions & { readonly tool: string },
  ) {
    super(message, causeOf(options));
    this.code = brand(this, "UnknownToolError", code);
    this.tool = options.tool;
  }
}

/**
 * The declaration of a tool: the given one, or the built-in one for a name.
 *
 * @param tool A declaration, or the name of a built-in action or lookup verb.
 * @returns The declaration. A declaration that reuses the name of a built-in
 *   self-bounding tool gets the built-in (`Infinity`) declaration back.
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
 * Whether a tool is self-bounding (declares `Infinity`): its results are
 * never persisted, whatever the overrides say.
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
 * The effective persistence threshold of a tool. The `Infinity` sentinel is
 * checked before any override, so a self-bounding tool stays `Infinity`
 * whatever the overrides hold. An override applies only when it is a finite
 * positive number; otherwise the declared value stands.
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
  // Hard sentinel first: no override path is reached for self-bounding tools.
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
 * Whether a result of `chars` characters is persisted: only for a session
 * owner, only for an externally bounded tool, and only above the effective
 * threshold. {@linkcode SessionStore.save} uses it: a result it says yes to
 * is written to `tool-results/<sha256>.txt`; a smaller result of an
 * externally bounded tool is kept inline in the session journal.
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
