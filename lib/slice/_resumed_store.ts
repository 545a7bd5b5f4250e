/**
 * The result store of a resumed run. Results whose source changed while the
 * run was stopped keep their id, their place in the count and in the
 * catalogue (with the digest they had), but every reference to them fails
 * with `digest_mismatch`: their content is gone and is never replaced by the
 * changed source. Their ids stay taken, so new results never reuse them.
 *
 * @module
 */
import {
  type CataloguePage,
  ResultStore,
  type StoredResult,
} from "../store/result_store.ts";
import type { UnavailableResult } from "./run_state.ts";

const EMPTY = new Uint8Array(0);
const EMPTY_SHA256 =
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** A store that also holds results which are no longer available. */
export class ResumedResultStore extends ResultStore {
  readonly #stale = new Map<string, UnavailableResult>();

  /**
   * Reserves the id of an unavailable result (call in id order with
   * `restore`).
   */
  restoreUnavailable(entry: UnavailableResult): void {
    // An empty placeholder takes the id and the place in the count.
    super.restore({
      id: entry.id,
      bytes: EMPTY,
      sha256: EMPTY_SHA256,
      origin: entry.origin,
      capture: entry.capture,
    });
    this.#stale.set(entry.id, entry);
  }

  override get(id: string): StoredResult | undefined {
    const stale = this.#stale.get(id);
    if (stale === undefined) return super.get(id);
    // No reference digest can equal this, so selection fails with digest_mismatch.
    return {
      id,
      bytes: EMPTY,
      sha256: `unavailable: ${stale.detail}`,
      origin: stale.origin,
      capture: stale.capture,
    };
  }

  override list(offset: number): CataloguePage {
    const page = super.list(offset);
    return {
      results: page.results.map((item) => {
        const stale = this.#stale.get(item.reference.result);
        return stale === undefined ? item : {
          ...item,
          utf8_bytes: stale.utf8_bytes,
          reference: { ...item.reference, sha256: stale.sha256 },
        };
      }),
      next_offset: page.next_offset,
    };
  }

  override *stored(): Iterable<StoredResult> {
    for (const result of super.stored()) {
      if (!this.#stale.has(result.id)) yield result;
    }
  }
}
