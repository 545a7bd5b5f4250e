/**
 * Commission: the slice's own checks on an action before the executor runs
 * it. Arguments must match the action's closed schema; paths are normalised
 * to workspace-relative POSIX form and refused when they are absolute, leave
 * the workspace through `..` or a symlink, write into `.git`, or reach into a
 * forbidden root such as a session directory. `slice.complete` is admitted
 * only when the tests validate the latest revision (or no test command is
 * configured). The permission-scoped executor guards the same boundary again.
 *
 * @module
 */
import { resolve } from "node:path";
import type { z } from "zod";
import { checkArguments } from "../reference/schema.ts";
import {
  type ActionName,
  type CompleteArguments,
  completeSchema,
  type ExpandedEditArguments,
  expandedEditSchema,
  type InspectArguments,
  inspectSchema,
  isActionName,
  type TestsRunArguments,
  testsRunSchema,
} from "./_schema.ts";
import { showModelText } from "./_clip.ts";
import { isWithin, resolveInRoot } from "../root_path.ts";

/** Why commission refused an action. Stable machine codes. */
export type RefusalCode =
  | "unknown_action"
  | "invalid_arguments"
  | "invalid_path"
  | "absolute_path"
  | "path_escape"
  | "symlink_escape"
  | "git_write"
  | "forbidden_root"
  | "duplicate_path"
  | "protected_path"
  | "tests_not_configured"
  | "tests_not_validated"
  | "workspace_unavailable";

/** What commission needs to know about the run. */
export interface CommissionOptions {
  /** The workspace directory (relative paths resolve against the cwd). */
  workspace: string;
  /** Whether a test command is configured. */
  testConfigured: boolean;
  /** Whether the latest test run passed on the latest revision. */
  latestValidated: boolean;
  /** Absolute directories no action may read or write (e.g. a session root). */
  forbiddenRoots?: readonly string[];
  /** Files no edit may change (the test's own files, `--protect` globs). */
  protect?: { matches(path: string): boolean };
}

/** Arguments commission admitted, with paths normalised. */
export type CommissionedArguments =
  | InspectArguments
  | ExpandedEditArguments
  | TestsRunArguments
  | CompleteArguments;

/** An admitted action. */
export interface CommissionAdmitted {
  /** Admitted. */
  readonly ok: true;
  /** The action. */
  readonly action: ActionName;
  /** Normalised arguments to hand to the executor. */
  readonly args: CommissionedArguments;
}

/** A refused action: told to the model, recorded as an event. */
export interface CommissionRefusal {
  /** Refused. */
  readonly ok: false;
  /** Stable machine code. */
  readonly code: RefusalCode;
  /** Sentence-case reason without a trailing period. */
  readonly reason: string;
}

/** The verdict of {@linkcode commission}. */
export type CommissionResult = CommissionAdmitted | CommissionRefusal;

