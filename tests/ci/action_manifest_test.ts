// The composite action (action.yml), checked with GitHub's own action
// manifest parser (`@actions/workflow-parser`'s parseAction, against the
// strict schema action-v1.0.json), then with the metadata rules of
// docs.github.com ("Metadata syntax for GitHub Actions") that the schema
// leaves loose, and with the references between its parts: every input a
// step reads exists, every step output the action reads is written by that
// step's script, every script exists. A table of broken copies must fail.
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { REPO_ROOT } from "../_kit.ts";
import { actionErrors, type ActionTemplate } from "./_workflow_parser.ts";

const TEXT = await Deno.readTextFile(join(REPO_ROOT, "action.yml"));

/** The inputs and outputs issue 30 asks for. */
const INPUTS = [
  "intent",
  "intent-file",
  "model",
  "test",
  "context-policy",
  "max-steps",
  "workspace",
  "session",
  "version",
  "allow-incomplete",
  "args",
];
const OUTPUTS = [
  "outcome",
  "exit-code",
  "revision",
  "report",
  "html-report",
  "session",
];

/** Every expression in a parsed template, as text. */
function expressions(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(expressions);
  if (value === null || typeof value !== "object") return [];
  const record = value as Record<string, unknown>;
  const own = typeof record["expr"] === "string" ? [record["expr"]] : [];
  return [...own, ...Object.values(record).flatMap(expressions)];
}

/**
 * The metadata rules the schema leaves loose, on the raw YAML: an input has
 * a description and only the keys GitHub defines; an output of a composite
 * action has a value and only a description besides.
 */
function metadataErrors(text: string): string[] {
  const raw = parse(text) as {
    inputs?: Record<string, Record<string, unknown>>;
    outputs?: Record<string, Record<string, unknown>>;
  };
  const errors: string[] = [];
  const inputKeys = [
    "description",
    "required",
    "default",
    "deprecationMessage",
  ];
  for (const [id, input] of Object.entries(raw.inputs ?? {})) {
    if (typeof input?.["description"] !== "string") {
      errors.push(`input ${id} has no description`);
    }
    for (const key of Object.keys(input ?? {})) {
      if (!inputKeys.includes(key)) {
        errors.push(`input ${id} has unknown key ${key}`);
      }
    }
  }
  for (const [id, output] of Object.entries(raw.outputs ?? {})) {
    if (typeof output?.["value"] !== "string") {
      errors.push(`output ${id} of a composite action has no value`);
    }
    for (const key of Object.keys(output ?? {})) {
      if (key !== "description" && key !== "value") {
        errors.push(`output ${id} has unknown key ${key}`);
      }
    }
  }
  return errors;
}

/** The references between the manifest's parts and its scripts. */
async function referenceErrors(action: ActionTemplate): Promise<string[]> {
  const errors: string[] = [];
  if (action.runs.using !== "composite") return ["not a composite action"];
  const inputs = new Set((action.inputs ?? []).map((i) => i.id));
  const scripts = new Map<string, string>();
  const seen: string[] = [];
  for (const step of action.runs.steps) {
    const id = step.id;
    const run = "run" in step ? String(step.run) : "";
    const script =
      /^bash "\$\{GITHUB_ACTION_PATH\}\/(\.github\/action\/[a-z_]+\.sh)"$/
        .exec(run.trim())?.[1];
    if (script === undefined) {
      errors.push(`step ${id} does not run one of .github/action/*.sh: ${run}`);
    } else {
      try {
        scripts.set(id, await Deno.readTextFile(join(REPO_ROOT, script)));
      } catch {
        errors.push(`step ${id} runs ${script}, which does not exist`);
      }
    }
    for (const expression of expressions(step)) {
      for (const [, name] of expression.matchAll(/\binputs\.([\w-]+)/g)) {
        if (!inputs.has(name!)) {
          errors.push(`step ${id} reads no input ${name}`);
        }
      }
      for (const [, from] of expression.matchAll(/\bsteps\.([\w-]+)\./g)) {
        if (!seen.includes(from!)) {
          errors.push(
            `step ${id} reads step ${from}, which does not run before it`,
          );
        }
      }
    }
    if (id !== "") seen.push(id);
  }
  const everything = [
    ...expressions(action.outputs),
    ...expressions(action.runs.steps),
  ];
  for (const expression of everything) {
    for (
      const [, step, name] of expression.matchAll(
        /\bsteps\.([\w-]+)\.outputs\.([\w-]+)/g,
      )
    ) {
      const script = scripts.get(step!);
      if (script === undefined) {
        errors.push(
          `an expression reads steps.${step}.outputs.${name}: no step ${step}`,
        );
      } else if (
        !new RegExp(`(echo "${name}=|^output ${name} )`, "m").test(script)
      ) {
        errors.push(`the script of step ${step} never writes output ${name}`);
      }
    }
  }
  const read = new Set(
    everything.flatMap((e) =>
      [...e.matchAll(/\binputs\.([\w-]+)/g)].map((m) => m[1]!)
    ),
  );
  for (const input of inputs) {
    if (!read.has(input)) errors.push(`input ${input} is never read`);
  }
  return errors;
}

