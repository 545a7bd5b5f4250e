// YAML parsing that works without --allow-env. The `yaml` package reads
// process.env.LOG_TOKENS / LOG_STREAM while parsing; under Deno without env
// permission that read throws. When the permission is missing we hide
// process.env behind an empty object for the (synchronous) parse only.
import process from "node:process";
import { parse } from "yaml";

function envGranted(): boolean {
  try {
    return ["LOG_TOKENS", "LOG_STREAM"].every((variable) =>
      Deno.permissions.querySync({ name: "env", variable }).state === "granted"
    );
  } catch {
    return false;
  }
}

/** Parses YAML (and so JSON); throws the parser's error on bad input. */
export function parseYaml(text: string): unknown {
  if (envGranted()) return parse(text);
  const saved = Object.getOwnPropertyDescriptor(process, "env");
  if (saved === undefined || saved.configurable !== true) return parse(text);
  Object.defineProperty(process, "env", {
    value: {},
    configurable: true,
    writable: true,
  });
  try {
    return parse(text);
  } finally {
    Object.defineProperty(process, "env", saved);
  }
}
