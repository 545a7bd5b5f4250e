// The compile walk shared by render() and every message format: one pass
// over the include tree per section, O(entries + visitors) in all.
import type { Entry, Role } from "./entry.ts";
import { FileEntry } from "./file_entry.ts";
import { ImageEntry } from "./image_entry.ts";
import type { ContentBlock, EphemeralCacheControl } from "./message.ts";
import { SECTION_NAMES, type SectionName } from "./section.ts";

/** The parts of a context the compile walk reads (structurally a `Context`). */
export interface CompileSource
  extends
    Readonly<Record<SectionName, { readonly entries: readonly Entry[] }>> {
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
  const seen = new Set<string>();
  for (const section of SECTION_NAMES) {
    if (!sections.has(section)) continue;
    const order = ORDER[section];
    const visited = new Set<CompileSource>();
    const emit = (owner: CompileSource): void => {
      for (const entry of owner[section].entries) {
        if (order !== "self-only") {
          const identity = entry.identity();
          if (seen.has(identity)) continue;
          seen.add(identity);
        }
        const piece = compileEntry(entry, section, owner);
        if (piece !== undefined) pieces.push(piece);
      }
    };
    const visit = (owner: CompileSource): void => {
      if (visited.has(owner)) return;
      visited.add(owner);
      if (order === "self-only") return emit(owner);
      if (order === "self-first") emit(owner);
      for (const visitor of owner.visitors) visit(visitor);
      if (order === "visitors-first") emit(owner);
    };
    visit(root);
  }
  return pieces;
}

function compileEntry(
  entry: Entry,
  section: SectionName,
  owner: CompileSource,
): Piece | undefined {
  if (entry instanceof ImageEntry) {
    return {
      section,
      owner,
      entry,
      role: entry.role,
      text: entry.compile(),
      image: entry,
    };
  }
  let body: string;
  let role: Role;
  if (entry instanceof FileEntry) {
    const snapshot = entry.read();
    body = snapshot.text;
    role = snapshot.role;
  } else {
    body = entry.compile();
    role = entry.role;
  }
  if (body.trim() === "") return undefined; // never an empty block
  const text = entry.name === undefined ? body : `# ${entry.name}\n${body}`;
  return { section, owner, entry, role, text };
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

/** Plain text: section banners, visitor labels, entries joined by a blank line. */
export function renderPieces(
  root: CompileSource,
  pieces: readonly Piece[],
): string {
  const sections: string[] = [];
  let i = 0;
  while (i < pieces.length) {
    const section = pieces[i]!.section;
    const groups: string[] = [];
    while (i < pieces.length && pieces[i]!.section === section) {
      const owner = pieces[i]!.owner;
      const texts: string[] = [];
      while (
        i < pieces.length && pieces[i]!.section === section &&
        pieces[i]!.owner === owner
      ) {
        texts.push(pieces[i]!.text);
        i += 1;
      }
      const body = texts.join("\n\n");
      groups.push(
        owner === root ? body : `${visitorLabel(section, owner.name)}\n${body}`,
      );
    }
    const [prefix, postfix] = BANNER[section];
    const parts = [prefix, groups.join("\n\n"), postfix].filter((p) =>
      p !== ""
    );
    sections.push(parts.join("\n"));
  }
  return sections.join("\n\n");
}

/** A block with the section it came from (undefined for inserted ones). */
export interface Tagged {
  readonly block: ContentBlock;
  readonly section: SectionName | undefined;
}

/** Fresh blocks for a piece: text, or image then caption. */
export function blocksOf(piece: Piece): Tagged[] {
  const section = piece.section;
  if (piece.image === undefined) {
    return [{ block: { type: "text", text: piece.text }, section }];
  }
  return [
    {
      block: {
        type: "image",
        source: {
          type: "base64",
          media_type: piece.image.mediaType,
          data: piece.image.data,
        },
      },
      section,
    },
    { block: { type: "text", text: piece.text }, section },
  ];
}

/** A turn under construction. */
export interface Turn<R extends Role = Role> {
  readonly role: R;
  readonly blocks: Tagged[];
}

/** Appends blocks as a turn, merging with the previous turn of the same role. */
export function pushTurn<R extends Role>(
  turns: Turn<R>[],
  role: R,
  blocks: readonly Tagged[],
): void {
  const last = turns.at(-1);
  if (last !== undefined && last.role === role) {
    for (const block of blocks) last.blocks.push(block);
  } else turns.push({ role, blocks: [...blocks] });
}

/** System text blocks and user/assistant turns of a provider request. */
export interface SystemTextLayout {
  /** Blocks of the system-role text entries, in order. */
  readonly system: Tagged[];
  /** User and assistant turns, same-role neighbours merged. */
  readonly turns: Turn<"user" | "assistant">[];
}

/**
 * Lays pieces out for provider APIs whose system part holds text only:
 * system-role text goes to `system`; system-role images (with their
 * captions) move to the start of the first user turn, or into a new leading
 * user turn; other roles become turns, same-role neighbours merged.
 */
export function splitSystemText(pieces: readonly Piece[]): SystemTextLayout {
  const system: Tagged[] = [];
  const leading: Tagged[] = [];
  const turns: Turn<"user" | "assistant">[] = [];
  for (const piece of pieces) {
    const blocks = blocksOf(piece);
    if (piece.role === "system") {
      if (piece.image === undefined) system.push(...blocks);
      else leading.push(...blocks);
    } else pushTurn(turns, piece.role, blocks);
  }
  if (leading.length > 0) {
    const first = turns[0];
    if (first !== undefined && first.role === "user") {
      first.blocks.unshift(...leading);
    } else turns.unshift({ role: "user", blocks: leading });
  }
  return { system, turns };
}

/** Puts the marker on the last block each breakpoint section contributes. */
export function markBreakpoints(
  ordered: Iterable<Tagged>,
  breakpoints: ReadonlySet<SectionName>,
  cacheControl: EphemeralCacheControl,
): void {
  if (breakpoints.size === 0) return;
  const last = new Map<SectionName, ContentBlock>();
  for (const { block, section } of ordered) {
    if (section !== undefined && breakpoints.has(section)) {
      last.set(section, block);
    }
  }
  for (const block of last.values()) block.cache_control = { ...cacheControl };
}

/** Yields the tagged blocks of a system list and turns, in request order. */
export function* inOrder(
  system: readonly Tagged[],
  turns: readonly Turn[],
): Generator<Tagged> {
  yield* system;
  for (const turn of turns) yield* turn.blocks;
}
