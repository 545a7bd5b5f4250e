/**
 * Finding tools in the gateway's catalogue by words (`search_tools`). An
 * exact tool name — with or without its `<server>__` prefix, in any case,
 * `-` and `_` alike — always comes first; the rest are ranked by BM25
 * (k1 1.2, b 0.75, Lucene's always-positive IDF) over one bag of words per
 * tool: its name's words, its title, its description, and the names and
 * descriptions of its parameters. Ties go by name, so the same query over
 * the same catalogue gives the same answer. Words are runs of letters and
 * digits, split further at lower-to-upper case changes, lowercased, with a
 * plural `s` dropped (`files` → `file`, `entries` → `entry`).
 *
 * @module
 */
import { distance } from "fastest-levenshtein";

/** One tool of the catalogue, as the search sees it. */
export interface SearchableTool {
  /** The gateway's name, `<server>__<tool>`. */
  readonly name: string;
  /** The server's entry name. */
  readonly server: string;
  /** The upstream's own name. */
  readonly tool: string;
  /** Its title. */
  readonly title?: string;
  /** Its description. */
  readonly description?: string;
  /** Its input schema (its parameters' names and descriptions are searched). */
  readonly inputSchema?: unknown;
}

/** Options of {@linkcode ToolIndex.search}. */
export interface ToolSearchOptions {
  /** Only this server's tools. */
  readonly server?: string;
  /** The most tools answered (default 5). */
  readonly limit?: number;
}

/** The answer of {@linkcode ToolIndex.search}. */
export interface ToolSearchAnswer<T extends SearchableTool> {
  /** The best tools, best first: exact names, then by score, then by name. */
  readonly tools: readonly T[];
  /** How many tools matched at all (an exact name or a shared word). */
  readonly totalMatches: number;
}

const K1 = 1.2;
const B = 0.75;
/** Most words taken from one tool (hostile descriptions can be huge). */
const MAX_WORDS_PER_TOOL = 4096;
/** Most schema properties whose names and descriptions are taken. */
const MAX_PARAMETERS = 256;
/** Most words of one query. */
const MAX_QUERY_WORDS = 64;

/**
 * The words of a text: letters and digits, split at lower-to-upper case
 * changes, lowercased, a plural `s` dropped.
 *
 * @param text Any text.
 * @returns Its words, in order.
 *
 * @example
 * ```ts
 * import { words } from "./tool_search.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(words("getTinyImage list_files HTTPServer"), ["get", "tiny", "image", "list", "file", "http", "server"]);
 * ```
 */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const run of text.match(/[\p{L}\p{N}]+/gu) ?? []) {
    // Most words have no capital after their first letter: no split.
    if (!HAS_INNER_UPPER.test(run)) {
      out.push(stem(run.toLowerCase()));
      continue;
    }
    const parts = run
      .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2")
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
      .split(" ");
    for (const part of parts) out.push(stem(part.toLowerCase()));
  }
  return out;
}

const HAS_INNER_UPPER = /.\p{Lu}/u;

