import assert from "node:assert/strict";
import {
  DEFAULT_PERSISTENCE_THRESHOLD,
  isSelfBounding,
  persistenceThreshold,
  shouldPersist,
  TOOL_DECLARATIONS,
  toolDeclaration,
  UnknownToolError,
} from "../../lib/persist/tool_policy.ts";

const SELF_BOUNDING = [
  "repository.inspect",
  "$read_result",
  "$list_results",
  "$read_history",
  "$list_history",
];

Deno.test("every action and lookup verb declares maxResultSizeChars", async (t) => {
  await t.step("self-bounding tools declare Infinity", () => {
    for (const name of SELF_BOUNDING) {
      assert.equal(TOOL_DECLARATIONS[name]?.maxResultSizeChars, Infinity, name);
      assert.equal(isSelfBounding(name), true, name);
    }
  });
  await t.step("externally bounded tools declare a finite threshold", () => {
    for (const name of ["tests.run", "repository.edit", "slice.complete"]) {
      const size = TOOL_DECLARATIONS[name]?.maxResultSizeChars;
      assert.ok(Number.isFinite(size) && (size ?? 0) > 0, name);
      assert.equal(isSelfBounding(name), false, name);
    }
  });
  await t.step("an undeclared tool is a typed error, not a default", () => {
    assert.throws(
      () => persistenceThreshold("shell.run"),
      (e: unknown) =>
        e instanceof UnknownToolError && e.code === "unknown_tool",
    );
  });
});

Deno.test("persistenceThreshold() checks the Infinity sentinel before any override", async (t) => {
  await t.step(
    "an override of Infinity to a number for repository.inspect is ignored",
    () => {
      for (const value of [1, 100, 30_000, 1e9, Number.MAX_VALUE]) {
        assert.equal(
          persistenceThreshold("repository.inspect", {
            "repository.inspect": value,
          }),
          Infinity,
        );
      }
    },
  );
  await t.step("overrides of every lookup verb are ignored", () => {
    for (const name of SELF_BOUNDING) {
      assert.equal(persistenceThreshold(name, { [name]: 10 }), Infinity, name);
    }
  });
  await t.step(
    "a declaration that reuses a self-bounding name stays Infinity",
    () => {
      const redeclared = {
        name: "repository.inspect",
        maxResultSizeChars: 500,
      };
      assert.equal(toolDeclaration(redeclared).maxResultSizeChars, Infinity);
      assert.equal(
        persistenceThreshold(redeclared, { "repository.inspect": 10 }),
        Infinity,
      );
      assert.equal(shouldPersist(redeclared, 10_000, { owner: true }), false);
    },
  );
  await t.step(
    "a finite positive override applies to an externally bounded tool",
    () => {
      assert.equal(
        persistenceThreshold("tests.run", { "tests.run": 4096 }),
        4096,
      );
      assert.equal(
        persistenceThreshold("tests.run", { "tests.run": 0.5 }),
        0.5,
      );
    },
  );
  await t.step(
    "NaN, negative, zero, Infinity, strings and other values are ignored",
    () => {
      const bad: unknown[] = [
        NaN,
        -1,
        -Infinity,
        0,
        -0,
        Infinity,
        "5000",
        "",
        null,
        undefined,
        true,
        {},
        [4096],
        5000n,
      ];
      for (const value of bad) {
        assert.equal(
          persistenceThreshold("tests.run", { "tests.run": value }),
          DEFAULT_PERSISTENCE_THRESHOLD,
          String(value),
        );
      }
    },
  );
  await t.step("inherited properties are not overrides", () => {
    const proto = { "tests.run": 10 };
    const overrides = Object.create(proto) as Record<string, unknown>;
    assert.equal(
      persistenceThreshold("tests.run", overrides),
      DEFAULT_PERSISTENCE_THRESHOLD,
    );
  });
  await t.step("an override for another tool does not apply", () => {
    assert.equal(
      persistenceThreshold("tests.run", { "repository.edit": 10 }),
      DEFAULT_PERSISTENCE_THRESHOLD,
    );
  });
  await t.step("custom tools follow the same rules", () => {
    const shell = { name: "shell", maxResultSizeChars: 50_000 };
    const reader = { name: "web.fetch", maxResultSizeChars: Infinity };
    assert.equal(persistenceThreshold(shell, { shell: 10 }), 10);
    assert.equal(persistenceThreshold(reader, { "web.fetch": 10 }), Infinity);
    assert.throws(
      () => toolDeclaration({ name: "x", maxResultSizeChars: NaN }),
      TypeError,
    );
    assert.throws(
      () => toolDeclaration({ name: "x", maxResultSizeChars: 0 }),
      TypeError,
    );
  });
});

Deno.test("shouldPersist() persists only for an owner, an external tool and above the threshold", () => {
  assert.equal(shouldPersist("tests.run", 30_001, { owner: true }), true);
  assert.equal(shouldPersist("tests.run", 30_000, { owner: true }), false);
  assert.equal(shouldPersist("tests.run", 30_001, { owner: false }), false);
  assert.equal(
    shouldPersist("tests.run", 200, {
      owner: true,
      overrides: { "tests.run": 100 },
    }),
    true,
  );
  assert.equal(
    shouldPersist("repository.inspect", 1e9, {
      owner: true,
      overrides: { "repository.inspect": 1 },
    }),
    false,
  );
});
