/**
 * The AI SDK tool sets the adapter's scenarios give the model, each wrapped
 * by `loomTools` beside the retrieval tools as docs/adapters.md shows it:
 * shared by the adapter's tests and the telemetry tests that watch it.
 */
import { jsonSchema, tool } from "ai";
import { loomTools, retrievalTools } from "../../lib/adapters/ai_sdk.ts";
import type { ResultStore } from "../../lib/store/result_store.ts";
import { turnResult } from "./_scenario.ts";

/** The input schema of a tool that takes nothing. */
export const EMPTY = jsonSchema<Record<string, never>>({
  type: "object",
  properties: {},
  additionalProperties: false,
});

/**
 * The developer's tool of the 2 MB scenario, unwrapped: it returns `value`.
 *
 * @param value The document.
 */
export function catalogueTool(value: unknown) {
  return tool({ inputSchema: EMPTY, execute: () => value });
}

/**
 * The 2 MB scenario's tools: `catalogue` returns `value`.
 *
 * @param store The store the adapter keeps results in.
 * @param value The document.
 */
export function catalogueTools(store: ResultStore, value: unknown) {
  return {
    ...loomTools({ catalogue: catalogueTool(value) }, { store }),
    ...retrievalTools(store),
  };
}

/**
 * The long scenario's tools: `probe {turn}` returns that turn's result.
 *
 * @param store The store the adapter keeps results in.
 */
export function probeTools(store: ResultStore) {
  return {
    ...loomTools({
      probe: tool({
        inputSchema: jsonSchema<{ turn: number }>({
          type: "object",
          properties: { turn: { type: "integer" } },
          required: ["turn"],
          additionalProperties: false,
        }),
        execute: ({ turn }) => turnResult(turn),
      }),
    }, { store }),
    ...retrievalTools(store),
  };
}
