import assert from "node:assert/strict";
import {
  actionJsonSchema,
  ACTIONS,
  isActionName,
  selectActionSchema,
} from "../../lib/slice/actions.ts";

/** Every object node of a JSON Schema, depth first. */
function* objects(node: unknown): Generator<Record<string, unknown>> {
  if (Array.isArray(node)) {
    for (const item of node) yield* objects(item);
  } else if (node !== null && typeof node === "object") {
    const record = node as Record<string, unknown>;
    if (record["type"] === "object") yield record;
    for (const value of Object.values(record)) yield* objects(value);
  }
}

Deno.test("actionJsonSchema() describes closed argument objects", async (t) => {
  for (const { name } of ACTIONS) {
    await t.step(`${name}: every object forbids additional properties`, () => {
      const schema = actionJsonSchema(name);
      assert.equal(schema["$schema"], undefined);
      const nodes = [...objects(schema)];
      assert.ok(nodes.length >= 1);
      for (const node of nodes) {
        assert.equal(node["additionalProperties"], false);
      }
    });
  }
  await t.step("repository.inspect takes 1 to 16 paths", () => {
    const paths = (actionJsonSchema("repository.inspect")["properties"] as {
      paths: Record<string, unknown>;
    }).paths;
    assert.equal(paths["minItems"], 1);
    assert.equal(paths["maxItems"], 16);
  });
  await t.step(
    "repository.edit offers literal or segment contents with references",
    () => {
      const text = JSON.stringify(actionJsonSchema("repository.edit"));
      for (
        const key of [
          '"segments"',
          '"literal"',
          '"ref"',
          '"sha256"',
          '"json_pointer"',
          '"message"',
        ]
      ) {
        assert.ok(text.includes(key), key);
      }
      assert.deepEqual(actionJsonSchema("repository.edit")["required"], [
        "files",
      ]);
    },
  );
  await t.step(
    "tests.run takes an empty object and slice.complete a summary",
    () => {
      assert.deepEqual(actionJsonSchema("tests.run")["properties"], {});
      assert.deepEqual(actionJsonSchema("slice.complete")["required"], [
        "summary",
      ]);
    },
  );
  await t.step("the same action yields the same bytes every time", () => {
    assert.equal(
      JSON.stringify(actionJsonSchema("repository.edit")),
      JSON.stringify(actionJsonSchema("repository.edit")),
    );
  });
  await t.step("an unknown action is a RangeError", () => {
    assert.throws(() => actionJsonSchema("shell.exec"), RangeError);
  });
});

Deno.test("selectActionSchema() is a closed object with an enum of the candidates", () => {
  const schema = selectActionSchema(["tests.run", "slice.complete"]);
  assert.deepEqual(schema, {
    type: "object",
    properties: {
      action: { type: "string", enum: ["tests.run", "slice.complete"] },
    },
    required: ["action"],
    additionalProperties: false,
  });
  assert.throws(() => selectActionSchema([]), RangeError);
});

Deno.test("ACTIONS lists the four actions in candidate order with descriptions", () => {
  assert.deepEqual(ACTIONS.map((a) => a.name), [
    "repository.inspect",
    "repository.edit",
    "tests.run",
    "slice.complete",
  ]);
  for (const action of ACTIONS) {
    assert.ok(action.description.length > 20);
    assert.equal(isActionName(action.name), true);
  }
  assert.equal(isActionName("toString"), false);
});

Deno.test("the action registry drives candidates, instructions and persistence", async (t) => {
  const { admissibleActions } = await import("../../lib/slice/actions.ts");
  const { sliceInstructions } = await import(
    "../../lib/slice/_instructions.ts"
  );
  const { TOOL_DECLARATIONS } = await import(
    "../../lib/persist/tool_policy.ts"
  );
  await t.step("candidates follow each entry's admission", () => {
    assert.deepEqual(
      admissibleActions({ testConfigured: false, validated: false }),
      ["repository.inspect", "repository.edit", "slice.complete"],
    );
    assert.deepEqual(
      admissibleActions({ testConfigured: true, validated: true }),
      ACTIONS.map((a) => a.name),
    );
  });
  await t.step(
    "the instructions list every action with its description",
    () => {
      const text = sliceInstructions(undefined);
      for (const a of ACTIONS) {
        assert.ok(
          text.includes(`- ${a.name} ${a.signature}: ${a.description}`),
        );
      }
    },
  );
  await t.step("persistence declarations follow each entry's class", () => {
    for (const a of ACTIONS) {
      assert.equal(
        TOOL_DECLARATIONS[a.name]?.maxResultSizeChars === Infinity,
        a.persistence === "self_bounding",
      );
    }
  });
});