/** A plural `s` dropped (the first step of Porter's stemmer, nothing more). */
function stem(word: string): string {
  if (word.length <= 3 || !word.endsWith("s")) return word;
  if (word.endsWith("sses")) return word.slice(0, -2);
  if (word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (/(ss|us|is)$/.test(word)) return word;
  return word.slice(0, -1);
}

/**
 * A name as exact matching compares it: lowercased, `-` as `_`.
 *
 * @param name A tool name.
 * @returns Its key.
 *
 * @example
 * ```ts
 * import { nameKey } from "./tool_search.ts";
 * import assert from "node:assert/strict";
 * assert.equal(nameKey("Get-Tiny_Image"), nameKey("get_tiny-image"));
 * ```
 */
export function nameKey(name: string): string {
  return name.trim().toLowerCase().replaceAll("-", "_");
}

/** The texts of a schema's properties: names and descriptions, nested ones too. */
function parameterTexts(schema: unknown): string[] {
  const texts: string[] = [];
  const seen = new Set<unknown>();
  const visit = (node: unknown, depth: number) => {
    if (
      depth > 4 || texts.length >= 2 * MAX_PARAMETERS ||
      typeof node !== "object" || node === null || seen.has(node)
    ) return;
    seen.add(node);
    const properties = (node as Record<string, unknown>).properties;
    if (typeof properties === "object" && properties !== null) {
      for (const [name, property] of Object.entries(properties)) {
        if (texts.length >= 2 * MAX_PARAMETERS) return;
        texts.push(name);
        const description = (property as Record<string, unknown> | null)
          ?.description;
        if (typeof description === "string") texts.push(description);
        visit(property, depth + 1);
      }
    }
    const items = (node as Record<string, unknown>).items;
    if (items !== undefined) visit(items, depth + 1);
  };
  visit(schema, 0);
  return texts;
}

/** The bag of words of one tool. */
function toolWords(tool: SearchableTool): string[] {
  const texts = [
    tool.name,
    tool.title ?? "",
    tool.description ?? "",
    ...parameterTexts(tool.inputSchema),
  ];
  const out: string[] = [];
  for (const text of texts) {
    for (const word of words(text.slice(0, 65_536))) {
      if (out.length >= MAX_WORDS_PER_TOOL) return out;
      out.push(word);
    }
  }
  return out;
}

/**
 * An index of the catalogue for one listing of it; build a new one when the
 * listing changes.
 *
 * @example
 * ```ts
 * import { ToolIndex } from "./tool_search.ts";
 * import assert from "node:assert/strict";
 * const index = new ToolIndex([
 *   { name: "fs__read_file", server: "fs", tool: "read_file", description: "Read a file" },
 *   { name: "fs__write_file", server: "fs", tool: "write_file", description: "Write a file" },
 *   { name: "web__read", server: "web", tool: "read", description: "Fetch a web page" },
 * ]);
 * assert.equal(index.search("WRITE-FILE").tools[0]?.name, "fs__write_file");
 * assert.equal(index.search("fetch page").tools[0]?.name, "web__read");
 * assert.deepEqual(index.closest("fs__read_fil", 1), ["fs__read_file"]);
 * ```
 */
export class ToolIndex<T extends SearchableTool = SearchableTool> {
  readonly #tools: readonly T[];
  /**
   * Word → the tools holding it, each with its whole BM25 term weight
   * (IDF and length norm included, computed once: a query only adds).
   */
  readonly #postings = new Map<
    string,
    { readonly docs: Int32Array; readonly weights: Float64Array }
  >();
  /** Exact-name key → the tools it names. */
  readonly #exact = new Map<string, number[]>();
  readonly #keys: string[];
  readonly #scores: Float64Array;

  /**
   * Indexes the tools.
   *
   * @param tools The catalogue (its order does not matter).
   */
  constructor(tools: readonly T[]) {
    this.#tools = tools;
    this.#scores = new Float64Array(tools.length);
    this.#keys = tools.map((t) => nameKey(t.name));
    const counts = tools.map((tool) => {
      const bag = toolWords(tool);
      const tf = new Map<string, number>();
      for (const word of bag) tf.set(word, (tf.get(word) ?? 0) + 1);
      return { length: bag.length, tf };
    });
    const average = tools.length === 0
      ? 0
      : counts.reduce((sum, c) => sum + c.length, 0) / tools.length;
    const lists = new Map<string, { doc: number; tf: number }[]>();
    counts.forEach(({ tf }, doc) => {
      for (const [word, n] of tf) {
        let list = lists.get(word);
        if (list === undefined) lists.set(word, list = []);
        list.push({ doc, tf: n });
      }
    });
    const n = tools.length;
    for (const [word, list] of lists) {
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      const docs = new Int32Array(list.length);
      const weights = new Float64Array(list.length);
      list.forEach(({ doc, tf }, i) => {
        const norm = 1 - B + B * counts[doc]!.length / average;
        docs[i] = doc;
        weights[i] = idf * tf * (K1 + 1) / (tf + K1 * norm);
      });
      this.#postings.set(word, { docs, weights });
    }
    tools.forEach((tool, doc) => {
      const keys = new Set([
        nameKey(tool.name),
        nameKey(tool.tool),
        nameKey(`${tool.server}__${tool.tool}`),
      ]);
      for (const key of keys) {
        let list = this.#exact.get(key);
        if (list === undefined) this.#exact.set(key, list = []);
        list.push(doc);
      }
    });
  }

  /** How many tools the index holds. */
  get size(): number {
    return this.#tools.length;
  }

  /**
   * The best tools for a query.
   *
   * @param query The model's words, or a tool's name.
   * @param options A server to keep to and the most tools to answer.
   * @returns The tools, best first, and how many matched.
   */
  search(query: string, options: ToolSearchOptions = {}): ToolSearchAnswer<T> {
    const limit = Math.max(0, options.limit ?? 5);
    const tools = this.#tools;
    const allowed = (doc: number) =>
      options.server === undefined || tools[doc]!.server === options.server;
    const before = (a: number, sa: number, b: number, sb: number) =>
      sa > sb || (sa === sb && tools[a]!.name < tools[b]!.name);
    const exact = (this.#exact.get(nameKey(query)) ?? []).filter(allowed)
      .sort((a, b) => compare(tools[a]!.name, tools[b]!.name));
    const scores = this.#scores;
    const touched: number[] = [];
    const terms = new Set(words(query.slice(0, 4096)));
    let taken = 0;
    for (const term of terms) {
      if (taken++ >= MAX_QUERY_WORDS) break;
      const postings = this.#postings.get(term);
      if (postings === undefined) continue;
      const { docs, weights } = postings;
      for (let i = 0; i < docs.length; i++) {
        const doc = docs[i]!;
        if (scores[doc] === 0) touched.push(doc);
        scores[doc]! += weights[i]!;
      }
    }
    // The best `limit` by score, then name, kept in order as they come.
    const first = new Set(exact);
    const best: number[] = [];
    let matches = exact.length;
    for (const doc of touched) {
      const score = scores[doc]!;
      if (first.has(doc) || !allowed(doc)) continue;
      matches += 1;
      if (best.length === limit) {
        const last = best[best.length - 1]!;
        if (!before(doc, score, last, scores[last]!)) continue;
        best.pop();
      }
      let at = best.length;
      while (
        at > 0 && before(doc, score, best[at - 1]!, scores[best[at - 1]!]!)
      ) {
        at -= 1;
      }
      best.splice(at, 0, doc);
    }
    const answer = [...exact, ...best].slice(0, limit).map((doc) =>
      tools[doc]!
    );
    for (const doc of touched) scores[doc] = 0;
    return { tools: answer, totalMatches: matches };
  }

  /**
   * The names closest to one that names no tool (Levenshtein distance over
   * the lowercased names, `-` as `_`; ties by name).
   *
   * @param name The name asked for (untrusted).
   * @param count How many to answer (default 3).
   * @returns The closest names, closest first.
   */
  closest(name: string, count = 3): string[] {
    const key = nameKey(name.slice(0, 256));
    return this.#tools
      .map((tool, doc) => ({
        name: tool.name,
        d: Math.min(
          distance(key, this.#keys[doc]!),
          distance(key, nameKey(tool.tool)),
        ),
      }))
      .sort((a, b) => a.d - b.d || compare(a.name, b.name))
      .slice(0, count)
      .map((c) => c.name);
  }
}

/** Code-unit order, the same on every machine (no locale). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
