/**
 * The result store: immutable UTF-8 tool results kept out of the prompt,
 * addressed by `result-<n>` ids and SHA-256 digests, shown to the model as
 * descriptors with a bounded preview (wire-formats.md "Result descriptor").
 * What it keeps and shows is typed in `result_types.ts`, what it holds is
 * kept by `_holdings.ts`. It stays one file past 600 lines because it is
 * one job — the store's rules (ids, limits, eviction, a backing shared with
 * other processes) over one catalogue — and about 40% of its length is the
 * JSDoc and runnable examples its public methods owe.
 *
 * @module
 */
import { LoomError } from "../errors.ts";
import { sha256Hex } from "./digest.ts";
import { firstInvalidUtf8, InvalidUtf8Error, utf8Length } from "./utf8.ts";
import { type DigestedUtf8, isDigestedUtf8 } from "./utf8_builder.ts";

export { InvalidUtf8Error };
import { cutUtf8, previewOf } from "./preview.ts";
import { Holdings } from "./_holdings.ts";
import {
  CATALOGUE_ORIGIN_BYTES,
  CATALOGUE_PAGE_BYTES,
  CATALOGUE_PAGE_ITEMS,
  type CataloguedResult,
  type CatalogueItem,
  type CataloguePage,
  MAX_RESULT_BYTES,
  MAX_RESULTS,
  MAX_TOTAL_BYTES,
  type PutOptions,
  type ResultBacking,
  type ResultDescriptor,
  type ResultStoreOptions,
  type ResultUnavailable,
  type StoredResult,
  wholeReference,
} from "./result_types.ts";

export type {
  Capture,
  CataloguedResult,
  CatalogueItem,
  CataloguePage,
  CompactDescriptor,
  PutOptions,
  ResultBacking,
  ResultDescriptor,
  ResultReference,
  ResultStoreOptions,
  ResultUnavailable,
  Selector,
  StoredResult,
} from "./result_types.ts";
export {
  CATALOGUE_ORIGIN_BYTES,
  CATALOGUE_PAGE_BYTES,
  CATALOGUE_PAGE_ITEMS,
  compactDescriptor,
  MAX_RESULT_BYTES,
  MAX_RESULTS,
  MAX_TOTAL_BYTES,
} from "./result_types.ts";

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
  readonly #held = new Holdings();
  #next = 1;
  #maxResultBytes: number;
  #maxTotalBytes: number;
  #maxResults: number;
  #evictOldest: boolean;
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
    return this.#held.size;
  }

  /**
   * Total UTF-8 bytes of all results kept (a body several ids hold is
   * counted for each, though kept in memory once).
   */
  get totalBytes(): number {
    return this.#held.totalBytes;
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
      if (this.#held.has(result.id) || this.#held.knows(result.id)) continue;
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
    if (this.#held.has(id)) return true;
    const backing = this.#backing;
    if (backing?.load === undefined || typeof id !== "string") return false;
    // Not catalogued here yet: take in what the backing catalogued first.
    if (!this.#held.knows(id)) await this.refresh();
    if (this.#held.has(id)) return true;
    // A body already held under another id (a read answered twice, a file
    // read again) is not fetched and checked again.
    const loaded = this.#held.sharing(id) ?? await backing.load(id);
    if (this.#held.has(id)) return true;
    if (loaded === undefined || loaded.id !== id) {
      // Catalogued but its bytes are gone (never kept, or expired).
      if (this.#held.forget(id)) this.#held.evict(id);
      return false;
    }
    if (loaded.bytes.length > this.#maxResultBytes) return false;
    this.#makeRoom(loaded.bytes.length);
    if (
      this.#held.size >= this.#maxResults ||
      this.#held.totalBytes + loaded.bytes.length > this.#maxTotalBytes
    ) return false;
    // The backing verified the bytes against the digest (or they are a body
    // held under that digest already).
    this.#held.hold(Object.freeze({ ...loaded }));
    return true;
  }

  /** Catalogues a result whose bytes the backing keeps. */
  #catalogue(result: CataloguedResult): void {
    this.#held.catalogue(result);
    const match = ID_PATTERN.exec(result.id);
    if (match !== null) this.#next = Math.max(this.#next, Number(match[1]) + 1);
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
      this.#held.size >= this.#maxResults ||
      this.#held.totalBytes + size > this.#maxTotalBytes
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
        if (!this.#held.has(stored.id)) {
          // Its bytes and digest are the ones made here: no second check.
          this.#makeRoom(size);
          this.#held.hold(Object.freeze({ ...stored, bytes, sha256 }));
        }
        return described(stored.id);
      })();
    }
    const id = `result-${this.#next++}`;
    this.#held.hold(Object.freeze({ id, bytes, sha256, origin, capture }));
    return described(id);
  }

  /** With `evictOldest`, evicts the oldest results until `size` more bytes fit. */
  #makeRoom(size: number): void {
    if (
      !this.#evictOldest || size > this.#maxTotalBytes || this.#maxResults <= 0
    ) return;
    const order = this.#held.heldInOrder();
    while (
      order.length > 0 &&
      (this.#held.size >= this.#maxResults ||
        this.#held.totalBytes + size > this.#maxTotalBytes)
    ) {
      // A result the backing can load again only leaves memory.
      this.#held.release(order[0]!.id, this.#backing?.load !== undefined);
    }
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
    if (this.#held.forget(id)) {
      this.#held.evict(id);
      return true;
    }
    if (!this.#held.has(id)) return false;
    this.#held.release(id, false);
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
    return this.#held.evicted(id);
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
    return this.#held.get(id);
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
    const all = this.#held.listing();
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
    yield* this.#held.heldInOrder().slice();
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
    if (this.#held.has(result.id)) {
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
      this.#held.size >= this.#maxResults ||
      this.#held.totalBytes + bytes.length > this.#maxTotalBytes
    ) {
      throw new ResultRestoreError(
        "store_full",
        `Cannot restore ${result.id}: the store is full`,
      );
    }
    this.#held.hold(Object.freeze({
      id: result.id,
      bytes,
      sha256,
      origin: result.origin,
      capture: result.capture,
    }));
    this.#next = Math.max(this.#next, Number(match[1]) + 1);
  }
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
