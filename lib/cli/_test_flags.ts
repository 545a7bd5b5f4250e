/**
 * The test-confinement flags of `loom run` (also accepted by `--resume`:
 * they are the user's policy for this process, never session state).
 *
 * @module
 */
import type { SliceTest } from "../slice/request.ts";
import { UsageError } from "./_io.ts";

/** `parseArgs` options of the confinement flags. */
export const TEST_FLAG_OPTIONS = {
  "test-env": { type: "string", multiple: true },
  "test-network": { type: "boolean", default: false },
  "unconfined-tests": { type: "boolean", default: false },
  protect: { type: "string", multiple: true },
  "edit-test-files": { type: "boolean", default: false },
} as const;

/** Help lines of the confinement flags. */
export const TEST_FLAGS_HELP =
  `  --test-env NAME          Pass variable NAME to the confined test (repeatable);
                           it sees no other variable of yours
  --test-network           Give the confined test the network (default: none)
  --unconfined-tests       Run the test with your privileges when bubblewrap
                           is missing (stated loudly in report and summary)
  --protect GLOB           Protect files matching GLOB (repeatable): edits are
                           refused and the test sees them read-only
  --edit-test-files        Let edits change the files the test command names
                           (protected by default)
`;

/** The confinement flags as given: checked, nothing read yet. */
export interface TestConfinementFlags {
  /** `--test-env NAME` names (their values are read when the run starts). */
  readonly env?: readonly string[];
  /** `--test-network`. */
  readonly network?: true;
  /** `--unconfined-tests`. */
  readonly unconfined?: true;
  /** `--protect GLOB` globs. */
  readonly protect?: readonly string[];
  /** `--edit-test-files`. */
  readonly protectNamedFiles?: false;
}

/** The fields the confinement flags add to a slice's test. */
export type TestConfinement = Pick<
  SliceTest,
  "env" | "network" | "unconfined" | "protect" | "protectNamedFiles"
>;

/**
 * Checks the confinement flags; reads no variable.
 *
 * @param values The parsed flags.
 * @returns The flags given (an empty object when none).
 * @throws {UsageError} On a malformed `--test-env` name or a `--protect`
 *   glob leaving the workspace.
 */
export function parseTestConfinement(values: {
  readonly "test-env"?: readonly string[] | undefined;
  readonly "test-network"?: boolean;
  readonly "unconfined-tests"?: boolean;
  readonly protect?: readonly string[] | undefined;
  readonly "edit-test-files"?: boolean;
}): TestConfinementFlags {
  for (const name of values["test-env"] ?? []) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new UsageError(
        "usage",
        `Invalid --test-env ${name}: expected a variable name such as NODE_OPTIONS`,
      );
    }
  }
  for (const glob of values.protect ?? []) {
    if (glob === "" || glob.startsWith("/") || glob.split("/").includes("..")) {
      throw new UsageError(
        "usage",
        `Invalid --protect ${glob}: expected a glob relative to the workspace, such as tests/**`,
      );
    }
  }
  return {
    ...(values["test-env"] === undefined ? {} : { env: values["test-env"] }),
    ...(values["test-network"] ? { network: true as const } : {}),
    ...(values["unconfined-tests"] ? { unconfined: true as const } : {}),
    ...(values.protect === undefined ? {} : { protect: values.protect }),
    ...(values["edit-test-files"] ? { protectNamedFiles: false as const } : {}),
  };
}

/**
 * The confinement of the test, with the values of the `--test-env`
 * variables read from this process's environment now.
 *
 * @param flags The checked flags.
 * @returns The fields to merge into the slice's test.
 * @throws {UsageError} When a `--test-env` variable is not set.
 */
export function testConfinement(
  flags: TestConfinementFlags,
): TestConfinement {
  const { env: names, ...rest } = flags;
  if (names === undefined) return rest;
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = Deno.env.get(name);
    if (value === undefined) {
      throw new UsageError(
        "usage",
        `Invalid --test-env ${name}: the variable is not set in your environment`,
      );
    }
    env[name] = value;
  }
  return { ...rest, env };
}

/**
 * `LOOM_BWRAP`: the bubblewrap program to use instead of `bwrap` on `PATH`;
 * empty means none (tests then run under Deno's flags or not at all).
 *
 * @returns The `sandbox` run option, or nothing when the variable is unset.
 */
export function sandboxOption(): { sandbox?: string | null } {
  const value = Deno.env.get("LOOM_BWRAP");
  if (value === undefined) return {};
  return { sandbox: value === "" ? null : value };
}
