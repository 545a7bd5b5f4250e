/**
 * What a result store holds, apart from its rules: the results whose bytes
 * are in memory (one copy of a body however many ids hold it), the results
 * its backing catalogues whose bytes are not, the ids evicted, both lists
 * in id order, and the bytes held.
 *
 * @module
 */
import type { CataloguedResult, StoredResult } from "./result_types.ts";

/** The id number of `result-<n>`. */
export function idNumber(id: string): number {
  return Number(id.slice("result-".length));
}

/** A list kept in id order, sorted only when read after an out-of-order add. */
class IdOrdered<T extends { readonly id: string }> {
  #items: T[] = [];
  #sorted = true;

  push(item: T): void {
    const last = this.#items.at(-1);
    if (last !== undefined && idNumber(last.id) > idNumber(item.id)) {
      this.#sorted = false;
    }
    this.#items.push(item);
  }

  remove(item: T): void {
    const at = this.#items.indexOf(item);
    if (at >= 0) this.#items.splice(at, 1);
  }

  get size(): number {
    return this.#items.length;
  }

  /** The items in id order (the list itself: do not change it). */
  items(): T[] {
    if (!this.#sorted) {
      this.#items.sort((a, b) => idNumber(a.id) - idNumber(b.id));
      this.#sorted = true;
    }
    return this.#items;
  }
}

/** What a result store holds (see the module doc). */
export class Holdings {
  readonly #held = new Map<string, StoredResult>();
  readonly #heldOrder = new IdOrdered<StoredResult>();
  /** The bytes held, by digest, and how many results hold them. */
  readonly #bodies = new Map<string, { bytes: Uint8Array; holders: number }>();
  readonly #known = new Map<string, CataloguedResult>();
  readonly #knownOrder = new IdOrdered<CataloguedResult>();
  readonly #evicted = new Set<string>();
  #totalBytes = 0;

  /** Results held (their bytes in memory). */
  get size(): number {
    return this.#held.size;
  }

  /** Bytes of the results held, each result counted. */
  get totalBytes(): number {
    return this.#totalBytes;
  }

  /** The result held under `id`. */
  get(id: string): StoredResult | undefined {
    return this.#held.get(id);
  }

  /** Whether `id` is held. */
  has(id: string): boolean {
    return this.#held.has(id);
  }

  /** Whether `id` is catalogued without its bytes. */
  knows(id: string): boolean {
    return this.#known.has(id);
  }

  /**
   * `id` as a held result when it is catalogued without its bytes but
   * another result holds the same body (same digest and size): its bytes
   * need not be loaded, nor checked again.
   */
  sharing(id: string): StoredResult | undefined {
    const entry = this.#known.get(id);
    if (entry === undefined) return undefined;
    const body = this.#bodies.get(entry.sha256);
    if (body === undefined || body.bytes.length !== entry.utf8_bytes) {
      return undefined;
    }
    const { utf8_bytes: _, ...facts } = entry;
    return { ...facts, bytes: body.bytes };
  }

  /** Holds a result (no longer only catalogued, no longer evicted). */
  hold(result: StoredResult): void {
    this.forget(result.id);
    this.#evicted.delete(result.id);
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
    this.#held.set(result.id, result);
    this.#heldOrder.push(result);
  }

  /**
   * Lets a held result go: catalogued still when its backing can load it
   * again, else evicted.
   */
  release(id: string, loadable: boolean): void {
    const result = this.#held.get(id);
    if (result === undefined) return;
    this.#held.delete(id);
    this.#heldOrder.remove(result);
    const body = this.#bodies.get(result.sha256);
    if (body !== undefined && (body.holders -= 1) <= 0) {
      this.#bodies.delete(result.sha256);
    }
    this.#totalBytes -= result.bytes.length;
    if (loadable) {
      this.catalogue({ ...result, utf8_bytes: result.bytes.length });
    } else this.#evicted.add(id);
  }

  /** Catalogues a result whose bytes its backing keeps. */
  catalogue(result: CataloguedResult): void {
    if (this.#held.has(result.id) || this.#known.has(result.id)) return;
    const entry: CataloguedResult = Object.freeze({
      id: result.id,
      sha256: result.sha256,
      origin: result.origin,
      capture: result.capture,
      utf8_bytes: result.utf8_bytes,
    });
    this.#known.set(entry.id, entry);
    this.#knownOrder.push(entry);
  }

  /** Drops a catalogued-only result; whether there was one. */
  forget(id: string): boolean {
    const entry = this.#known.get(id);
    if (entry === undefined) return false;
    this.#known.delete(id);
    this.#knownOrder.remove(entry);
    return true;
  }

  /** Marks `id` evicted: a reference to it says so. */
  evict(id: string): void {
    this.#evicted.add(id);
  }

  /** Whether `id` was held or catalogued and is evicted now. */
  evicted(id: string): boolean {
    return this.#evicted.has(id);
  }

  /** The results held, in id order (the list itself: do not change it). */
  heldInOrder(): StoredResult[] {
    return this.#heldOrder.items();
  }

  /** Held and catalogued-only results, in id order. */
  listing(): readonly (StoredResult | CataloguedResult)[] {
    const held = this.#heldOrder.items();
    if (this.#known.size === 0) return held;
    const known = this.#knownOrder.items();
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
}
