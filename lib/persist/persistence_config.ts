/**
 * Threshold overrides from a config file
 * (`{"maxResultSizeChars": {"tests.run": 50000}}`, a closed schema) or
 * command-line flags. Errors name the file and key; an override for a
 * self-bounding tool is reported as ignored.
 *
 * @module
 */
import { LoomError, mapError, messageOf } from "../errors.ts";
import { describeIssue, persistenceConfigSchema } from "./_schema.ts";
import { isSelfBounding, TOOL_DECLARATIONS } from "./tool_policy.ts";

/** Validated threshold overrides and what was ignored. */
export interface PersistenceConfig {
  /** Finite positive thresholds by tool name (self-bounding tools left out). */
  readonly overrides: Readonly<Record<string, number>>;
  /** One sentence per ignored override (a self-bounding tool). */
  readonly warnings: readonly string[];
}

/**
 * A persistence config file or flag is malformed; the message names the
 * file (or flag) and the key.
 *
 * @example
 * ```ts
 * import { PersistenceConfigError } from "@loom/loom/session";
 * import { parseThresholdFlags } from "./persistence_config.ts";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => parseThresholdFlags(["tests.run=lots"]),
 *   (e: unknown) => e instanceof PersistenceConfigError && e.key === "tests.run",
 * );
 * ```
 */
export class PersistenceConfigError
  extends LoomError.SyntaxError<"PersistenceConfigError", {
    /** The file (or flag name) that holds the problem. */
    readonly source: string;
    /** The offending key, when known. */
    readonly key?: string;
  }> {}

/**
 * Validates the text of a persistence config file.
 *
 * @param text JSON text: `{"maxResultSizeChars": {TOOL: N, …}}`.
 * @param options `source` names the file in messages.
 * @returns The overrides and warnings for ignored entries.
 * @throws {PersistenceConfigError} When the text is not JSON, breaks the
 *   closed schema, names an undeclared tool, or gives a value that is not a
 *   positive number; the message names the source and the key.
 *
 * @example
 * ```ts
 * import { parsePersistenceConfig, PersistenceConfigError } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const config = parsePersistenceConfig(
 *   '{"maxResultSizeChars": {"tests.run": 50000, "repository.inspect": 10}}',
 *   { source: "loom.json" },
 * );
 * assert.deepEqual(config.overrides, { "tests.run": 50000 });
 * assert.equal(config.warnings.length, 1);
 * assert.throws(
 *   () => parsePersistenceConfig('{"maxResultSizeChars": {"tests.run": "big"}}', { source: "loom.json" }),
 *   (e: unknown) => e instanceof PersistenceConfigError && /loom\.json/.test(e.message) && e.key === "tests.run",
 * );
 * ```
 */
export function parsePersistenceConfig(
  text: string,
  options: { readonly source: string },
): PersistenceConfig {
  const { source } = options;
  const json: unknown = mapError(
    () => JSON.parse(text),
    (error) =>
      invalidConfig(`Persistence config ${source} is not valid JSON`, {
        source,
        cause: error,
      }),
  );
  const parsed = persistenceConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path.length === 2 ? String(issue.path[1]) : undefined;
    throw new PersistenceConfigError(
      "invalid_config",
      `Persistence config ${source} is invalid: ${describeIssue(parsed.error)}`,
      key === undefined ? { source } : { source, key },
    );
  }
  return collect(Object.entries(parsed.data.maxResultSizeChars), source);
}

/** An `invalid_config` error: what failed, and the reason its cause gives. */
function invalidConfig(
  what: string,
  options: { readonly source: string; readonly cause: unknown },
): PersistenceConfigError {
  return new PersistenceConfigError(
    "invalid_config",
    `${what}: ${messageOf(options.cause)}`,
    options,
  );
}

/**
 * Reads and validates a persistence config file.
 *
 * @param path The JSON file.
 * @returns The overrides and warnings for ignored entries.
 * @throws {PersistenceConfigError} When the file cannot be read or is invalid.
 *
 * @example
 * ```ts
 * import { loadPersistenceConfig } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".json" });
 * await Deno.writeTextFile(path, '{"maxResultSizeChars": {"tests.run": 1000}}');
 * assert.equal((await loadPersistenceConfig(path)).overrides["tests.run"], 1000);
 * await Deno.remove(path);
 * ```
 */
