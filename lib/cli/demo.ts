/**
 * `loom demo`: replays the recorded bug-fix slice on a temp copy of the
 * fixture workspace under the bounded policy and prints the summary. Needs
 * the repository's `fixtures/` directory (it is not part of the package).
 *
 * @module
 */
import { runSlice } from "../slice/run.ts";
import { defined, parseFlags } from "./_args.ts";
import { type Command, commandOf, help, type Parsed } from "./_command.ts";
import { checkWritableFile } from "./_preflight.ts";
import { type CliIo, exitCodeOf, UsageError } from "./_io.ts";
import { summary } from "./run.ts";
import { sandboxOption } from "./_test_flags.ts";
import { copyTree } from "../copy_tree.ts";

/** The help text of `loom demo`. */
export const DEMO_HELP =
  `Usage: loom demo [--json] [--context-report PATH] [--keep]

Replays fixtures/recordings/bugfix.json on a temp copy of
fixtures/workspaces/bugfix under --context-policy bounded, with the test
command "deno run check.ts" (this Deno), and prints the summary. The same as:

  cp -r fixtures/workspaces/bugfix "$TMP/bugfix"
  loom run --workspace "$TMP/bugfix" --intent-file fixtures/intents/bugfix.txt \\
    --model recorded:fixtures/recordings/bugfix.json --test "deno run check.ts" \\
    --context-policy bounded

Options:
  --json                   Print the summary as JSON
  --context-report PATH    Write the JSON context report to PATH
  --keep                   Keep the temp workspace and print its path
  -h, --help               Show this help
`;

/** Parsed `loom demo` arguments. */
export interface DemoArguments {
  /** `--json`: print the summary as JSON. */
  readonly json: boolean;
  /** `--keep`: keep the temp workspace. */
  readonly keep: boolean;
  /** `--context-report PATH`. */
  readonly contextReport?: string;
}

/**
 * Parses `loom demo` arguments; checks no path.
 *
 * @param args Arguments after `demo`.
 * @returns The arguments, or the help text.
 * @throws {UsageError} On an unknown option or a positional argument.
 */
export function parseDemoArguments(
  args: readonly string[],
): Parsed<DemoArguments> {
  const { values } = parseFlags(args, {
    json: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    "context-report": { type: "string" },
  });
  if (values.help) return help(DEMO_HELP);
  return defined({
    json: values.json,
    keep: values.keep,
    contextReport: values["context-report"],
  });
}

async function demo(a: DemoArguments, io: CliIo): Promise<number> {
  if (a.contextReport !== undefined) {
    await checkWritableFile(a.contextReport, "--context-report");
  }
  const root = await findFixtures();
  const intent = await Deno.readTextFile(`${root}intents/bugfix.txt`);
  const temp = await Deno.makeTempDir({ prefix: "loom-demo-" });
  const workspace = `${temp}/bugfix`;
  try {
    await copyTree(`${root}workspaces/bugfix`, workspace);
    io.err(`loom demo: replaying the bug-fix recording in ${workspace}\n`);
    const outcome = await runSlice({
      intent,
      workspace,
      test: {
        // A compiled loom is not a Deno CLI (it cannot `run` a script), so
        // its demo tests with `deno` from PATH; otherwise the very Deno
        // running loom.
        command: [
          Deno.build.standalone ? "deno" : Deno.execPath(),
          "run",
          "check.ts",
        ],
        timeoutMs: 60_000,
      },
      maxSteps: 20,
      provider: `recorded:${root}recordings/bugfix.json`,
    }, {
      contextPolicy: "bounded",
      ...sandboxOption(),
      ...defined({ contextReport: a.contextReport }),
      onProgress: (line) => io.err(`${line}\n`),
    });
    io.out(a.json ? `${JSON.stringify(outcome, null, 2)}\n` : summary(outcome));
    if (a.keep) io.err(`loom demo: workspace kept at ${workspace}\n`);
    return exitCodeOf(outcome.stop);
  } finally {
    if (!a.keep) await Deno.remove(temp, { recursive: true });
  }
}

/**
 * The repository's fixtures/ directory: next to the sources (lib/cli/ is two
 * levels down; in a compiled binary, the copy `deno compile --include` embeds),
 * next to a bundle in dist/, or under the working directory.
 */
async function findFixtures(): Promise<string> {
  const candidates = [
    new URL("../../fixtures/", import.meta.url),
    new URL("../fixtures/", import.meta.url),
    new URL("fixtures/", `file://${Deno.cwd()}/`),
  ].filter((url) => url.protocol === "file:")
    .map((url) => decodeURIComponent(url.pathname));
  for (const root of candidates) {
    try {
      await Deno.stat(`${root}recordings/bugfix.json`);
      return root;
    } catch {
      // try the next place
    }
  }
  throw new UsageError(
    "usage",
    `The demo needs the repository's fixtures/ directory; none found at ${
      candidates.join(", ")
    }`,
  );
}

/** `loom demo`: the exit code of the replayed slice. */
export const demoCommand: Command = commandOf(parseDemoArguments, demo);
