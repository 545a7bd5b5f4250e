/**
 * Verified references into stored tool results, for **embedders that keep
 * large results out of a prompt**: the result store and its descriptors, the
 * lexeme-preserving JSON scanner, RFC 6901 pointers, selections by bytes,
 * lines or pointer, budgeted lookups, composed edit contents, and the
 * retrieval tools (`read_result` with continued reads, `find_in_result`,
 * `list_results`) that `loom mcp`, the gateway and the SDK adapters offer.
 *
 * @example Store a document and read one value back by reference
 * ```ts
 * import { ResultStore, select } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const d = await store.put('{"foo": ["bar", "baz"]}', { origin: "doc.json", capture: "complete" });
 * const answer = select(store.get(d.result!)!, {
 *   result: d.result!,
 *   sha256: d.sha256!,
 *   select: { kind: "json_pointer", pointer: "/foo/1" },
 * });
 * assert.deepEqual(answer, { text: "baz" });
 * ```
 * @module
 */
export {
  type Capture,
  type CataloguedResult,
  type CatalogueItem,
  type CataloguePage,
  InvalidUtf8Error,
  type PutOptions,
  type ResultBacking,
  type ResultDescriptor,
  type ResultReference,
  ResultRestoreError,
  ResultStore,
  type ResultStoreOptions,
  type ResultUnavailable,
  type Selector,
  type StoredResult,
} from "./lib/store/result_store.ts";
export { type DigestedUtf8, Utf8Builder } from "./lib/store/utf8_builder.ts";
export {
  type JsonChildren,
  type JsonIndex,
  type JsonKind,
  JsonScanError,
  type JsonSpan,
  scanJson,
} from "./lib/reference/json_scanner.ts";
export {
  formatPointer,
  parsePointer,
  PointerError,
} from "./lib/reference/pointer.ts";
export {
  ReferenceFailureError,
  select,
  type SelectableRecord,
  type SelectionResult,
  type SelectOptions,
} from "./lib/reference/selection.ts";
export {
  Retrieval,
  type RetrievalAnswer,
  type RetrievalSource,
} from "./lib/reference/retrieval.ts";
export {
  type JsonSchema,
  RETRIEVAL_TOOLS,
  type RetrievalToolDefinition,
  type RetrievalToolName,
  type ToolAnnotations,
} from "./lib/reference/retrieval_tools.ts";
export { jsonOutline } from "./lib/reference/outline.ts";
export {
  type HistoryItem,
  type HistoryPage,
  type HistorySource,
  type LookupAnswer,
  LookupBudgetError,
  LookupSession,
  type LookupSessionOptions,
  type StepPhase,
} from "./lib/reference/lookup_session.ts";
export {
  EditExpansionError,
  expandEditContents,
  type ExpandEditContentsOptions,
} from "./lib/reference/edit_contents.ts";
