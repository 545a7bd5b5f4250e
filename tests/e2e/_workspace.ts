/**
 * Temp copies of the fixture workspaces, shared by the end-to-end tests, the
 * slice tests and tools/make_recordings.ts. Every run works on a fresh copy;
 * the committed fixtures are never touched.
 *
 * The hostile workspace gets what git cannot carry safely: a sibling
 * `outside/` directory with a secret, a `docs_link` symlink leading to it,
 * and a `.git/` directory.
 */
import { copyTree } from "../../lib/copy_tree.ts";
import type { SliceRequest } from "../../lib/slice/request.ts";

/** The fixture workspaces. */
export type FixtureName = "bugfix" | "long" | "longer" | "hostile";

/** A prepared temp copy; disposing it removes the temp root. */
export interface PreparedWorkspace extends AsyncDisposable {
  /** The temp root holding the workspace (and `outside/` for hostile). */
  readonly root: string;
  /** The workspace copy. */
  readonly workspace: string;
  /** Removes the temp root. */
  cleanup(): Promise<void>;
}

/** The repository root (this file is tests/e2e/_workspace.ts). */
export const REPO_ROOT: string = new URL("../../", import.meta.url).pathname
  .replace(/\/$/, "");

/** Path of a fixture workspace in the repository. */
export function fixtureWorkspace(name: FixtureName): string {
  return `${REPO_ROOT}/fixtures/workspaces/${name}`;
}

/** Path of a recording in the repository. */
export function recordingPath(name: string): string {
  return `${REPO_ROOT}/fixtures/recordings/${name}.json`;
}

/** The test command every fixture uses: this Deno running `check.ts`. */
export function checkCommand(): string[] {
  return [Deno.execPath(), "run", "check.ts"];
}

/** Path of a fixture's intent file (fixtures/intents/NAME.txt). */
export function intentPath(name: FixtureName): string {
  return `${REPO_ROOT}/fixtures/intents/${name}.txt`;
}

/** Intents of the fixtures (the recordings were made with these). */
export const INTENTS: Readonly<Record<FixtureName, string>> = {
  bugfix: Deno.readTextFileSync(intentPath("bugfix")),
  long: Deno.readTextFileSync(intentPath("long")),
  longer: Deno.readTextFileSync(intentPath("longer")),
  hostile: Deno.readTextFileSync(intentPath("hostile")),
};

/** The part of a slice request a fixture's recordings were made with. */
export type FixtureSlice = Omit<SliceRequest, "provider">;

/**
 * The slice a fixture's recordings were made with, on a workspace: its
 * intent, and this Deno running `check.ts` (60 s) as the test.
 *
 * @param name The fixture.
 * @param workspace The workspace the slice runs on (a copy, or the committed
 * fixture for an offline replay, which copies it itself).
 * @param maxSteps The step budget.
 * @returns The request without its provider.
 */
export function fixtureSlice(
  name: FixtureName,
  workspace: string,
  maxSteps: number,
): FixtureSlice {
  return {
    intent: INTENTS[name],
    workspace,
    test: { command: checkCommand(), timeoutMs: 60_000 },
    maxSteps,
  };
}

/**
 * What `replayRecording()` takes from a fixture: its recording, its
 * committed workspace and its slice.
 *
 * @param name The fixture.
 * @param maxSteps The step budget.
 * @returns The fixture's part of the replay options.
 */
export function fixtureReplay(
  name: FixtureName,
  maxSteps: number,
): FixtureSlice & { readonly recording: string } {
  return {
    recording: recordingPath(name),
    ...fixtureSlice(name, fixtureWorkspace(name), maxSteps),
  };
}

/** Options of {@linkcode recordedRunArgs}. */
export interface RecordedRunOptions {
  /** The fixture whose intent (and recording) the run replays; `bugfix` by default. */
  readonly fixture?: FixtureName;
  /** `--model`; by default the fixture's recording (`recorded:PATH`). */
  readonly model?: string;
  /** `--test`; by default this Deno running `check.ts`; `null` gives none. */
  readonly test?: string | null;
  /** `--context-policy`, when given. */
  readonly policy?: string;
  /** `--max-steps`, when given. */
  readonly maxSteps?: number;
}

/**
 * `loom run` arguments that replay a fixture's recording on a copy of its
 * workspace: the one spelling the CLI tests and figure scripts share.
 *
 * @param workspace The prepared copy's workspace.
 * @param options What differs from the recorded bug-fix slice.
 * @returns The arguments after `loom`, starting with `run`.
 */
export function recordedRunArgs(
  workspace: string,
  options: RecordedRunOptions = {},
): string[] {
  const fixture = options.fixture ?? "bugfix";
  const test = options.test === undefined
    ? `${Deno.execPath()} run check.ts`
    : options.test;
  return [
    "run",
    "--workspace",
    workspace,
    "--intent-file",
    intentPath(fixture),
    "--model",
    options.model ?? `recorded:${recordingPath(fixture)}`,
    ...(test === null ? [] : ["--test", test]),
    ...(options.policy === undefined
      ? []
      : ["--context-policy", options.policy]),
    ...(options.maxSteps === undefined
      ? []
      : ["--max-steps", String(options.maxSteps)]),
  ];
}

/**
 * Copies a fixture workspace into a fresh temp root.
 *
 * @param name The fixture.
 * @returns The prepared copy.
 */
export async function prepareWorkspace(
  name: FixtureName,
): Promise<PreparedWorkspace> {
  const root = await Deno.makeTempDir({ prefix: `loom-${name}-` });
  const workspace = `${root}/workspace`;
  await copyTree(fixtureWorkspace(name), workspace);
  if (name === "hostile") {
    await Deno.mkdir(`${root}/outside`);
    await Deno.writeTextFile(
      `${root}/outside/secret.txt`,
      "outside the workspace: must never be read or changed\n",
    );
    await Deno.symlink("../outside", `${workspace}/docs_link`);
    await Deno.mkdir(`${workspace}/.git`);
    await Deno.writeTextFile(
      `${workspace}/.git/config`,
      "[core]\n\trepositoryformatversion = 0\n",
    );
  }
  const cleanup = () => Deno.remove(root, { recursive: true });
  return { root, workspace, cleanup, [Symbol.asyncDispose]: cleanup };
}

/**
 * Every file under `dir` with its contents, for before/after comparisons.
 * Symlinks are listed by their target, not followed.
 */
export async function snapshotTree(
  dir: string,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  async function walk(path: string, rel: string): Promise<void> {
    for await (const entry of Deno.readDir(path)) {
      const p = `${path}/${entry.name}`;
      const r = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isSymlink) out.set(r, `-> ${await Deno.readLink(p)}`);
      else if (entry.isDirectory) {
        out.set(`${r}/`, "");
        await walk(p, r);
      } else out.set(r, await Deno.readTextFile(p));
    }
  }
  await walk(dir, "");
  return out;
}
