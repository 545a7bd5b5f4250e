// The compile walk shared by render() and every message format: one pass
// over the include tree per section, O(entries + visitors) in all.
import { beginDedup } from "./_identity.ts";
import {
  type CompileState,
  compileState,
  type Entry,
  type Role,
} from "./entry.ts";
import { FileEntry } from "./file_entry.ts";
import { ImageEntry } from "./image_entry.ts";
import { StringEntry } from "./string_entry.ts";
import type { ContentBlock, EphemeralCacheControl } from "./message.ts";
import {
  type Section,
  SECTION_NAMES,
  sectionChanges,
  type SectionName,
} from "./section.ts";

/** The parts of a context the compile walk reads (structurally a `Context`). */
export interface CompileSource extends Readonly<Record<SectionName, Section>> {
  /** The context's name, shown in visitor labels. */
  readonly name: string;
  /** The contexts included as visitors. */
  readonly visitors: readonly CompileSource[];
}

/** One compiled entry. */
export interface Piece {
  readonly section: SectionName;
  readonly owner: CompileSource;
  readonly entry: Entry;
  readonly role: Role;
  /** Text with the `# NAME` header, or the caption of an image. */
  readonly text: string;
  readonly image?: ImageEntry;
}

type Order = "self-first" | "visitors-first" | "self-only";

const ORDER: Readonly<Record<SectionName, Order>> = {
  foundation: "self-first",
  focus: "visitors-first",
  topic: "self-first",
  convo: "visitors-first",
  step: "self-only",
  attention: "visitors-first",
};

/** The contexts whose entries a section shows, in the seed's visitor order. */
function owners(root: CompileSource, section: SectionName): CompileSource[] {
  const order = ORDER[section];
  if (order === "self-only") return [root];
  const out: CompileSource[] = [];
  const visited = new Set<CompileSource>();
  const visit = (owner: CompileSource): void => {
    if (visited.has(owner)) return;
    visited.add(owner);
    if (order === "self-first") out.push(owner);
    for (const visitor of owner.visitors) visit(visitor);
    if (order === "visitors-first") out.push(owner);
  };
  visit(root);
  return out;
}

/**
 * Dedup by identity across one compile: a stamp per identity number, and a
 * set only for entries no section holds (which have no number).
 */
class Seen {
  /** A slot is marked when it holds `stamp` (read directly by hot loops). */
  readonly stamps: Uint32Array;
  readonly stamp: number;
  #loose: Set<string> | undefined;

  constructor() {
    const { stamps, stamp } = beginDedup();
    this.stamps = stamps;
    this.stamp = stamp;
  }

  /** Marks an identity number; `false` when it was marked before. */
  mark(slot: number): boolean {
    if (this.stamps[slot] === this.stamp) return false;
    this.stamps[slot] = this.stamp;
    return true;
  }

