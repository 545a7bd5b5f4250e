/**
 * What the result store keeps and shows: a stored result, its descriptor
 * (full, as the legacy policy shows it, and compact, as the bounded one
 * does), references, catalogue pages, what a store's backing does, and the
 * store's limits (wire-formats.md "Result descriptor"). The store itself is
 * `result_store.ts`.
 *
 * @module
 */

/** What part of a stored result a reference selects. */
export type Selector =
  | { kind: "whole" }
  | { kind: "bytes"; start: number; end: number }
  | { kind: "lines"; start: number; end: number }
  | { kind: "json_pointer"; pointer: string };

/** A verified reference to (part of) a stored result or archived event. */
export interface ResultReference {
  /** `result-<n>` (or `event-<n>` for history). */
  result: string;
  /** 64 lowercase hex digits: the digest of the whole stored content. */
  sha256: string;
  /** What to select. */
  select: Selector;
  /** `text` (default) or `json` (only for `json_pointer`). */
  rendering?: "text" | "json";
}

/** How much of the producer's output a result holds. */
export type Capture = "complete" | "partial";

/** Why a result could not be kept: the store is full or it is too large. */
export type ResultUnavailable = "store_full" | "too_large";

/** The descriptor the legacy policy shows the model when a result is stored. */
export interface ResultDescriptor {
  /** The result id; absent when the result was not kept. */
  result?: string;
  /** SHA-256 of the content; absent when the result was not kept. */
  sha256?: string;
  /** What produced the result, e.g. `repository.inspect src/a.ts`. */
  origin: string;
  /** `complete`, or `partial` when the producer kept only a tail. */
  capture: Capture;
  /** Size of the content in UTF-8 bytes. */
  utf8_bytes: number;
  /** At most 1,024 bytes: the head (complete) or the tail (partial). */
  preview: string;
  /** Whether the preview leaves out part of the content. */
  preview_truncated: boolean;
  /** Offset of the preview's first byte in the content. */
  preview_start_byte: number;
  /** Offset just past the preview's last byte in the content. */
  preview_end_byte: number;
  /** A whole/text reference; absent when the result was not kept. */
  reference?: ResultReference;
  /** Present only when the result was not kept. */
  result_unavailable?: ResultUnavailable;
}

/** The compact descriptor the bounded policy shows (no preview). */
export interface CompactDescriptor {
  /** The result id; absent when the result was not kept. */
  result?: string;
  /** SHA-256 of the content; absent when the result was not kept. */
  sha256?: string;
  /** What produced the result. */
  origin: string;
  /** `complete` or `partial`. */
  capture: Capture;
  /** Size of the content in UTF-8 bytes. */
  utf8_bytes: number;
  /** A whole/text reference; absent when the result was not kept. */
  reference?: ResultReference;
  /** Present only when the result was not kept. */
  result_unavailable?: ResultUnavailable;
}

/** A result held by the store. Its `bytes` must never be modified. */
export interface StoredResult {
  /** `result-<n>`. */
  readonly id: string;
  /** The immutable UTF-8 content. */
  readonly bytes: Uint8Array;
  /** SHA-256 of `bytes`, lowercase hex. */
  readonly sha256: string;
  /** What produced the result. */
  readonly origin: string;
  /** `complete` or `partial`. */
  readonly capture: Capture;
}

/** One entry of the result catalogue (`$list_results`). */
export interface CatalogueItem {
  /** The origin, cut to 256 bytes on a character boundary. */
  origin: string;
  /** Whether `origin` was cut. */
  origin_truncated: boolean;
  /** `complete` or `partial`. */
  capture: Capture;
  /** Size of the content in UTF-8 bytes. */
  utf8_bytes: number;
  /** A whole/text reference to the result. */
  reference: ResultReference;
}

/** One page of the result catalogue: ≤ 8 items and ≤ 8 KiB of JSON. */
export interface CataloguePage {
  /** Items in id order. */
  results: CatalogueItem[];
  /** Offset of the next page, or `null` on the last page. */
  next_offset: number | null;
}

/**
 * A result a store's backing catalogues without handing over its bytes
 * (another process stored it, or the store dropped them from memory):
 * {@link ResultStore.load} fetches them when the result is read.
 */
export interface CataloguedResult {
  /** `result-<n>`. */
  readonly id: string;
  /** SHA-256 of the content, lowercase hex. */
  readonly sha256: string;
  /** What produced the result. */
  readonly origin: string;
  /** `complete` or `partial`. */
  readonly capture: Capture;
  /** Size of the content in UTF-8 bytes. */
  readonly utf8_bytes: number;
}

/**
 * Where a store shared by several processes keeps its results (a shared
 * session of `loom mcp`): it assigns each new result its id, so ids are
 * unique across every process, tells of results the others stored, and
 * hands their bodies over when they are read.
 */
