/**
 * Group commit: items handed in while one write is under way go together
 * in the next one, so one write serves every call that arrived meanwhile
 * and writes never overlap (a journal writer seals each record on the one
 * before).
 *
 * @module
 */

interface Waiting<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

/** Writes items in batches, one batch at a time (see the module doc). */
export class GroupCommit<I, O> {
  readonly #write: (items: readonly I[]) => Promise<readonly O[]>;
  readonly #most: number;
  #waiting: Waiting<I, O>[] = [];
  #running: Promise<void> | undefined;

  /**
   * A group commit over `write`.
   *
   * @param write Writes a batch; answers one value per item, in order.
   * @param most The most items in one batch.
   */
  constructor(
    write: (items: readonly I[]) => Promise<readonly O[]>,
    most: number,
  ) {
    this.#write = write;
    this.#most = most;
  }

  /**
   * Hands an item in.
   *
   * @param item The item.
   * @returns What the write answered for it, once its batch is written.
   */
  add(item: I): Promise<O> {
    const { promise, resolve, reject } = Promise.withResolvers<O>();
    this.#waiting.push({ item, resolve, reject });
    this.#running ??= this.#run();
    return promise;
  }

  /** Settles once every item handed in so far is written (or failed). */
  async settled(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  async #run(): Promise<void> {
    // Let the calls that arrive in this same turn join the first batch.
    await Promise.resolve();
    while (this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, this.#most);
      try {
        const out = await this.#write(batch.map((w) => w.item));
        batch.forEach((w, i) => w.resolve(out[i]!));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.#running = undefined;
  }
}
