/**
 * A simulated GitHub Actions runner for the repository's composite action
 * (action.yml): what a real runner does with a composite action's steps,
 * for the part the action uses, so its shell steps run in tests.
 *
 * - inputs: the caller's `with`, else the input's `default` (an expression
 *   such as `${{ github.workspace }}` is evaluated);
 * - each step's `if` (default `success()`) and every `${{ … }}` in its `env`
 *   and `run` are evaluated by GitHub's own expression engine
 *   (`npm:@actions/expressions`) over the `github`, `runner`, `inputs`,
 *   `steps` and `env` contexts;
 * - a `shell: bash` step runs as `bash --noprofile --norc -eo pipefail FILE`
 *   with the runner's variables (`GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY`
 *   fresh per step, `GITHUB_ACTION_PATH`, `RUNNER_OS`, `RUNNER_ARCH`,
 *   `RUNNER_TEMP`, `GITHUB_WORKSPACE`, …), stdout and stderr joined into
 *   the log; folders a step appends to `GITHUB_PATH` lead `PATH` in the
 *   steps after it;
 * - `GITHUB_OUTPUT` is read back in both forms (`name=value` and
 *   `name<<DELIMITER`), and the action's `outputs` are evaluated from the
 *   steps' outputs.
 *
 * Workflow commands in the log (`::error::`, `::stop-commands::`) are kept
 * as printed, not interpreted.
 */
import { join } from "node:path";
import { parse } from "yaml";
import { data, Evaluator, Lexer, Parser } from "@actions/expressions";
import { truthy } from "@actions/expressions/result";
import { REPO_ROOT } from "../_kit.ts";

interface ActionStep {
  readonly id?: string;
  readonly name?: string;
  readonly if?: string;
  readonly shell?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly run?: string;
}

interface ActionManifest {
  readonly inputs: Readonly<Record<string, { readonly default?: string }>>;
  readonly outputs: Readonly<Record<string, { readonly value: string }>>;
  readonly runs: { readonly using: string; readonly steps: ActionStep[] };
}

/** What the simulated job gives the action. */
export interface RunnerOptions {
  /** The step's `with:` inputs. */
  readonly with?: Readonly<Record<string, string>>;
  /** The job's environment (what every step of the action inherits). */
  readonly env: Readonly<Record<string, string>>;
  /** `RUNNER_OS` (default `Linux`). */
  readonly os?: string;
  /** `RUNNER_ARCH` (default `X64`). */
  readonly arch?: string;
  /** `RUNNER_TEMP`. */
  readonly temp: string;
  /** `GITHUB_WORKSPACE`. */
  readonly workspace: string;
  /** `github.repository` (default `octo/app`). */
  readonly repository?: string;
  /**
   * Where the runner keeps the action (`GITHUB_ACTION_PATH`): by default a
   * link `RUNNER_TEMP/_actions/loom-dev/loom/v<version>` to the repository,
   * as for `uses: loom-dev/loom@v<version>`; the repository itself for
   * `uses: ./`. `github.action_repository` is empty in a composite action's
   * steps, as on GitHub (actions/runner#2525).
   */
  readonly actionPath?: string;
  /** Run only the steps with these ids (default all). */
  readonly only?: readonly string[];
  /** Outputs of steps that did not run, as if they had. */
  readonly stepOutputs?: Readonly<Record<string, Record<string, string>>>;
}

/** One step as the runner ran (or skipped) it. */
export interface StepResult {
  readonly id: string;
  /** `success`, `failure` or `skipped`. */
  readonly conclusion: "success" | "failure" | "skipped";
  readonly exitCode: number | null;
}

/** What a run of the action left. */
export interface ActionRun {
  /** Every step's stdout and stderr, in step order. */
  readonly log: string;
  /** The job summary: every step's `GITHUB_STEP_SUMMARY`, in order. */
  readonly summary: string;
  /** The action's outputs. */
  readonly outputs: Record<string, string>;
  /** The raw `GITHUB_OUTPUT` files, joined. */
  readonly outputFiles: string;
  /** Folders the steps added to `GITHUB_PATH`, in order. */
  readonly path: readonly string[];
  readonly steps: readonly StepResult[];
  /** `success` when no step failed. */
  readonly conclusion: "success" | "failure";
}

