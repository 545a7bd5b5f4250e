// The large JSON file of run_code's scripted tasks, shared by its gateway
// test and tools/code_figures.ts: 30,000 items, a third on sale, prices
// spread by a multiplicative hash (about 1.3 MB).

/** One item of the file. */
export interface Item {
  readonly id: number;
  readonly price: number;
  readonly tags: readonly string[];
}

/**
 * Writes `ROOT/items.json` (`{"items": […]}`).
 *
 * @param root A folder the caller owns.
 * @returns The file's path and its items.
 */
export async function writeSaleItems(
  root: string,
): Promise<{ readonly path: string; readonly items: readonly Item[] }> {
  const items: Item[] = Array.from({ length: 30_000 }, (_, id) => ({
    id,
    price: (id * 7919) % 100_000 / 100,
    tags: id % 3 === 0 ? ["sale"] : ["new"],
  }));
  const path = `${root}/items.json`;
  await Deno.writeTextFile(path, JSON.stringify({ items }));
  return { path, items };
}