async function allErrors(text: string): Promise<string[]> {
  const parsed = actionErrors("action.yml", text);
  if (parsed.action === undefined) return parsed.errors;
  return [...metadataErrors(text), ...(await referenceErrors(parsed.action))];
}

Deno.test("action.yml parses with GitHub's action parser and follows the metadata rules", async () => {
  const { errors, action } = actionErrors("action.yml", TEXT);
  assert.deepEqual(errors, []);
  assert.ok(action !== undefined);
  assert.deepEqual(await allErrors(TEXT), []);
  assert.equal(action.runs.using, "composite");
  assert.deepEqual(action.inputs?.map((i) => i.id), INPUTS);
  assert.deepEqual(action.outputs?.map((o) => o.id), OUTPUTS);
  const defaults = Object.fromEntries(
    (action.inputs ?? []).map((
      i,
    ) => [i.id, JSON.parse(JSON.stringify(i.default ?? null))]),
  );
  assert.equal(defaults["context-policy"], "bounded");
  assert.equal(defaults["allow-incomplete"], "false");
  assert.deepEqual(defaults["workspace"], {
    type: 3,
    expr: "github.workspace",
  });
  // The version defaults to the action's own deno.json (read by the script).
  assert.equal(defaults["version"], "");
});

Deno.test("The action never splices an input into a script: inputs reach the shell as environment variables", () => {
  const raw = parse(TEXT) as {
    runs: { steps: { run: string; env?: Record<string, string> }[] };
  };
  for (const step of raw.runs.steps) {
    assert.ok(!step.run.includes("${{"), step.run);
    for (const value of Object.values(step.env ?? {})) {
      assert.match(value, /^\$\{\{ [^}]+ \}\}$/);
    }
  }
});

Deno.test("GitHub's parser and the metadata rules refuse broken copies of action.yml", async (t) => {
  const breakages: [string, (text: string) => string, RegExp][] = [
    [
      "no description",
      (s) => s.replace(/^description: .*\n/m, ""),
      /Required property is missing: description/,
    ],
    [
      "a misspelt top-level key",
      (s) => s.replace(/^runs:/m, "runz:"),
      /Unexpected value 'runz'/,
    ],
    [
      "a run step without a shell",
      (s) => s.replace(/^ {6}shell: bash\n/m, ""),
      /Required property is missing: shell/,
    ],
    [
      "an unknown runs.using",
      (s) => s.replace("using: composite", "using: compsite"),
      /Unexpected value 'compsite'/,
    ],
    [
      "an expression that does not close",
      (s) => s.replace("${{ inputs.version }}", "${{ inputs.version }"),
      /The expression is not closed/,
    ],
    [
      "a context an action cannot read",
      (s) => s.replace("${{ inputs.version }}", "${{ secrets.version }}"),
      /Unrecognized named-value: 'secrets'/,
    ],
    [
      "a step with both uses and run",
      (s) =>
        s.replace(
          /^ {4}- name: Let bubblewrap/m,
          "    - uses: actions/checkout@v4\n      name: Let bubblewrap",
        ),
      /Unexpected value 'run'/,
    ],
    [
      "a misspelt input key",
      (s) => s.replace(/^ {4}required: false\n/m, "    requried: false\n"),
      /input intent has unknown key requried/,
    ],
    [
      "an input without a description",
      (s) => s.replace(/^ {4}description: The task, as text.*\n/m, ""),
      /input intent has no description/,
    ],
    [
      "an output without a value",
      (s) =>
        s.replace(
          /^ {4}value: \$\{\{ steps\.run\.outputs\.outcome \}\}\n/m,
          "",
        ),
      /output outcome of a composite action has no value/,
    ],
    [
      "an output of a step that does not exist",
      (s) =>
        s.replace("steps.run.outputs.revision", "steps.runn.outputs.revision"),
      /no step runn/,
    ],
    [
      "an output the step never writes",
      (s) =>
        s.replace("steps.run.outputs.revision", "steps.run.outputs.revisions"),
      /never writes output revisions/,
    ],
    [
      "an input that does not exist",
      (s) => s.replace("${{ inputs.args }}", "${{ inputs.arguments }}"),
      /reads no input arguments/,
    ],
    [
      "an input no step reads",
      (s) => s.replace(/^ {8}LOOM_INPUT_ARGS: .*\n/m, ""),
      /input args is never read/,
    ],
    [
      "a script that does not exist",
      (s) => s.replace("action/sandbox.sh", "action/sandbx.sh"),
      /sandbx\.sh, which does not exist/,
    ],
    [
      "a step reading a later step",
      (s) =>
        s.replace("${{ inputs.version }}", "${{ steps.run.outputs.outcome }}"),
      /reads step run, which does not run before it/,
    ],
  ];
  for (const [name, breakCopy, expected] of breakages) {
    await t.step(name, async () => {
      const broken = breakCopy(TEXT);
      assert.notEqual(broken, TEXT, "the breakage applies");
      const errors = await allErrors(broken);
      assert.ok(errors.length > 0, `no error for ${name}`);
      assert.match(errors.join("\n"), expected);
    });
  }
});