/** The repository's action.yml, parsed. */
export async function actionManifest(): Promise<ActionManifest> {
  return parse(
    await Deno.readTextFile(join(REPO_ROOT, "action.yml")),
  ) as ActionManifest;
}

const CONTEXTS = ["github", "runner", "inputs", "steps", "env"];

/** Evaluates one expression (without `${{ }}`) over the contexts. */
function evaluate(
  expression: string,
  contexts: Record<string, unknown>,
  status: { failed: boolean },
): data.ExpressionData {
  const functions = [
    ["success", () => !status.failed],
    ["failure", () => status.failed],
    ["always", () => true],
    ["cancelled", () => false],
  ] as const;
  const definitions = functions.map(([name, f]) => ({
    name,
    minArgs: 0,
    maxArgs: 0,
    call: () => new data.BooleanData(f()),
  }));
  const lexed = new Lexer(expression).lex();
  const tree = new Parser(lexed.tokens, CONTEXTS, definitions).parse();
  const dictionary = JSON.parse(
    JSON.stringify(contexts),
    data.reviver,
  ) as data.Dictionary;
  return new Evaluator(
    tree,
    dictionary,
    new Map(definitions.map((d) => [d.name, d])),
  ).evaluate();
}

/** A string with `${{ … }}` parts, evaluated. */
function template(
  text: string,
  contexts: Record<string, unknown>,
  status: { failed: boolean },
): string {
  return text.replace(
    /\$\{\{(.*?)\}\}/gs,
    (_, expression: string) =>
      evaluate(expression, contexts, status).coerceString(),
  );
}

/** A step's `if`: an expression with or without `${{ }}`. */
function condition(
  text: string | undefined,
  contexts: Record<string, unknown>,
  status: { failed: boolean },
): boolean {
  const expression = (text ?? "success()").trim()
    .replace(/^\$\{\{(.*)\}\}$/s, "$1");
  // Like the runner: a condition without a status function means success() && it.
  const full = /\b(success|failure|always|cancelled)\(\)/.test(expression)
    ? expression
    : `success() && (${expression})`;
  return truthy(evaluate(full, contexts, status));
}

/**
 * Reads a `GITHUB_OUTPUT` file: `name=value` lines and
 * `name<<DELIMITER` … `DELIMITER` blocks.
 *
 * @param text The file's text.
 * @returns The outputs.
 */
export function readOutputFile(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (line === "") continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc !== null) {
      const [, name, delimiter] = heredoc;
      const value: string[] = [];
      i += 1;
      while (i < lines.length && lines[i] !== delimiter) {
        value.push(lines[i]!);
        i += 1;
      }
      if (i >= lines.length) {
        throw new Error(`GITHUB_OUTPUT: no closing ${delimiter}`);
      }
      outputs[name!] = value.join("\n");
      continue;
    }
    const eq = line.indexOf("=");
    if (eq < 0) throw new Error(`GITHUB_OUTPUT: malformed line ${line}`);
    outputs[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return outputs;
}

/**
 * Runs the repository's action as a runner would run `uses: ./`.
 *
 * @param options The job: inputs, environment, runner.
 * @returns The log, the summary, the outputs and each step's conclusion.
 */