export interface ResultBacking {
  /**
   * Persists a new result and assigns its id; durable when it returns. A
   * backing with no room throws an error whose `code` is `store_full`: the
   * result is then not kept (`result_unavailable: "store_full"`).
   *
   * @param result The result without an id.
   * @param note What the caller of {@link ResultStore.put} gave as
   *   {@link PutOptions.note}, unchanged (for example the gateway's call
   *   behind a result whose body is not to be persisted).
   * @returns The result with its id.
   */
  admit(
    result: Omit<StoredResult, "id">,
    note?: Readonly<Record<string, unknown>>,
  ): Promise<StoredResult>;
  /**
   * Results stored since the last call (by other processes, and possibly
   * this one's own), in id order: with their bytes, or catalogued only.
   *
   * @returns The new results.
   */
  refresh(): Promise<readonly (StoredResult | CataloguedResult)[]>;
  /**
   * The result with that id, its bytes verified against its digest; for a
   * result the store only has catalogued, or dropped from memory.
   *
   * @param id The result id.
   * @returns The result, or `undefined` when the backing cannot give its
   *   bytes (never kept, or expired): it then reads as evicted.
   */
  load?(id: string): Promise<StoredResult | undefined>;
}

/** Limits of a {@link ResultStore}. */
export interface ResultStoreOptions {
  /**
   * Share the results with other processes through a backing: new results
   * get their ids there, and {@link ResultStore.refresh} takes in what the
   * others stored (default: none, the store is this process's own).
   */
  backing?: ResultBacking;
  /** Largest single result in bytes (default 16 MiB). */
  maxResultBytes?: number;
  /** Largest total of all results in bytes (default 64 MiB). */
  maxTotalBytes?: number;
  /** Most results kept (default 1,024). */
  maxResults?: number;
  /**
   * Evict the oldest results to make room when a limit is reached (default
   * `false`: a new result that does not fit is not kept, every earlier one
   * stays). A reference to an evicted result is answered `result_evicted` —
   * unless the store's backing can load it again: then only its bytes leave
   * memory, and {@link ResultStore.load} brings them back.
   */
  evictOldest?: boolean;
}

/** What {@link ResultStore.put} needs besides the content. */
export interface PutOptions {
  /** What produced the result, e.g. `repository.inspect src/a.ts`. */
  origin: string;
  /** `complete`, or `partial` when only a tail was captured. */
  capture: Capture;
  /**
   * What the store's backing records with the result besides it, handed to
   * {@link ResultBacking.admit} unchanged; the store itself ignores it.
   */
  note?: Readonly<Record<string, unknown>>;
}

/** Default limit: 16 MiB per result. */
export const MAX_RESULT_BYTES = 16 * 1024 * 1024;
/** Default limit: 64 MiB for all results. */
export const MAX_TOTAL_BYTES = 64 * 1024 * 1024;
/** Default limit: 1,024 results. */
export const MAX_RESULTS = 1024;
/** Most items on a catalogue page. */
export const CATALOGUE_PAGE_ITEMS = 8;
/** Largest catalogue page, UTF-8 bytes of its JSON. */
export const CATALOGUE_PAGE_BYTES = 8192;
/** Longest origin shown in a catalogue item, in UTF-8 bytes. */
export const CATALOGUE_ORIGIN_BYTES = 256;

/** A whole/text reference to a result. */
export function wholeReference(id: string, sha256: string): ResultReference {
  return { result: id, sha256, select: { kind: "whole" }, rendering: "text" };
}

/**
 * Reduces a descriptor to the compact form the bounded policy shows:
 * `result`, `sha256`, `origin`, `capture`, `utf8_bytes`, `reference` (and
 * `result_unavailable` when the result was not kept). No preview.
 *
 * @param descriptor A descriptor from {@link ResultStore.put}.
 * @returns The compact descriptor; fields absent from the input stay absent.
 *
 * @example
 * ```ts
 * import { ResultStore } from "@loom/loom/reference";
 * import { compactDescriptor } from "./result_types.ts";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const d = await store.put("hello", { origin: "demo", capture: "complete" });
 * const c = compactDescriptor(d);
 * assert.deepEqual(Object.keys(c), ["result", "sha256", "origin", "capture", "utf8_bytes", "reference"]);
 * ```
 */
export function compactDescriptor(
  descriptor: ResultDescriptor,
): CompactDescriptor {
  const out: CompactDescriptor = {} as CompactDescriptor;
  if (descriptor.result !== undefined) out.result = descriptor.result;
  if (descriptor.sha256 !== undefined) out.sha256 = descriptor.sha256;
  out.origin = descriptor.origin;
  out.capture = descriptor.capture;
  out.utf8_bytes = descriptor.utf8_bytes;
  if (descriptor.reference !== undefined) {
    out.reference = structuredClone(descriptor.reference);
  }
  if (descriptor.result_unavailable !== undefined) {
    out.result_unavailable = descriptor.result_unavailable;
  }
  return out;
}