export async function loadPersistenceConfig(
  path: string,
): Promise<PersistenceConfig> {
  const text = await Deno.readTextFile(path).catch((error: unknown) => {
    throw invalidConfig(`Cannot read persistence config ${path}`, {
      source: path,
      cause: error,
    });
  });
  return parsePersistenceConfig(text, { source: path });
}

/**
 * Parses `TOOL=N` threshold flags (e.g. `--persist-threshold tests.run=50000`).
 *
 * @param values The flag values, in order; a later one for a tool wins.
 * @param options `flag` names the flag in messages (default `--persist-threshold`).
 * @returns The overrides and warnings for ignored entries.
 * @throws {PersistenceConfigError} When a value is not `TOOL=N` with a
 *   declared tool and a positive number.
 *
 * @example
 * ```ts
 * import { parseThresholdFlags } from "./persistence_config.ts";
 * import assert from "node:assert/strict";
 * const config = parseThresholdFlags(["tests.run=4096", "repository.inspect=1"]);
 * assert.deepEqual(config.overrides, { "tests.run": 4096 });
 * assert.match(config.warnings[0] ?? "", /repository\.inspect/);
 * ```
 */
export function parseThresholdFlags(
  values: readonly string[],
  options: { readonly flag?: string } = {},
): PersistenceConfig {
  const flag = options.flag ?? "--persist-threshold";
  const entries: [string, number][] = [];
  for (const value of values) {
    const eq = value.lastIndexOf("=");
    const tool = eq > 0 ? value.slice(0, eq) : "";
    const number = eq > 0 && /^[0-9]+(\.[0-9]+)?$/.test(value.slice(eq + 1))
      ? Number(value.slice(eq + 1))
      : NaN;
    if (tool === "" || !Number.isFinite(number) || number <= 0) {
      throw new PersistenceConfigError(
        "invalid_config",
        `Cannot use ${flag} ${
          JSON.stringify(value)
        }: expected TOOL=N with a positive number N`,
        tool === "" ? { source: flag } : { source: flag, key: tool },
      );
    }
    entries.push([tool, number]);
  }
  return collect(entries, flag);
}

/**
 * Combines configs; later ones win per tool (a file, then flags).
 *
 * @param configs Configs in increasing priority.
 * @returns One config with every warning.
 *
 * @example
 * ```ts
 * import { mergePersistenceConfigs, parseThresholdFlags } from "./persistence_config.ts";
 * import assert from "node:assert/strict";
 * const merged = mergePersistenceConfigs(
 *   parseThresholdFlags(["tests.run=100"]),
 *   parseThresholdFlags(["tests.run=200"]),
 * );
 * assert.equal(merged.overrides["tests.run"], 200);
 * ```
 */
export function mergePersistenceConfigs(
  ...configs: readonly PersistenceConfig[]
): PersistenceConfig {
  return {
    overrides: Object.assign({}, ...configs.map((c) => c.overrides)),
    warnings: configs.flatMap((c) => c.warnings),
  };
}

function collect(
  entries: readonly (readonly [string, number])[],
  source: string,
): PersistenceConfig {
  const overrides: Record<string, number> = {};
  const warnings: string[] = [];
  for (const [tool, value] of entries) {
    if (!Object.hasOwn(TOOL_DECLARATIONS, tool)) {
      throw new PersistenceConfigError(
        "invalid_config",
        `Persistence config ${source} names tool ${
          JSON.stringify(tool)
        }, which declares no maxResultSizeChars; declared tools are ${
          Object.keys(TOOL_DECLARATIONS).join(", ")
        }`,
        { source, key: tool },
      );
    }
    if (isSelfBounding(tool)) {
      warnings.push(
        `Ignoring the ${source} override of ${tool}: it reads paths back, so its results are never persisted`,
      );
      continue;
    }
    overrides[tool] = value;
  }
  return { overrides, warnings };
}