export async function runAction(options: RunnerOptions): Promise<ActionRun> {
  const manifest = await actionManifest();
  const runner = {
    os: options.os ?? "Linux",
    arch: options.arch ?? "X64",
    temp: options.temp,
  };
  let actionPath = options.actionPath;
  if (actionPath === undefined) {
    const version = (JSON.parse(
      await Deno.readTextFile(join(REPO_ROOT, "deno.json")),
    ) as { version: string }).version;
    const parent = join(options.temp, "_actions", "loom-dev", "loom");
    await Deno.mkdir(parent, { recursive: true });
    actionPath = join(parent, `v${version}`);
    await Deno.symlink(REPO_ROOT, actionPath);
  }
  const github = {
    workspace: options.workspace,
    repository: options.repository ?? "octo/app",
    action_repository: "",
    action_path: actionPath,
    server_url: "https://github.com",
    token: "ghs_simulated-job-token",
  };
  const status = { failed: false };
  const base: Record<string, unknown> = {
    github,
    runner,
    inputs: {},
    steps: {},
    env: options.env,
  };
  const inputs: Record<string, string> = {};
  for (const [name, input] of Object.entries(manifest.inputs)) {
    inputs[name] = options.with?.[name] ??
      template(input.default ?? "", base, status);
  }
  for (const name of Object.keys(options.with ?? {})) {
    if (!(name in manifest.inputs)) throw new Error(`Unknown input ${name}`);
  }
  const steps: Record<string, { outputs: Record<string, string> }> = {};
  for (const [id, outputs] of Object.entries(options.stepOutputs ?? {})) {
    steps[id] = { outputs };
  }
  const contexts = () => ({ ...base, inputs, steps });
  let log = "";
  let summary = "";
  let outputFiles = "";
  const added: string[] = [];
  const results: StepResult[] = [];
  for (const [index, step] of manifest.runs.steps.entries()) {
    const id = step.id ?? `step${index}`;
    if (
      (options.only !== undefined && !options.only.includes(id)) ||
      !condition(step.if, contexts(), status)
    ) {
      results.push({ id, conclusion: "skipped", exitCode: null });
      continue;
    }
    if (step.shell !== "bash" || step.run === undefined) {
      throw new Error(`Step ${id}: the simulated runner runs shell: bash only`);
    }
    const dir = await Deno.makeTempDir({
      dir: options.temp,
      prefix: "_runner",
    });
    const script = join(dir, "step.sh");
    // One stream, as the runner's log shows it.
    await Deno.writeTextFile(
      script,
      `exec 2>&1\n${template(step.run, contexts(), status)}\n`,
    );
    const output = join(dir, "output");
    const stepSummary = join(dir, "summary");
    const stepPath = join(dir, "path");
    await Deno.writeTextFile(output, "");
    await Deno.writeTextFile(stepSummary, "");
    await Deno.writeTextFile(stepPath, "");
    const env: Record<string, string> = {
      ...options.env,
      PATH: [...added].reverse().concat(options.env["PATH"] ?? []).join(":"),
      GITHUB_PATH: stepPath,
      GITHUB_ACTIONS: "true",
      GITHUB_ACTION_PATH: actionPath,
      GITHUB_WORKSPACE: options.workspace,
      GITHUB_REPOSITORY: github.repository,
      GITHUB_SERVER_URL: github.server_url,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: stepSummary,
      RUNNER_OS: runner.os,
      RUNNER_ARCH: runner.arch,
      RUNNER_TEMP: runner.temp,
    };
    for (const [name, value] of Object.entries(step.env ?? {})) {
      env[name] = template(value, contexts(), status);
    }
    const result = await new Deno.Command("bash", {
      args: ["--noprofile", "--norc", "-eo", "pipefail", script],
      cwd: options.workspace,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    log += decoder.decode(result.stdout) + decoder.decode(result.stderr);
    summary += await Deno.readTextFile(stepSummary);
    const written = await Deno.readTextFile(output);
    outputFiles += written;
    steps[id] = { outputs: readOutputFile(written) };
    added.push(
      ...(await Deno.readTextFile(stepPath)).split("\n").filter((l) =>
        l !== ""
      ),
    );
    if (!result.success) status.failed = true;
    results.push({
      id,
      conclusion: result.success ? "success" : "failure",
      exitCode: result.code,
    });
  }
  const outputs: Record<string, string> = {};
  for (const [name, output] of Object.entries(manifest.outputs)) {
    outputs[name] = template(output.value, contexts(), status);
  }
  return {
    log,
    summary,
    outputs,
    outputFiles,
    path: added,
    steps: results,
    conclusion: status.failed ? "failure" : "success",
  };
}