/**
 * Checks an action and its (expanded) arguments before execution.
 *
 * Edit contents must already be expanded to text: composed `segments` are
 * resolved by the slice before commission.
 *
 * @param action The selected action name.
 * @param args The generated arguments, edit segments already expanded.
 * @param options The workspace and the run's test state.
 * @returns `{ok: true, action, args}` with normalised paths, or
 *   `{ok: false, code, reason}`.
 *
 * @example
 * ```ts
 * import { commission } from "./commission.ts";
 * import assert from "node:assert/strict";
 * const workspace = await Deno.makeTempDir();
 * const options = { workspace, testConfigured: true, latestValidated: false };
 * const admitted = commission("repository.inspect", { paths: ["./src//a.ts"] }, options);
 * assert.deepEqual(admitted, { ok: true, action: "repository.inspect", args: { paths: ["src/a.ts"] } });
 * const escape = commission("repository.inspect", { paths: ["../secret"] }, options);
 * assert.equal(escape.ok ? "admitted" : escape.code, "path_escape");
 * const done = commission("slice.complete", { summary: "Fixed" }, options);
 * assert.equal(done.ok ? "admitted" : done.code, "tests_not_validated");
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export function commission(
  action: string,
  args: unknown,
  options: CommissionOptions,
): CommissionResult {
  if (!isActionName(action)) {
    return refuse(
      "unknown_action",
      `${JSON.stringify(action.slice(0, 64))} is not an action of the slice`,
    );
  }
  switch (action) {
    case "repository.inspect": {
      const parsed = parse(inspectSchema, args, action);
      if (!parsed.ok) return parsed;
      const guard = PathGuard.open(options);
      if (!guard.ok) return guard;
      const paths: string[] = [];
      for (const raw of parsed.value.paths) {
        const checked = guard.value.check(raw, { write: false });
        if (!checked.ok) return checked;
        paths.push(checked.value);
      }
      return { ok: true, action, args: { paths } };
    }
    case "repository.edit": {
      const parsed = parse(expandedEditSchema, args, action);
      if (!parsed.ok) return parsed;
      const guard = PathGuard.open(options);
      if (!guard.ok) return guard;
      const files: { path: string; contents: string }[] = [];
      const seen = new Set<string>();
      for (const file of parsed.value.files) {
        const checked = guard.value.check(file.path, {
          write: true,
          ...(options.protect === undefined
            ? {}
            : { protect: options.protect }),
        });
        if (!checked.ok) return checked;
        if (seen.has(checked.value)) {
          return refuse(
            "duplicate_path",
            `Cannot edit ${
              show(checked.value)
            } twice in one edit: each file may appear once`,
          );
        }
        seen.add(checked.value);
        files.push({ path: checked.value, contents: file.contents });
      }
      const message = parsed.value.message;
      return {
        ok: true,
        action,
        args: message === undefined ? { files } : { files, message },
      };
    }
    case "tests.run": {
      const parsed = parse(testsRunSchema, args, action);
      if (!parsed.ok) return parsed;
      if (!options.testConfigured) {
        return refuse(
          "tests_not_configured",
          "Cannot run tests: no test command is configured for this slice",
        );
      }
      return { ok: true, action, args: {} };
    }
    case "slice.complete": {
      const parsed = parse(completeSchema, args, action);
      if (!parsed.ok) return parsed;
      if (options.testConfigured && !options.latestValidated) {
        return refuse(
          "tests_not_validated",
          "Cannot complete the slice: the tests do not validate the latest revision (run the tests on it and make them pass first)",
        );
      }
      return { ok: true, action, args: { summary: parsed.value.summary } };
    }
  }
}

type Checked<T> = { ok: true; value: T } | CommissionRefusal;

function refuse(code: RefusalCode, reason: string): CommissionRefusal {
  return { ok: false, code, reason };
}

function parse<T>(
  schema: z.ZodType<T>,
  args: unknown,
  action: ActionName,
): Checked<T> {
  const checked = checkArguments(schema, args, action);
  return checked.ok ? checked : refuse("invalid_arguments", checked.message);
}

function show(path: string): string {
  return showModelText(path);
}

/** Path checks against one workspace, resolved once per commission. */
class PathGuard {
  readonly #root: string;
  readonly #forbidden: readonly string[];

  private constructor(root: string, forbidden: readonly string[]) {
    this.#root = root;
    this.#forbidden = forbidden;
  }

  static open(options: CommissionOptions): Checked<PathGuard> {
    let root: string;
    try {
      root = Deno.realPathSync(options.workspace);
    } catch (error) {
      return refuse(
        "workspace_unavailable",
        `Cannot resolve the workspace: ${
          error instanceof Error ? error.name : "error"
        }`,
      );
    }
    const forbidden = (options.forbiddenRoots ?? []).flatMap((dir) => {
      const lexical = resolve(dir);
      try {
        const real = Deno.realPathSync(dir);
        return real === lexical ? [real] : [real, lexical];
      } catch {
        return [lexical];
      }
    });
    return { ok: true, value: new PathGuard(root, forbidden) };
  }

  /** Normalises `raw` and checks where it really leads. */
  check(
    raw: string,
    { write, protect }: {
      write: boolean;
      protect?: { matches(path: string): boolean };
    },
  ): Checked<string> {
    if (raw === "") return refuse("invalid_path", "A path is empty");
    if (raw.startsWith("/") || /^[A-Za-z]:/.test(raw)) {
      return refuse(
        "absolute_path",
        `The path ${
          show(raw)
        } is absolute: paths are relative to the workspace`,
      );
    }
    const path = resolveInRoot(this.#root, raw, write, {
      place: "the workspace",
      show,
    });
    if (!path.ok) {
      return refuse(
        path.problem === "dot_dot_escape" ? "path_escape" : path.problem,
        path.message,
      );
    }
    const normalised = path.relative;
    const lexical = `${this.#root}/${normalised}`;
    const realRelative = path.real.slice(this.#root.length + 1);
    if (
      protect !== undefined &&
      (protect.matches(normalised) || protect.matches(realRelative))
    ) {
      return refuse(
        "protected_path",
        `Cannot edit ${
          show(normalised)
        }: it is protected (the test command runs it, or --protect names it), so an edit could make the tests pass without fixing anything`,
      );
    }
    for (const root of this.#forbidden) {
      if (isWithin(lexical, root) || isWithin(path.real, root)) {
        return refuse(
          "forbidden_root",
          `The path ${
            show(normalised)
          } lies in a directory the slice may not touch (such as its session directory)`,
        );
      }
    }
    return { ok: true, value: normalised };
  }
}
