/**
 * One operation at a time: a journal writer seals each record on the one
 * before, so two appends (or an append and a re-read) at once from one
 * writer would break the chain.
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
