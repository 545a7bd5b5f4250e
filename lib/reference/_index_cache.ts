// Indexes of stored content (JSON indexes, line ends), kept least recently
// used first within a byte budget. Content is the key, held weakly: an index
// goes when its content goes, or earlier when newer indexes need the room
// (it is rebuilt on the next lookup; scanning is cheap).

interface Slot {
  readonly content: WeakRef<Uint8Array>;
  readonly size: number;
}

/** An LRU of per-content values within a total size. */
export class IndexCache<V> {
  readonly #budget: number;
  readonly #sizeOf: (value: V) => number;
  readonly #values = new WeakMap<Uint8Array, V>();
  readonly #slots = new WeakMap<Uint8Array, Slot>();
  /** Slots in use order, least recent first. */
  readonly #order = new Set<Slot>();
  #total = 0;

  /**
   * @param budget Largest total size of the values kept (the newest is kept even when larger).
   * @param sizeOf A value's size in bytes.
   */
  constructor(budget: number, sizeOf: (value: V) => number) {
    this.#budget = budget;
    this.#sizeOf = sizeOf;
  }

  /** Total size of the values kept (including any whose content is gone). */
  get total(): number {
    return this.#total;
  }

  /** The value for `content`, made by `make` unless kept. */
  get(content: Uint8Array, make: (content: Uint8Array) => V): V {
    const kept = this.#values.get(content);
    if (kept !== undefined) {
      const slot = this.#slots.get(content)!;
      this.#order.delete(slot);
      this.#order.add(slot);
      return kept;
    }
    const value = make(content);
    const slot: Slot = {
      content: new WeakRef(content),
      size: this.#sizeOf(value),
    };
    this.#values.set(content, value);
    this.#slots.set(content, slot);
    this.#order.add(slot);
    this.#total += slot.size;
    for (const oldest of this.#order) {
      if (this.#total <= this.#budget || oldest === slot) break;
      this.#order.delete(oldest);
      this.#total -= oldest.size;
      const gone = oldest.content.deref();
      if (gone !== undefined) {
        this.#values.delete(gone);
        this.#slots.delete(gone);
      }
    }
    return value;
  }

  /** Whether a value for `content` is kept. */
  has(content: Uint8Array): boolean {
    return this.#values.has(content);
  }
}
