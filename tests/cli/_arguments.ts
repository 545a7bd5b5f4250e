// Table-driven checks of the commands' pure `parse…Arguments` functions: a
// row is arguments and the parsed object, the usage error's message, or (for
// --help) what the help text starts with.
import assert from "node:assert/strict";
import { UsageError } from "../../lib/cli/_io.ts";

/** What a parser is expected to do with one set of arguments. */
export type ParseCase<A> = readonly [
  name: string,
  args: readonly string[],
  expected:
    | A
    | { readonly usage: string | RegExp }
    | { readonly help: RegExp },
];

/**
 * Checks a parser against a table, one step a row: the parsed object must
 * equal the expected one, or parsing must throw a `usage` UsageError whose
 * message is (or matches) the expected one, or return the help whose text
 * matches.
 *
 * @param t The test.
 * @param parse The parser.
 * @param cases The table.
 */
export async function checkParser<
  P extends (args: readonly string[]) => unknown,
>(
  t: Deno.TestContext,
  parse: P,
  cases: readonly ParseCase<ReturnType<P>>[],
): Promise<void> {
  for (const [name, args, expected] of cases) {
    await t.step(name, () => {
      if (isObject(expected) && "help" in expected) {
        const parsed = parse(args) as { kind: string; text: string };
        assert.equal(parsed.kind, "help");
        assert.match(parsed.text, expected.help);
      } else if (isObject(expected) && "usage" in expected) {
        const error = refusal(() => parse(args));
        if (typeof expected.usage === "string") {
          assert.equal(error.message, expected.usage);
        } else assert.match(error.message, expected.usage);
      } else assert.deepEqual(parse(args), expected);
    });
  }
}

function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

function refusal(parse: () => unknown): UsageError {
  let parsed: unknown;
  try {
    parsed = parse();
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    assert.equal(error.code, "usage");
    return error;
  }
  assert.fail(`parsed as ${JSON.stringify(parsed)}`);
}
