import assert from "node:assert/strict";
import {
  errorCategory,
  isLoomError,
  LoomError,
  mapError,
  messageOf,
} from "../lib/errors.ts";
import { JsonScanError, PointerError } from "../reference.ts";
import { ProviderError } from "../slice.ts";
import { SessionError } from "../session.ts";
import { exitCodeOf, exitCodeOfError, UsageError } from "../lib/cli/_io.ts";

Deno.test('isLoomError() checks the Symbol.for("loom.error") brand, not the shape', async (t) => {
  await t.step("a Loom error is one", () => {
    assert.equal(isLoomError(new PointerError("invalid_pointer", "Bad")), true);
  });
  await t.step("Deno's NotFound with code ENOENT is not", () => {
    const notFound = Object.assign(new Deno.errors.NotFound("gone"), {
      code: "ENOENT",
    });
    assert.equal(isLoomError(notFound), false);
  });
  await t.step("an error branded by another copy of the package is", () => {
    const other = new RangeError("From another copy");
    Object.defineProperty(other, Symbol.for("loom.error"), { value: true });
    assert.equal(isLoomError(other), true);
  });
  await t.step("a plain object carrying the brand is not", () => {
    assert.equal(isLoomError({ [Symbol.for("loom.error")]: true }), false);
  });
});

Deno.test("Loom errors share one constructor shape: code, message, options", () => {
  const cause = new Error("underlying");
  const error = new SessionError("result_missing", "Result file x is missing", {
    file: "/s/x",
    cause,
  });
  assert.equal(error.code, "result_missing");
  assert.equal(error.message, "Result file x is missing");
  assert.equal(error.file, "/s/x");
  assert.equal(error.cause, cause);
  assert.equal(error.name, "SessionError");
  assert.equal("cause" in new PointerError("invalid_pointer", "Bad"), false);
});

Deno.test("errorCategory() gives every code one category", () => {
  assert.equal(errorCategory("usage"), "bad_input");
  assert.equal(errorCategory("digest_mismatch"), "bad_input");
  assert.equal(errorCategory("slice_stopped"), "stopped");
  assert.equal(errorCategory("provider_http"), "internal");
  assert.equal(errorCategory("session_tampered"), "bad_input");
});

Deno.test("exitCodeOfError() maps categories to the documented exit codes", () => {
  assert.equal(exitCodeOfError(new UsageError("usage", "Bad flag")), 2);
  assert.equal(exitCodeOfError(new PointerError("invalid_pointer", "Bad")), 2);
  assert.equal(exitCodeOfError(new ProviderError("provider_http", "503")), 3);
  assert.equal(exitCodeOfError(new Deno.errors.NotFound("gone")), 3);
  assert.equal(exitCodeOfError("a string"), 3);
  assert.equal(exitCodeOf("completed"), 0);
  assert.equal(exitCodeOf("step_budget"), 1);
});

Deno.test("a LoomError base gives each class its built-in, name, code and details", async (t) => {
  await t.step(
    "a class with details keeps them and extends its built-in",
    () => {
      const error = new JsonScanError("invalid_json", "Bad JSON", {
        offset: 7,
      });
      assert.ok(error instanceof JsonScanError && error instanceof SyntaxError);
      assert.equal(error.name, "JsonScanError");
      assert.equal(error.offset, 7);
      assert.equal(isLoomError(error), true);
      assert.equal("cause" in error, false);
    },
  );
  await t.step("optional details that are not given stay unset", () => {
    const error = new SessionError("session_missing", "No journal");
    assert.equal(error.file, undefined);
    assert.equal(error.line, undefined);
  });
  await t.step("a class with its own defaults applies them", () => {
    const error = new ProviderError("provider_timeout", "Too slow");
    assert.equal(error.status, null);
    assert.equal(error.attempts, null);
  });
  await t.step("the bases are branded and frozen", () => {
    assert.ok(
      new PointerError("invalid_pointer", "Bad") instanceof
        LoomError.SyntaxError,
    );
    assert.equal(Object.isFrozen(LoomError), true);
  });
});

Deno.test("mapError() throws what the mapper makes of a failure, with the value otherwise", () => {
  const cause = new Error("disk on fire");
  assert.throws(
    () =>
      mapError(() => {
        throw cause;
      }, (e) => new Error(`Cannot read: ${messageOf(e)}`, { cause: e })),
    (e: unknown) =>
      e instanceof Error && e.message === "Cannot read: disk on fire" &&
      e.cause === cause,
  );
  assert.equal(mapError(() => 3, () => new Error("unused")), 3);
  assert.equal(messageOf("plain text"), "plain text");
});
