// What the figure scripts measure with: wall time, the median and the
// percentiles of rounds and a process's memory. Free of side effects, like `repo.ts`.

/**
 * Runs `run` and measures it.
 *
 * @param run What to time.
 * @returns What it returned and the milliseconds it took.
 */
export async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await run();
  return [value, performance.now() - start];
}

/**
 * The milliseconds `run` takes.
 *
 * @param run What to time.
 * @returns Its wall time.
 */
export async function elapsed(run: () => Promise<unknown>): Promise<number> {
  return (await timed(run))[1];
}

/**
 * The median (the mean of the two middle values for an even count).
 *
 * @param values At least one number.
 * @returns Their median.
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) {
    throw new RangeError("No values to take a median of");
  }
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? sorted[mid]!
    : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The value below which a share `p` of `values` lies: the one at
 * `floor(p × count)` in ascending order (0 the smallest, 0.5 the upper
 * middle, 1 the largest).
 *
 * @param values The values.
 * @param p The share, from 0 to 1.
 * @returns That value; `NaN` when there are none.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** A process's resident memory now and at its peak, in bytes. */
export interface Memory {
  readonly rss: number;
  readonly hwm: number;
}

/**
 * A running process's resident set (`VmRSS`) and its peak (`VmHWM`), from
 * `/proc/PID/status` (read by `cat`: Deno wants `--allow-all` for `/proc`).
 *
 * @param pid The process.
 * @returns Its memory in bytes.
 */
export function memoryOf(pid: number): Memory {
  const status = new TextDecoder().decode(
    new Deno.Command("cat", { args: [`/proc/${pid}/status`] }).outputSync()
      .stdout,
  );
  const kb = (key: string) =>
    Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/**
 * The head of a Markdown table as docs/performance.md holds them: the
 * header row and its alignment row, the first `left` columns left-aligned
 * (names), the others right-aligned (figures).
 *
 * @param header The column names.
 * @param left How many leading columns are names.
 * @returns Two lines.
 */
export function tableHead(header: readonly string[], left = 0): string {
  const align = header.map((_, i) => i < left ? "---" : "---:");
  return `${tableRow(header)}\n${tableRow(align)}`;
}

/**
 * One row of a Markdown table.
 *
 * @param cells The cells, already formatted.
 * @returns The line.
 */
export function tableRow(cells: readonly (string | number)[]): string {
  return `| ${cells.join(" | ")} |`;
}
