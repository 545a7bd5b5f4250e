/**
 * The result store: immutable UTF-8 tool results kept out of the prompt,
 * addressed by `result-<n>` ids and SHA-256 digests, shown to the model as
 * descriptors with a bounded preview (wire-formats.md "Result descriptor").
 *
 * @module
 */
import { LoomError } from "../errors.ts";
import { sha256Hex } from "./digest.ts";
import { firstInvalidUtf8, InvalidUtf8Error, utf8Length } from "./utf8.ts";
import { type DigestedUtf8, isDigestedUtf8 } from "./utf8_builder.ts";

export { InvalidUtf8Error };
import { cutUtf8, previewOf } from "./preview.ts";

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

/**
 * A result handed to {@link ResultStore.restore} cannot be re-admitted:
 * `digest_mismatch`, `invalid_result_id`, `duplicate_result`, `too_large` or
 * `store_full`.
 *
 * @example
 * ```ts
 * import { ResultRestoreError, ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * assert.throws(
 *   () => store.restore({
 *     id: "result-1",
 *     bytes: new TextEncoder().encode("a"),
 *     sha256: "0".repeat(64),
 *     origin: "x",
 *     capture: "complete",
 *   }),
 *   (error: unknown) => error instanceof ResultRestoreError && error.code === "digest_mismatch",
 * );
 * ```
 */
export class ResultRestoreError
  extends LoomError.RangeError<"ResultRestoreError"> {}

const encoder = new TextEncoder();
const ID_PATTERN = /^result-([1-9][0-9]*)$/;

