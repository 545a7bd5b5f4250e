/**
 * A watchdog on a worker that serves requests: armed while any request
 * waits, re-armed by every message from the worker, it calls `onSilence`
 * with the oldest waiting request's name when the worker stays silent for
 * `silenceMs`.
 *
 * @module
 */

/** Watches a worker for silence while requests wait. */
export class Watchdog {
  readonly #silenceMs: number;
  readonly #onSilence: (op: string) => void;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(silenceMs: number, onSilence: (op: string) => void) {
    this.#silenceMs = silenceMs;
    this.#onSilence = onSilence;
  }

  /**
   * Re-arms for the oldest waiting request, or disarms when none waits.
   * Call on every message from the worker and whenever the queue changes.
   */
  watch(oldest: string | undefined): void {
    this.stop();
    if (oldest === undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#onSilence(oldest);
    }, this.#silenceMs);
  }

  /** Disarms. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