  /** Marks the entry's identity; `false` when it was marked before. */
  first(state: CompileState, entry: Entry): boolean {
    if (state.slot >= 0) return this.mark(state.slot);
    this.#loose ??= new Set();
    const identity = entry.identity();
    if (this.#loose.has(identity)) return false;
    this.#loose.add(identity);
    return true;
  }
}

/**
 * The text an entry compiles to, with its `# NAME` header; `""` when blank
 * (never an empty block). Strings and image captions cannot change, so their
 * text is built once and kept; files are read on every compile.
 */
function entryText(entry: Entry, state: CompileState): string {
  if (state.text !== undefined) return state.text;
  let body: string;
  if (entry instanceof ImageEntry) {
    state.text = entry.compile();
    return state.text;
  }
  if (entry instanceof FileEntry) body = entry.read().text;
  else body = entry.compile();
  const text = headed(entry, body);
  if (entry instanceof StringEntry) state.text = text;
  return text;
}

/** `body` under the entry's `# NAME` header; `""` when the body is blank. */
function headed(entry: Entry, body: string): string {
  if (body.trim() === "") return "";
  return entry.name === undefined ? body : `# ${entry.name}\n${body}`;
}

/**
 * Compiles the selected sections of `root` and its include tree into pieces,
 * in section order and, inside a section, in the seed's visitor order
 * (depth first). Dedup by identity spans the tree; step is neither deduped
 * nor recorded (it is the current output, shown exactly as added).
 */
export function collect(
  root: CompileSource,
  sections: ReadonlySet<SectionName>,
): Piece[] {
  const pieces: Piece[] = [];
  const seen = new Seen();
  for (const section of SECTION_NAMES) {
    if (!sections.has(section)) continue;
    const dedup = section !== "step";
    for (const owner of owners(root, section)) {
      const entries = owner[section].entries;
      const { length, slots, texts } = compiledSection(owner[section]);
      for (let i = 0; i < length; i++) {
        const entry = entries[i]!;
        const slot = slots[i]!;
        if (slot >= 0) {
          // A string or an image: number and text are kept.
          if (dedup && !seen.mark(slot)) continue;
          const text = texts[i] ?? "";
          pushPiece(pieces, section, owner, entry, entry.role, text);
          continue;
        }
        const state = compileState(entry);
        if (dedup && !seen.first(state, entry)) continue;
        if (entry instanceof FileEntry) {
          // One read gives both the text and the frontmatter's role.
          const snapshot = entry.read();
          const text = headed(entry, snapshot.text);
          pushPiece(pieces, section, owner, entry, snapshot.role, text);
        } else {
          const text = entryText(entry, state);
          pushPiece(pieces, section, owner, entry, entry.role, text);
        }
      }
    }
  }
  return pieces;
}

/** Adds an entry's piece: images always (their caption), others unless blank. */
function pushPiece(
  pieces: Piece[],
  section: SectionName,
  owner: CompileSource,
  entry: Entry,
  role: Role,
  text: string,
): void {
  if (entry instanceof ImageEntry) {
    pieces.push({ section, owner, entry, role, text, image: entry });
  } else if (text !== "") pieces.push({ section, owner, entry, role, text });
}

const BANNER: Readonly<Record<SectionName, readonly [string, string]>> = {
  foundation: ["> FOUNDATION", ""],
  focus: ["------\n> FOCUS", "------"],
  topic: ["------\n> TOPIC", "------"],
  convo: ["> CONVO - what has been said and done and learned?", ""],
  step: ["", ""],
  attention: ["> ATTENTION", ""],
};

function visitorLabel(section: SectionName, name: string): string {
  switch (section) {
    case "foundation":
      return `># ${name} (visitor)`;
    case "focus":
      return `># Focus from ${name}`;
    case "topic":
      return `># Topic from ${name}`;
    case "convo":
      return `># Conversation from ${name}`;
    default:
      return `># Attention from ${name}`;
  }
}

/**
 * A section's entries as the text compiler sees them, in parallel arrays
 * read in one sweep: each entry's identity number and its text (with header;
 * `null` when blank, so the sweep never touches a string it does not emit),
 * or slot -1 and no text for entries compiled live (files
 * are read every time; other subclasses may change). Appends extend it;
 * any other change of the section rebuilds it.
 */
interface CompiledSection {
  changes: number;
  length: number;
  slots: Int32Array;
  readonly texts: (string | null)[];
  /** Whether some entry is compiled live (slot -1): no run is kept then. */
  live: boolean;
  /** The section's last rendered run, reused while it would come out the same. */
  run: RenderedRun | undefined;
}

/**
 * What one render took from a section: which entries were new to it (1) and
 * their non-blank texts joined by blank lines. Dedup decides per render
 * which entries show, so a render checks every entry's mark against `fresh`
 * (two compact arrays, no string touched) and reuses `text` when all agree.
 */
interface RenderedRun {
  readonly length: number;
  readonly fresh: Uint8Array;
  readonly text: string;
}

const COMPILED = new WeakMap<Section, CompiledSection>();

function compiledSection(section: Section): CompiledSection {
  const entries = section.entries;
  const changes = sectionChanges(section);
  let compiled = COMPILED.get(section);
  if (
    compiled === undefined || compiled.changes !== changes ||
    compiled.length > entries.length
  ) {
    compiled = {
      changes,
      length: 0,
      slots: new Int32Array(Math.max(16, entries.length)),
      texts: [],
      live: false,
      run: undefined,
    };
    COMPILED.set(section, compiled);
  }
  const length = entries.length;
  if (compiled.length === length) return compiled;
  if (compiled.slots.length < length) {
    const slots = new Int32Array(Math.max(length, compiled.slots.length * 2));
    slots.set(compiled.slots.subarray(0, compiled.length));
    compiled.slots = slots;
  }
  const { slots, texts } = compiled;
  for (let i = compiled.length; i < length; i++) {
    const entry = entries[i]!;
    const state = compileState(entry);
    if (
      state.slot >= 0 &&
      (entry instanceof StringEntry || entry instanceof ImageEntry)
    ) {
      slots[i] = state.slot;
      const text = entryText(entry, state);
      texts.push(text === "" ? null : text);
    } else {
      slots[i] = -1;
      texts.push(null);
      compiled.live = true;
    }
  }
  compiled.length = length;
  return compiled;
}

/**
 * Plain text of every section of `root` and its include tree, in one pass:
 * section banners, visitor labels, entries joined by a blank line. Each
 * section of each context contributes one run of texts, and every part goes
 * flat into one list with its separator, joined once (gluing a banner or a
 * label onto a run would make a rope that the join flattens: a second copy).
 * When every part is the one the root's last render joined, that render's
 * text is returned: the same characters, without writing megabytes anew.
 */
export function renderText(root: CompileSource): string {
  const parts: string[] = [];
  const seen = new Seen();
  for (const section of SECTION_NAMES) {
    const [prefix, postfix] = BANNER[section];
    const dedup = section !== "step";
    let shown = false;
    for (const owner of owners(root, section)) {
      const run = renderRun(owner[section], seen, dedup);
      if (run === "") continue;
      if (parts.length > 0) parts.push("\n\n");
      if (!shown && prefix !== "") parts.push(prefix, "\n");
      if (owner !== root) parts.push(visitorLabel(section, owner.name), "\n");
      parts.push(run);
      shown = true;
    }
    if (shown && postfix !== "") parts.push("\n", postfix);
  }
  const last = RENDERED.get(root);
  if (last !== undefined && sameParts(parts, last.parts)) return last.text;
  const text = parts.join("");
  RENDERED.set(root, { parts, text });
  return text;
}

/** Each root's last render: the parts it joined and their text. */
const RENDERED = new WeakMap<
  CompileSource,
  { readonly parts: readonly string[]; readonly text: string }
>();

/** Whether two part lists hold equal strings (runs reused are the same objects). */
function sameParts(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Scratch marks for {@linkcode renderRun}, grown to the largest section. */
let scratch = new Uint8Array(1024);

/**
 * The texts one section shows in this render, joined by blank lines (`""`
 * when it shows none), marking their identities in `seen`. While every
 * entry shows or hides exactly as in the section's last render, the sweep
 * only checks marks, and that render's joined text is returned as is.
 */
function renderRun(section: Section, seen: Seen, dedup: boolean): string {
  const compiled = compiledSection(section);
  if (compiled.live) return liveRun(section, compiled, seen, dedup);
  const { length, slots, texts } = compiled;
  const last = compiled.run?.length === length ? compiled.run : undefined;
  let agreed = 0;
  if (last !== undefined) {
    agreed = dedup ? agreeingPrefix(slots, last.fresh, seen) : length;
    if (agreed === length) return last.text;
  }
  if (scratch.length < length) scratch = new Uint8Array(length * 2);
  // 1 where the entry is new to this render (blank texts are dropped below,
  // the same way every time, so they need no mark of their own).
  const fresh = scratch;
  if (last !== undefined) fresh.set(last.fresh.subarray(0, agreed));
  if (dedup) {
    const { stamps, stamp } = seen;
    for (let i = agreed; i < length; i++) {
      const slot = slots[i]!;
      fresh[i] = stamps[slot] === stamp ? 0 : 1;
      stamps[slot] = stamp;
    }
  } else fresh.fill(1, agreed, length);
  const parts: string[] = [];
  for (let i = 0; i < length; i++) {
    const text = texts[i]!;
    if (fresh[i] === 1 && text !== null) parts.push(text);
  }
  const text = parts.join("\n\n");
  compiled.run = { length, fresh: fresh.slice(0, length), text };
  return text;
}

/**
 * Marks entries in `seen` while each is new to this render exactly where
 * `fresh` says it was new to the last one; returns how many agreed (the
 * first that disagrees is left unmarked).
 */
function agreeingPrefix(
  slots: Int32Array,
  fresh: Uint8Array,
  seen: Seen,
): number {
  const { stamps, stamp } = seen;
  const length = fresh.length;
  for (let i = 0; i < length; i++) {
    const slot = slots[i]!;
    if ((stamps[slot] !== stamp) !== (fresh[i] === 1)) return i;
    stamps[slot] = stamp;
  }
  return length;
}

/** A section with live entries (files, other subclasses), compiled afresh. */
function liveRun(
  section: Section,
  compiled: CompiledSection,
  seen: Seen,
  dedup: boolean,
): string {
  const parts: string[] = [];
  const { length, slots, texts } = compiled;
  for (let i = 0; i < length; i++) {
    const slot = slots[i]!;
    if (slot >= 0) {
      if (dedup && !seen.mark(slot)) continue;
      const text = texts[i]!;
      if (text !== null) parts.push(text);
      continue;
    }
    const entry = section.entries[i]!;
    const state = compileState(entry);
    if (dedup && !seen.first(state, entry)) continue;
    const text = entryText(entry, state);
    if (text !== "") parts.push(text);
  }
  return parts.join("\n\n");
}

/** A turn under construction: its blocks are the message's content. */
export interface Turn<R extends Role = Role> {
  readonly role: R;
  readonly content: ContentBlock[];
}

/** Pieces laid out as a request: system blocks, turns, cache-marker targets. */
export interface Layout<R extends Role> {
  /** Blocks of the system part, in order. */
  readonly system: ContentBlock[];
  /** The other turns, same-role neighbours merged. */
  readonly turns: Turn<R>[];
  /** The last block each section contributes, in request order. */
  readonly last: Map<SectionName, ContentBlock>;
}

/**
 * Lays pieces out in one pass, one block object per text or image (no
 * per-entry wrappers): system-role pieces go to `system`, others become
 * turns, same-role neighbours merged. With `textOnlySystem`, system-role
 * images (with their captions) move to the start of the first user turn,
 * or into a new leading user turn, since the providers' system parts take
 * text only. The last block of each section is tracked per part (system,
 * moved images, turns), which is request order.
 */
export function layOut(
  pieces: readonly Piece[],
  textOnlySystem: true,
): Layout<"user" | "assistant">;
export function layOut(
  pieces: readonly Piece[],
  textOnlySystem: false,
): Layout<Role>;
export function layOut(
  pieces: readonly Piece[],
  textOnlySystem: boolean,
): Layout<Role> {
  const system: ContentBlock[] = [];
  const leading: ContentBlock[] = [];
  const turns: Turn[] = [];
  const lastSystem = new Map<SectionName, ContentBlock>();
  const lastLeading = new Map<SectionName, ContentBlock>();
  const lastTurns = new Map<SectionName, ContentBlock>();
  let current: Turn | undefined;
  for (const piece of pieces) {
    let target: ContentBlock[];
    let last: Map<SectionName, ContentBlock>;
    if (piece.role === "system") {
      if (textOnlySystem && piece.image !== undefined) {
        target = leading;
        last = lastLeading;
      } else {
        target = system;
        last = lastSystem;
      }
    } else {
      if (current === undefined || current.role !== piece.role) {
        current = { role: piece.role, content: [] };
        turns.push(current);
      }
      target = current.content;
      last = lastTurns;
    }
    const image = piece.image;
    if (image !== undefined) {
      target.push({
        type: "image",
        source: {
          type: "base64",
          media_type: image.mediaType,
          data: image.data,
        },
      });
    }
    const text: ContentBlock = { type: "text", text: piece.text };
    target.push(text);
    last.set(piece.section, text);
  }
  if (leading.length > 0) {
    const first = turns[0];
    if (first !== undefined && first.role === "user") {
      first.content.unshift(...leading);
    } else turns.unshift({ role: "user", content: leading });
  }
  const last = new Map(lastSystem);
  for (const [section, block] of lastLeading) last.set(section, block);
  for (const [section, block] of lastTurns) last.set(section, block);
  return { system, turns, last };
}

/** Puts the marker on the last block each breakpoint section contributes. */
export function markBreakpoints(
  last: ReadonlyMap<SectionName, ContentBlock>,
  breakpoints: ReadonlySet<SectionName>,
  cacheControl: EphemeralCacheControl,
): void {
  for (const section of breakpoints) {
    const block = last.get(section);
    if (block !== undefined) block.cache_control = { ...cacheControl };
  }
}
