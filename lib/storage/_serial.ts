/**
 * One operation at a time: a journal's reads and writes in one process
 * share what it last saw of the file, so a read that finished while a write
 * was under way would hand the writer a stale view of where the file ends.
 *
 * @module
 */

/** Runs async operations one after another, in call order. */
export class Serial {
  #last: Promise<unknown> = Promise.resolve();

  /**
   * Runs `operation` after every operation handed in before it.
   *
   * @param operation The work.
   * @returns What it answers; its failure does not stop later operations.
   */
  run<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.#last.then(operation);
    this.#last = next.catch(() => {});
    return next;
  }
}
