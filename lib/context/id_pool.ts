/**
 * Short, human-typeable ids for entries and contexts.
 *
 * @module
 */
import { IdPoolExhaustedError } from "./errors.ts";

const ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";
const BASE = ALPHABET.length; // 31
const ROUNDS = 4;
const MAX_LENGTH = 10; // 31^10 < 2^53

/** Options of {@linkcode IdPool}. */
export interface IdPoolOptions {
  /** Characters of the first ids, 1 to 10. Defaults to 3 (29,791 ids). */
  readonly length?: number;
  /**
   * Longest ids the pool grows to, from `length` to 10. When every id of the
   * current length is in use, the pool moves on to ids one character longer
   * (ids already handed out keep their length). Defaults to 10, so a pool
   * never runs out while its ids fit in memory; set it to `length` for a
   * fixed-size pool.
   */
  readonly maxLength?: number;
  /** Seed of the scrambled order; the same seed gives the same ids. Random when omitted. */
  readonly seed?: number;
}

/**
 * A pool of short ids over a readable alphabet (lowercase letters and digits
 * without `i l o 0 1`, 31 characters). Ids come out in a scrambled order that
 * a seed reproduces: the n-th id is a keyed bijection of n over
 * `[0, 31^length)` (digit-wise Feistel rounds), so nothing is materialised
 * up front and `next()` costs O(length²). Released ids join the back of the
 * queue (FIFO): they are handed out again only after every fresh id, so a
 * redacted id is not reused at once. When every id of the current length is
 * in use, the pool grows: later ids are one character longer (up to
 * `maxLength`), and ids already handed out stay as they are.
 *
 * @example
 * ```ts
 * import { IdPool } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const pool = new IdPool({ seed: 42 });
 * const id = pool.next();
 * assert.match(id, /^[a-hjkmnp-z2-9]{3}$/);
 * assert.equal(pool.remaining, 31 ** 3 - 1);
 * assert.equal(new IdPool({ seed: 42 }).next(), id);
 * const tiny = new IdPool({ length: 1, seed: 1 });
 * for (let i = 0; i < 31; i++) tiny.next();
 * assert.equal(tiny.next().length, 2); // grown, not exhausted
 * ```
 */
export class IdPool {
  /** The 31 characters ids are made of. */
  static readonly ALPHABET: string = ALPHABET;
  static #shared: IdPool | undefined;

  /**
   * The default pool shared by every entry and context built without an
   * explicit `ids` option (length 3, random seed).
   *
   * @returns The process-wide pool.
   */
  static get shared(): IdPool {
    IdPool.#shared ??= new IdPool();
    return IdPool.#shared;
  }

  /** The longest ids the pool grows to. */
  readonly maxLength: number;
  /** The seed (as an unsigned 32-bit integer). */
  readonly seed: number;
  #length: number;
  #size: number;
  #keys: Uint32Array;
  #counter = 0;
  #queue: string[] = [];
  #head = 0;
  readonly #out = new Set<string>();

  /**
   * Creates a pool.
   *
   * @param options Id length and seed.
   * @throws {RangeError} When `length` is not an integer from 1 to 10 or `seed` is not a finite number.
   */
  constructor(options: IdPoolOptions = {}) {
    const length = options.length ?? 3;
    if (!Number.isInteger(length) || length < 1 || length > MAX_LENGTH) {
      throw new RangeError(
        `Cannot create an id pool of length ${length}: the length must be an integer from 1 to ${MAX_LENGTH}`,
      );
    }
    const seed = options.seed ??
      crypto.getRandomValues(new Uint32Array(1))[0] ?? 0;
    if (!Number.isFinite(seed)) {
      throw new RangeError(
        `Cannot seed an id pool with ${seed}: the seed must be a finite number`,
      );
    }
    const maxLength = options.maxLength ?? MAX_LENGTH;
    if (
      !Number.isInteger(maxLength) || maxLength < length ||
      maxLength > MAX_LENGTH
    ) {
      throw new RangeError(
        `Cannot create an id pool growing to length ${maxLength}: maxLength must be an integer from length (${length}) to ${MAX_LENGTH}`,
      );
    }
    this.seed = seed >>> 0;
    this.maxLength = maxLength;
    this.#length = length;
    this.#size = BASE ** length;
    this.#keys = roundKeys(this.seed, length);
  }