function wholeReference(id: string, sha256: string): ResultReference {
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
 * import { compactDescriptor } from "./result_store.ts";
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

/**
 * Keeps immutable UTF-8 tool results for a run and describes them to the
 * model. Content is copied on `put`, so later changes by the caller do not
 * reach the store. By default results are never evicted: when a limit is
 * reached, new results get a descriptor with a preview and
 * `result_unavailable` but no reference, and every earlier reference keeps
 * working. With `evictOldest` the oldest results make room instead.
 *
 * @example
 * ```ts
 * import { ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const d = await store.put("line one\nline two\n", {
 *   origin: "repository.inspect notes.txt",
 *   capture: "complete",
 * });
 * assert.equal(d.result, "result-1");
 * assert.equal(d.utf8_bytes, 18);
 * assert.equal(d.preview, "line one\nline two\n");
 * assert.deepEqual(d.reference?.select, { kind: "whole" });
 * assert.equal(store.get("result-1")?.sha256, d.sha256);
 * ```
 */
export class ResultStore {
  #results = new Map<string, StoredResult>();
  /** The bytes held, by digest, and how many results hold them. */
  #bodies = new Map<string, { bytes: Uint8Array; holders: number }>();
  #order: StoredResult[] = [];
  /** Results the backing has whose bytes are not held, by id; and in order. */
  #known = new Map<string, CataloguedResult>();
  #knownOrder: CataloguedResult[] = [];
  #knownSorted = true;
  #orderSorted = true;
  #next = 1;
  #totalBytes = 0;
  #maxResultBytes: number;
  #maxTotalBytes: number;
  #maxResults: number;
  #evictOldest: boolean;
  #evicted = new Set<string>();
  #backing: ResultBacking | undefined;

  /**
   * Creates an empty store.
   *
   * @param options Limits; defaults 16 MiB per result, 64 MiB in all, 1,024 results.
   * @throws {RangeError} When a limit is not a non-negative number.
   */
  constructor(options: ResultStoreOptions = {}) {
    this.#maxResultBytes = limit(
      options.maxResultBytes,
      MAX_RESULT_BYTES,
      "maxResultBytes",
    );
    this.#maxTotalBytes = limit(
      options.maxTotalBytes,
      MAX_TOTAL_BYTES,
      "maxTotalBytes",
    );
    this.#maxResults = limit(options.maxResults, MAX_RESULTS, "maxResults");
    this.#evictOldest = options.evictOldest === true;
    this.#backing = options.backing;
  }

  /** Number of results kept. */
  get count(): number {
    return this.#results.size;
  }

  /**
   * Total UTF-8 bytes of all results kept (a body several ids hold is
   * counted for each, though kept in memory once).
   */
  get totalBytes(): number {
    return this.#totalBytes;
  }

  /**
   * Stores a result and returns the descriptor the model sees.
   *
   * @param content The result text, its UTF-8 bytes (copied), or content a
   *   `Utf8Builder` built and digested (kept as it is: not copied,
   *   checked or hashed again).
   * @param options Origin and capture of the result.
   * @returns The descriptor; with `result_unavailable` when a limit was reached.
   * @throws {InvalidUtf8Error} When the content is not valid UTF-8 (a string
   *   with a lone surrogate counts); nothing is stored.
   * @throws {TypeError} When `origin` is not a string or `capture` is unknown.
   *
   * @example
   * ```ts
   * import { ResultStore, InvalidUtf8Error } from "@loom/loom/reference";
   * import assert from "node:assert/strict";
   * const store = new ResultStore({ maxResults: 1 });
   * await store.put("kept", { origin: "a", capture: "complete" });
   * const full = await store.put("not kept", { origin: "b", capture: "complete" });
   * assert.equal(full.result_unavailable, "store_full");
   * assert.equal(full.reference, undefined);
   * await assert.rejects(
   *   store.put(new Uint8Array([0xff]), { origin: "c", capture: "complete" }),
   *   InvalidUtf8Error,
   * );
   * ```
   */
  put(
    content: string | Uint8Array | DigestedUtf8,
    options: PutOptions,
  ): Promise<ResultDescriptor> {
    try {
      const made = this.#put(content, options);
      return made instanceof Promise ? made : Promise.resolve(made);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Takes in the results other processes stored through the backing (a
   * no-op without one), so their ids resolve here.
   *
   * @returns How many results were taken in.
   * @throws {ResultRestoreError} When one cannot be admitted (a limit).
   *
   * @example
   * ```ts
   * import { ResultStore } from "@loom/loom/reference";
   * import assert from "node:assert/strict";
   * const other = new ResultStore();
   * await other.put("from another process", { origin: "x", capture: "complete" });
   * const queue = [...other.stored()];
   * const store = new ResultStore({
   *   backing: {
   *     admit: () => Promise.reject(new Error("not in this example")),
   *     refresh: () => Promise.resolve(queue.splice(0)),
   *   },
   * });
   * assert.equal(await store.refresh(), 1);
   * assert.equal(store.get("result-1")?.origin, "x");
   * ```
   */
  async refresh(): Promise<number> {
    if (this.#backing === undefined) return 0;
    let taken = 0;
    for (const result of await this.#backing.refresh()) {
      if (this.#results.has(result.id) || this.#known.has(result.id)) continue;
      if ("bytes" in result) this.restore(result);
      else this.#catalogue(result);
      taken += 1;
    }
    return taken;
  }

  /**
   * Makes sure the result with that id is held: when it is not, and the
   * store's backing catalogues it (another process stored it, or its bytes
   * left memory to make room), loads it from there, verified against its
   * digest. A no-op without a backing.
   *
   * @param id A result id.
   * @returns Whether the store holds the result now.
   * @throws {LoomError} What the backing throws when the bytes cannot be
   *   read or do not match the digest (`result_missing`, `result_corrupted`,
   *   `storage_unavailable`).
   *
   * @example
   * ```ts
   * import { ResultStore } from "@loom/loom/reference";
   * import assert from "node:assert/strict";
   * const other = new ResultStore();
   * await other.put("kept elsewhere", { origin: "x", capture: "complete" });
   * const [kept] = [...other.stored()];
   * const store = new ResultStore({
   *   backing: {
   *     admit: () => Promise.reject(new Error("not in this example")),
   *     refresh: () =>
   *       Promise.resolve([{ ...kept!, bytes: undefined, utf8_bytes: 13 }].map(({ bytes: _, ...c }) => c)),
   *     load: (id) => Promise.resolve(id === kept!.id ? kept : undefined),
   *   },
   * });
   * await store.refresh();
   * assert.equal(store.get("result-1"), undefined);
   * assert.equal(await store.load("result-1"), true);
   * assert.equal(store.get("result-1")?.sha256, kept!.sha256);
   * ```
   */
  async load(id: string): Promise<boolean> {
    if (this.#results.has(id)) return true;
    const backing = this.#backing;
    if (backing?.load === undefined || typeof id !== "string") return false;
    // Not catalogued here yet: take in what the backing catalogued first.
    if (!this.#known.has(id)) await this.refresh();
    if (this.#results.has(id)) return true;
    const loaded = await backing.load(id);
    if (this.#results.has(id)) return true;
    if (loaded === undefined || loaded.id !== id) {
      // Catalogued but its bytes are gone (never kept, or expired).
      if (this.#forget(id)) this.#evicted.add(id);
      return false;
    }
    if (loaded.bytes.length > this.#maxResultBytes) return false;
    this.#makeRoom(loaded.bytes.length);
    if (
      this.#results.size >= this.#maxResults ||
      this.#totalBytes + loaded.bytes.length > this.#maxTotalBytes
    ) return false;
    this.#forget(id);
    this.#evicted.delete(id);
    // The backing verified the bytes against the digest.
    this.#admit(Object.freeze({ ...loaded }));
    return true;
  }

  /** Catalogues a result whose bytes the backing keeps. */
  #catalogue(result: CataloguedResult): void {
    const entry: CataloguedResult = Object.freeze({
      id: result.id,
      sha256: result.sha256,
      origin: result.origin,
      capture: result.capture,
      utf8_bytes: result.utf8_bytes,
    });
    this.#known.set(entry.id, entry);
    const last = this.#knownOrder.at(-1);
    if (last !== undefined && idNumber(last.id) > idNumber(entry.id)) {
      this.#knownSorted = false;
    }
    this.#knownOrder.push(entry);
    const match = ID_PATTERN.exec(entry.id);
    if (match !== null) this.#next = Math.max(this.#next, Number(match[1]) + 1);
  }

  /** Drops a catalogued-only result; whether there was one. */
  #forget(id: string): boolean {
    const entry = this.#known.get(id);
    if (entry === undefined) return false;
    this.#known.delete(id);
    const at = this.#knownOrder.indexOf(entry);
    if (at >= 0) this.#knownOrder.splice(at, 1);
    return true;
  }

  #put(
    content: string | Uint8Array | DigestedUtf8,
    options: PutOptions,
  ): ResultDescriptor | Promise<ResultDescriptor> {
    const { origin, capture } = options ?? {};
    if (typeof origin !== "string") {
      throw new TypeError("Cannot store a result: origin must be a string");
    }
    if (capture !== "complete" && capture !== "partial") {
      throw new TypeError(
        "Cannot store a result: capture must be 'complete' or 'partial'",
      );
    }
    let bytes: Uint8Array;
    let digest: string | undefined;
    if (isDigestedUtf8(content)) {
      bytes = content.bytes;
      digest = content.sha256;
    } else if (typeof content === "string") {
      if (!content.isWellFormed()) {
        throw new InvalidUtf8Error(
          "invalid_utf8",
          "Cannot store a result: the string holds a lone surrogate, which has no UTF-8 form",
          { offset: -1 },
        );
      }
      bytes = encoder.encode(content);
    } else if (content instanceof Uint8Array) {
      const bad = firstInvalidUtf8(content);
      if (bad !== -1) {
        throw new InvalidUtf8Error(
          "invalid_utf8",
          `Cannot store a result: byte ${bad} starts an invalid UTF-8 sequence`,
          { offset: bad },
        );
      }
      bytes = content.slice();
    } else {
      throw new TypeError(
        "Cannot store a result: content must be a string, a Uint8Array or a Utf8Builder's content",
      );
    }
    const size = bytes.length;
    const preview = previewOf(bytes, capture);
    let unavailable: ResultUnavailable | undefined;
    if (size <= this.#maxResultBytes) this.#makeRoom(size);
    if (size > this.#maxResultBytes) unavailable = "too_large";
    else if (
      this.#results.size >= this.#maxResults ||
      this.#totalBytes + size > this.#maxTotalBytes
    ) unavailable = "store_full";
    if (unavailable !== undefined) {
      return {
        origin,
        capture,
        utf8_bytes: size,
        ...preview,
        result_unavailable: unavailable,
      };
    }
    const sha256 = digest ?? sha256Hex(bytes);
    const described = (id: string): ResultDescriptor => ({
      result: id,
      sha256,
      origin,
      capture,
      utf8_bytes: size,
      ...preview,
      reference: wholeReference(id, sha256),
    });
    const backing = this.#backing;
    if (backing !== undefined) {
      return (async () => {
        let stored: StoredResult;
        try {
          stored = await backing.admit(
            { bytes, sha256, origin, capture },
            options.note,
          );
        } catch (error) {
          // The backing has no room: not kept, as when memory is full.
          if ((error as { code?: unknown })?.code !== "store_full") throw error;
          return {
            origin,
            capture,
            utf8_bytes: size,
            ...preview,
            result_unavailable: "store_full",
          };
        }
        if (!this.#results.has(stored.id)) {
          this.#forget(stored.id);
          // Its bytes and digest are the ones made here: no second check.
          this.#makeRoom(size);
          this.#admit(Object.freeze({ ...stored, bytes, sha256 }));
        }
        return described(stored.id);
      })();
    }
    const id = `result-${this.#next++}`;
    this.#admit(Object.freeze({ id, bytes, sha256, origin, capture }));
    return described(id);
  }

  /** With `evictOldest`, evicts the oldest results until `size` more bytes fit. */
  #makeRoom(size: number): void {
    if (
      !this.#evictOldest || size > this.#maxTotalBytes || this.#maxResults <= 0
    ) return;
    const order = this.#sorted();
    while (
      order.length > 0 &&
      (this.#results.size >= this.#maxResults ||
        this.#totalBytes + size > this.#maxTotalBytes)
    ) this.#remove(order[0]!.id);
  }

  #admit(result: StoredResult): void {
    // One copy of a body however many ids hold it (the same answer stored
    // by many calls).
    const body = this.#bodies.get(result.sha256);
    if (body !== undefined && body.bytes.length === result.bytes.length) {
      body.holders += 1;
      if (body.bytes !== result.bytes) {
        result = Object.freeze({ ...result, bytes: body.bytes });
      }
    } else {
      this.#bodies.set(result.sha256, { bytes: result.bytes, holders: 1 });
    }
    // The limits count each result (what a host may read), not the copy.
    this.#totalBytes += result.bytes.length;
    this.#results.set(result.id, result);
    const last = this.#order.at(-1);
    if (last !== undefined && idNumber(last.id) > idNumber(result.id)) {
      this.#orderSorted = false;
    }
    this.#order.push(result);
  }

  #remove(id: string, drop = false): void {
    const result = this.#results.get(id);
    if (result === undefined) return;
    this.#results.delete(id);
    const at = this.#order.indexOf(result);
    if (at >= 0) this.#order.splice(at, 1);
    const body = this.#bodies.get(result.sha256);
    if (body !== undefined && (body.holders -= 1) <= 0) {
      this.#bodies.delete(result.sha256);
    }
    this.#totalBytes -= result.bytes.length;
    if (!drop && this.#backing?.load !== undefined) {
      // Only its bytes leave memory: the backing can load them again.
      this.#catalogue({ ...result, utf8_bytes: result.bytes.length });
    } else this.#evicted.add(id);
  }

  /**
   * Removes a stored result (an expired one); later references to it are
   * answered `result_evicted`.
   *
   * @param id The result's id.
   * @returns Whether the store held it.
   *
   * @example
   * ```ts
   * import { ResultStore } from "@loom/loom/reference";
   * import assert from "node:assert/strict";
   * const store = new ResultStore();
   * await store.put("a", { origin: "x", capture: "complete" });
   * assert.equal(store.evict("result-1"), true);
   * assert.equal(store.get("result-1"), undefined);
   * assert.equal(store.evicted("result-1"), true);
   * ```
   */
  evict(id: string): boolean {
    if (this.#forget(id)) {
      this.#evicted.add(id);
      return true;
    }
    if (!this.#results.has(id)) return false;
    this.#remove(id, true);
    return true;
  }

  /**
   * Makes new results take ids after `id`, which the store does not hold
   * (a session that kept only the descriptor of that result).
   *
   * @param id A result id.
   * @throws {ResultRestoreError} `invalid_result_id` when the id is malformed.
   *
   * @example
   * ```ts
   * import { ResultStore } from "@loom/loom/reference";
   * import assert from "node:assert/strict";
   * const store = new ResultStore();
   * store.advancePast("result-4");
   * const d = await store.put("a", { origin: "x", capture: "complete" });
   * assert.equal(d.result, "result-5");
   * ```
   */
  advancePast(id: string): void {
    const match = ID_PATTERN.exec(String(id));
    if (match === null) {
      throw new ResultRestoreError(
        "invalid_result_id",
        `Cannot reserve ${String(id)}: a result id has the form result-<n>`,
      );
    }
    this.#next = Math.max(this.#next, Number(match[1]) + 1);
  }

  /**
   * Whether a result id was held and then evicted (by `evictOldest` or
   * {@linkcode ResultStore.evict}).
   *
   * @param id A result id.
   * @returns `true` for an evicted result.
   *
   * @example
   * ```ts
   * import { ResultStore } from "@loom/loom/reference";
   * import assert from "node:assert/strict";
   * const store = new ResultStore({ maxResults: 1, evictOldest: true });
   * await store.put("a", { origin: "x", capture: "complete" });
   * const d = await store.put("b", { origin: "y", capture: "complete" });
   * assert.equal(d.result, "result-2");
   * assert.equal(store.evicted("result-1"), true);
   * assert.equal(store.evicted("result-2"), false);
   * ```
   */
  evicted(id: string): boolean {
    return this.#evicted.has(id);
  }

  #sorted(): StoredResult[] {
    if (!this.#orderSorted) {
      this.#order.sort((a, b) => idNumber(a.id) - idNumber(b.id));
      this.#orderSorted = true;
    }
    return this.#order;
  }

  /**
   * Looks up a stored result.
   *
   * @param id A result id such as `result-3`.
   * @returns The result, or `undefined` when no result has that id. Its
   *   `bytes` are the store's own copy and must not be modified.
   *
   * @example
   * ```ts
   * import { ResultStore } from "@loom/loom/reference";
   * import assert from "node:assert/strict";
   * const store = new ResultStore();
   * await store.put("abc", { origin: "x", capture: "complete" });
   * assert.equal(new TextDecoder().decode(store.get("result-1")?.bytes), "abc");
   * assert.equal(store.get("result-2"), undefined);
   * ```
   */
  get(id: string): StoredResult | undefined {
    return this.#results.get(id);
  }

  /**
   * One page of the result catalogue, in id order: at most 8 items and at
   * most 8 KiB of JSON; each origin cut to 256 bytes on a character boundary.
   *
   * @param offset Index of the first item (0 for the first page).
   * @returns The page; `next_offset` is `null` on the last page.
   * @throws {RangeError} When `offset` is not a non-negative integer.
   *
   * @example
   * ```ts
   * import { ResultStore } from "@loom/loom/reference";
   * import assert from "node:assert/strict";
   * const store = new ResultStore();
   * for (let i = 0; i < 10; i++) {
   *   await store.put(`r${i}`, { origin: `o${i}`, capture: "complete" });
   * }
   * const first = store.list(0);
   * assert.equal(first.results.length, 8);
   * assert.equal(first.next_offset, 8);
   * assert.equal(store.list(8).next_offset, null);
   * ```
   */
  list(offset: number): CataloguePage {
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw new RangeError(
        `Cannot list results from offset ${offset}: the offset must be an integer >= 0`,
      );
    }
    const all = this.#listing();
    const results: CatalogueItem[] = [];
    // Bytes of `{"results":[],"next_offset":` plus the largest offset and `}`.
    let bytes = 30 + String(all.length).length;
    let index = offset;
    for (
      ;
      index < all.length && results.length < CATALOGUE_PAGE_ITEMS;
      index++
    ) {
      const item = catalogueItem(all[index]!);
      const itemBytes = utf8Length(JSON.stringify(item)) +
        (results.length > 0 ? 1 : 0);
      if (bytes + itemBytes > CATALOGUE_PAGE_BYTES && results.length > 0) break;
      bytes += itemBytes;
      results.push(item);
    }
    return { results, next_offset: index < all.length ? index : null };
  }

  /** Held and catalogued-only results, in id order. */
  #listing(): readonly (StoredResult | CataloguedResult)[] {
    const held = this.#sorted();
    if (this.#known.size === 0) return held;
    if (!this.#knownSorted) {
      this.#knownOrder.sort((a, b) => idNumber(a.id) - idNumber(b.id));
      this.#knownSorted = true;
    }
    const known = this.#knownOrder;
    const out: (StoredResult | CataloguedResult)[] = [];
    let i = 0;
    let j = 0;
    while (i < held.length || j < known.length) {
      const a = held[i];
      const b = known[j];
      if (
        b === undefined || (a !== undefined && idNumber(a.id) < idNumber(b.id))
      ) {
        out.push(a!);
        i += 1;
      } else {
        out.push(b);
        j += 1;
      }
    }
    return out;
  }

  /**
   * All stored results in id order, for session persistence.
   *
   * @returns An iterable over the stored results.
   *
   * @example
   * ```ts
   * import { ResultStore } from "@loom/loom/reference";
   * import assert from "node:assert/strict";
   * const store = new ResultStore();
   * await store.put("a", { origin: "x", capture: "complete" });
   * await store.put("b", { origin: "y", capture: "partial" });
   * assert.deepEqual([...store.stored()].map((r) => r.id), ["result-1", "result-2"]);
   * ```
   */
  *stored(): Iterable<StoredResult> {
    yield* this.#sorted().slice();
  }

  /**
   * Re-admits a result with its id and digest (restoring a session, or
   * taking in what another process stored). The digest is verified; new
   * results continue after the highest id. With `evictOldest` the oldest
   * results make room for it.
   *
   * @param result A result from {@link ResultStore.stored} of an earlier store.
   * @throws {InvalidUtf8Error} When the bytes are not valid UTF-8.
   * @throws {ResultRestoreError} When the id is malformed or taken, the
   *   digest does not match the bytes, or a limit would be passed (without
   *   `evictOldest`).
   *
   * @example
   * ```ts
   * import { ResultStore } from "@loom/loom/reference";
   * import assert from "node:assert/strict";
   * const old = new ResultStore();
   * await old.put("a", { origin: "x", capture: "complete" });
   * const store = new ResultStore();
   * for (const r of old.stored()) store.restore(r);
   * const d = await store.put("b", { origin: "y", capture: "complete" });
   * assert.equal(d.result, "result-2");
   * ```
   */
  restore(result: StoredResult): void {
    const match = typeof result?.id === "string"
      ? ID_PATTERN.exec(result.id)
      : null;
    if (match === null) {
      throw new ResultRestoreError(
        "invalid_result_id",
        `Cannot restore ${
          String(result?.id)
        }: a result id has the form result-<n>`,
      );
    }
    if (this.#results.has(result.id)) {
      throw new ResultRestoreError(
        "duplicate_result",
        `Cannot restore ${result.id}: the store already holds a result with that id`,
      );
    }
    if (
      typeof result.origin !== "string" ||
      (result.capture !== "complete" && result.capture !== "partial") ||
      !(result.bytes instanceof Uint8Array)
    ) {
      throw new TypeError(
        `Cannot restore ${result.id}: it needs bytes, an origin and a capture`,
      );
    }
    const bad = firstInvalidUtf8(result.bytes);
    if (bad !== -1) {
      throw new InvalidUtf8Error(
        "invalid_utf8",
        `Cannot restore ${result.id}: byte ${bad} starts an invalid UTF-8 sequence`,
        { offset: bad },
      );
    }
    const bytes = result.bytes.slice();
    const sha256 = sha256Hex(bytes);
    if (sha256 !== result.sha256) {
      throw new ResultRestoreError(
        "digest_mismatch",
        `Cannot restore ${result.id}: its bytes do not match its SHA-256 digest`,
      );
    }
    if (bytes.length > this.#maxResultBytes) {
      throw new ResultRestoreError(
        "too_large",
        `Cannot restore ${result.id}: ${bytes.length} bytes exceed the per-result limit of ${this.#maxResultBytes}`,
      );
    }
    this.#makeRoom(bytes.length);
    if (
      this.#results.size >= this.#maxResults ||
      this.#totalBytes + bytes.length > this.#maxTotalBytes
    ) {
      throw new ResultRestoreError(
        "store_full",
        `Cannot restore ${result.id}: the store is full`,
      );
    }
    this.#admit(Object.freeze({
      id: result.id,
      bytes,
      sha256,
      origin: result.origin,
      capture: result.capture,
    }));
    this.#next = Math.max(this.#next, Number(match[1]) + 1);
  }
}

function idNumber(id: string): number {
  return Number(id.slice("result-".length));
}

function limit(value: number | undefined, fallback: number, name: string) {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || Number.isNaN(value) || value < 0) {
    throw new RangeError(
      `Cannot create a result store: ${name} must be a number >= 0`,
    );
  }
  return value;
}

function catalogueItem(
  result: StoredResult | CataloguedResult,
): CatalogueItem {
  const { text, truncated } = cutUtf8(result.origin, CATALOGUE_ORIGIN_BYTES);
  return {
    origin: text,
    origin_truncated: truncated,
    capture: result.capture,
    utf8_bytes: "bytes" in result ? result.bytes.length : result.utf8_bytes,
    reference: wholeReference(result.id, result.sha256),
  };
}
