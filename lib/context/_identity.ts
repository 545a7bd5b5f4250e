// Dense numbers for the content identities of attached entries, so the
// compiler dedups with a stamp array instead of a per-compile Set of strings.
// A number is taken when the first section takes an entry and given back
// when the last one lets go; equal identities share one number.

const numbers = new Map<string, number>();
let holders = new Int32Array(1024);
const free: number[] = [];
let top = 0;

/** The number of `identity`, counting one more holder. */
export function internIdentity(identity: string): number {
  let slot = numbers.get(identity);
  if (slot === undefined) {
    slot = free.pop() ?? top++;
    if (slot >= holders.length) {
      const grown = new Int32Array(holders.length * 2);
      grown.set(holders);
      holders = grown;
    }
    numbers.set(identity, slot);
  }
  holders[slot]! += 1;
  return slot;
}

/** Gives one holder of `identity` (numbered `slot`) back. */
export function releaseIdentity(identity: string, slot: number): void {
  holders[slot]! -= 1;
  if (holders[slot] === 0) {
    numbers.delete(identity);
    free.push(slot);
  }
}

let stamps = new Uint32Array(1024);
let generation = 0;

/**
 * Starts a dedup pass: returns the stamp array and this pass's stamp.
 * `stamps[slot] === stamp` means the identity was already compiled.
 */
export function beginDedup(): { stamps: Uint32Array; stamp: number } {
  if (stamps.length < top) {
    let size = stamps.length;
    while (size < top) size *= 2;
    stamps = new Uint32Array(size);
    generation = 0;
  }
  generation += 1;
  if (generation === 0xffffffff) {
    stamps.fill(0);
    generation = 1;
  }
  return { stamps, stamp: generation };
}