  /** Characters of the ids `next()` hands out now (grows when they run out). */
  get length(): number {
    return this.#length;
  }

  /** How many ids of the current length there are: `31 ** length`. */
  get size(): number {
    return this.#size;
  }

  /** How many ids `next()` can still hand out before the pool grows. */
  get remaining(): number {
    return this.#size - this.#counter + this.#queue.length - this.#head;
  }

  /**
   * Hands out the next id: a fresh one while any are left, then released
   * ones in the order they were released.
   *
   * @returns An id not currently in use, of `length` characters or a released shorter one.
   * @throws {IdPoolExhaustedError} When every id up to `maxLength` characters is in use.
   */
  next(): string {
    let id: string | undefined;
    if (
      this.#counter === this.#size && this.#head === this.#queue.length &&
      this.#length < this.maxLength
    ) {
      // Every id is in use: move on to ids one character longer.
      this.#length += 1;
      this.#size = BASE ** this.#length;
      this.#keys = roundKeys(this.seed, this.#length);
      this.#counter = 0;
    }
    if (this.#counter < this.#size) {
      id = this.#format(this.#permute(this.#counter));
      this.#counter += 1;
    } else if (this.#head < this.#queue.length) {
      id = this.#queue[this.#head];
      this.#head += 1;
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
    }
    if (id === undefined) {
      throw new IdPoolExhaustedError(
        "ids_exhausted",
        `The id pool is exhausted: all ${this.#size} ids of length ${this.#length} are in use and maxLength is ${this.maxLength}; release some or allow longer ids`,
      );
    }
    this.#out.add(id);
    return id;
  }

  /**
   * Returns an id to the pool; it is handed out again after every id
   * already waiting.
   *
   * @param id An id this pool handed out.
   * @returns `true` when the id was in use and is now released, `false` when it was not in use.
   */
  release(id: string): boolean {
    if (!this.#out.delete(id)) return false;
    this.#queue.push(id);
    return true;
  }

  /**
   * Tells whether an id is currently handed out by this pool.
   *
   * @param id Any string.
   * @returns `true` while the id is in use.
   */
  has(id: string): boolean {
    return this.#out.has(id);
  }

  #permute(value: number): number {
    const digits = new Array<number>(this.#length);
    let rest = value;
    for (let j = 0; j < this.#length; j++) {
      digits[j] = rest % BASE;
      rest = Math.floor(rest / BASE);
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (let j = 0; j < this.#length; j++) {
        // Add a keyed function of the other digits: invertible by design.
        let others = 0;
        for (let k = this.#length - 1; k >= 0; k--) {
          if (k !== j) others = others * BASE + (digits[k] ?? 0);
        }
        const key = this.#keys[r * this.#length + j] ?? 0;
        const h = mix(key ^ (others >>> 0) ^ mix(Math.floor(others / 2 ** 32)));
        digits[j] = ((digits[j] ?? 0) + h % BASE) % BASE;
      }
    }
    let out = 0;
    for (let j = this.#length - 1; j >= 0; j--) {
      out = out * BASE + (digits[j] ?? 0);
    }
    return out;
  }

  #format(value: number): string {
    let id = "";
    let rest = value;
    for (let j = 0; j < this.#length; j++) {
      id += ALPHABET[rest % BASE];
      rest = Math.floor(rest / BASE);
    }
    return id;
  }
}

/** The round keys of the id permutation of one length. */
function roundKeys(seed: number, length: number): Uint32Array {
  const keys = new Uint32Array(ROUNDS * length);
  let state = seed ^ 0x5bd1e995;
  for (let i = 0; i < keys.length; i++) {
    state = mix(state + 0x9e3779b9 + i);
    keys[i] = state;
  }
  return keys;
}

/** A 32-bit avalanche mix (murmur3 finaliser). */
function mix(input: number): number {
  let h = input >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
