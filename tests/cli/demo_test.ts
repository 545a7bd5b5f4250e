import { parseDemoArguments } from "../../lib/cli/demo.ts";
import { checkParser } from "./_arguments.ts";

Deno.test("parseDemoArguments() reads the flags and checks no path", async (t) => {
  await checkParser(t, parseDemoArguments, [
    ["no flags", [], { json: false, keep: false }],
    ["every flag, the report path unchecked", [
      "--json",
      "--keep",
      "--context-report",
      "/nonexistent-loom-folder/report.json",
    ], {
      json: true,
      keep: true,
      contextReport: "/nonexistent-loom-folder/report.json",
    }],
    ["--help wins", ["-h", "--keep"], { help: /^Usage: loom demo / }],
    ["a positional argument", ["now"], {
      usage:
        "Unexpected argument now: this command takes no positional arguments",
    }],
    ["a value for a boolean flag", ["--keep=1"], {
      usage: "--keep takes no value",
    }],
  ]);
});
