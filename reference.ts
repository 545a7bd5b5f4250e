/**
 * Verified references into stored tool results, for **embedders that keep
 * large results out of a prompt**: the result store and its descriptors, the
 * lexeme-preserving JSON scanner, RFC 6901 pointers, selections by bytes,
 * lines or pointer, budgeted lookups, and composed edit contents.
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
export {
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
