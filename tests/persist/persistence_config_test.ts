import assert from "node:assert/strict";
import {
  loadPersistenceConfig,
  mergePersistenceConfigs,
  parsePersistenceConfig,
  parseThresholdFlags,
  PersistenceConfigError,
} from "../../lib/persist/persistence_config.ts";
import { persistenceThreshold } from "../../lib/persist/tool_policy.ts";
import { tempDir } from "../_kit.ts";

function rejects(text: string, pattern: RegExp, key?: string): void {
  assert.throws(
    () => parsePersistenceConfig(text, { source: "conf/loom.json" }),
    (e: unknown) =>
      e instanceof PersistenceConfigError && e.code === "invalid_config" &&
      e.message.includes("conf/loom.json") && pattern.test(e.message) &&
      (key === undefined || e.key === key),
  );
}

Deno.test("parsePersistenceConfig() validates the file and names the file and key", async (t) => {
  await t.step("a valid file gives overrides", () => {
    const config = parsePersistenceConfig(
      '{"maxResultSizeChars": {"tests.run": 50000}}',
      { source: "loom.json" },
    );
    assert.deepEqual(config.overrides, { "tests.run": 50000 });
    assert.deepEqual(config.warnings, []);
  });
  await t.step(
    "an override for a self-bounding tool is dropped with a warning",
    () => {
      const config = parsePersistenceConfig(
        '{"maxResultSizeChars": {"repository.inspect": 1000, "$read_result": 5}}',
        { source: "loom.json" },
      );
      assert.deepEqual(config.overrides, {});
      assert.equal(config.warnings.length, 2);
      assert.equal(
        persistenceThreshold("repository.inspect", config.overrides),
        Infinity,
      );
    },
  );
  await t.step("invalid JSON", () => rejects("{", /not valid JSON/));
  await t.step(
    "an unknown top-level key",
    () => rejects('{"other": 1}', /unknown key other/),
  );
  await t.step(
    "a string value",
    () =>
      rejects(
        '{"maxResultSizeChars": {"tests.run": "50000"}}',
        /tests\.run/,
        "tests.run",
      ),
  );
  await t.step(
    "a negative value",
    () =>
      rejects(
        '{"maxResultSizeChars": {"tests.run": -5}}',
        /positive/,
        "tests.run",
      ),
  );
  await t.step(
    "zero",
    () =>
      rejects(
        '{"maxResultSizeChars": {"tests.run": 0}}',
        /positive/,
        "tests.run",
      ),
  );
  await t.step(
    "an undeclared tool",
    () =>
      rejects(
        '{"maxResultSizeChars": {"shell.run": 10}}',
        /shell\.run/,
        "shell.run",
      ),
  );
});

Deno.test("loadPersistenceConfig() names an unreadable file", async () => {
  await using dir = await tempDir();
  await assert.rejects(
    loadPersistenceConfig(`${dir.path}/missing.json`),
    (e: unknown) =>
      e instanceof PersistenceConfigError && e.message.includes("missing.json"),
  );
});

Deno.test("parseThresholdFlags() reads TOOL=N and refuses anything else", () => {
  assert.deepEqual(
    parseThresholdFlags(["tests.run=10", "tests.run=20"]).overrides,
    {
      "tests.run": 20,
    },
  );
  const ignored = parseThresholdFlags(["repository.inspect=10"]);
  assert.deepEqual(ignored.overrides, {});
  assert.equal(ignored.warnings.length, 1);
  for (
    const bad of [
      "tests.run",
      "tests.run=",
      "=5",
      "tests.run=-1",
      "tests.run=0",
      "tests.run=NaN",
      "tests.run=Infinity",
      "tests.run=1e3x",
    ]
  ) {
    assert.throws(
      () => parseThresholdFlags([bad]),
      PersistenceConfigError,
      bad,
    );
  }
});

Deno.test("mergePersistenceConfigs() lets flags win over the file", () => {
  const file = parsePersistenceConfig(
    '{"maxResultSizeChars": {"tests.run": 100, "repository.edit": 7}}',
    {
      source: "f",
    },
  );
  const flags = parseThresholdFlags(["tests.run=200"]);
  assert.deepEqual(mergePersistenceConfigs(file, flags).overrides, {
    "tests.run": 200,
    "repository.edit": 7,
  });
});
