/**
 * The context: six ordered sections, included visitor contexts, and the
 * compilers to text and to provider messages.
 *
 * @module
 */
import { collect, layOut, markBreakpoints, renderText } from "./_compile.ts";
import { resolveOptions, sectionName } from "./_options.ts";
import {
  type AnthropicMessages,
  type AnthropicOptions,
  buildAnthropic,
  DEFAULT_FILLER_TEXT,
} from "./anthropic.ts";
import { attachEntry, detachEntry, type Entry } from "./entry.ts";
import { IncludeCycleError, UnknownEntryError } from "./errors.ts";
import { IdPool } from "./id_pool.ts";
import type { Message, MessageOptions } from "./message.ts";
import {
  buildOpenAI,
  type OpenAIMessage,
  type OpenAIOptions,
} from "./openai.ts";
import {
  Section,
  SECTION_NAMES,
  sectionEntries,
  type SectionName,
  type SectionNameInput,
} from "./section.ts";
import { StringEntry } from "./string_entry.ts";

/** Options of {@linkcode Context}. */
export interface ContextOptions {
  /** Pool for the context's id and the entries it creates; default {@linkcode IdPool.shared}. */
  readonly ids?: IdPool;
}

/** Options of {@linkcode Context.remember}. */
export interface RememberOptions {
  /** Store `Learned: TEXT` as a new string entry instead of the entry itself. */
  readonly summarize?: boolean;
}

/** Options of {@linkcode Context.redact}. */
export interface RedactOptions {
  /** Leave this text in the entry's place (keeping its name and role). */
  readonly tombstone?: string;
}

/**
 * Something that compacts a context, e.g. by summarising old convo entries.
 * `Context.compact()` hands it the context and returns what it returns.
 */
export interface Compactor<T = void> {
  /**
   * Compacts the context (typically by editing its sections).
   *
   * @param context The context to compact.
   * @returns Whatever the compactor reports.
   */
  compact(context: Context): T;
}

/**
 * A context: entries in six sections compiled in a fixed order, plus other
 * contexts included as visitors and interleaved per section (foundation and
 * topic: self then visitors; focus, convo and attention: visitors then self;
 * step: self only). Includes recurse depth first; an entry whose content is
 * already compiled anywhere in the tree is skipped (step excepted). Step is
 * volatile: every compile clears it unless `clearVolatile: false`.
 *
 * @example
 * ```ts
 * import { Context, StringEntry } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const shared = new Context("security");
 * shared.foundation.add("Always validate user input.");
 * const ctx = new Context("agent");
 * ctx.foundation.add("You are a helpful assistant.");
 * ctx.convo.add(new StringEntry("Review PR #42.", { role: "user" }));
 * ctx.include(shared);
 * const { system, messages } = ctx.toAnthropic({ cacheBreakpoints: ["foundation"], cacheTtl: "1h" });
 * assert.deepEqual(system.map((b) => b.text), ["You are a helpful assistant.", "Always validate user input."]);
 * assert.deepEqual(system[1]?.cache_control, { type: "ephemeral", ttl: "1h" });
 * assert.deepEqual(messages, [{ role: "user", content: [{ type: "text", text: "Review PR #42." }] }]);
 * ```
 */
export class Context {
  /** The context's short id. */
  readonly id: string;
  /** The context's name (shown in visitor labels). */
  readonly name: string;
  /** The pool for the context's own entries. */
  readonly ids: IdPool;
  /** Core identity and rules; self then visitors. */
  readonly foundation: Section;
  /** The current task or skill; visitors then self. */
  readonly focus: Section;
  /** What is being worked on; self then visitors. */
  readonly topic: Section;
  /** Conversation history (append-only between compactions); visitors then self. */
  readonly convo: Section;
  /** Current command output; self only, cleared after each compile. */
  readonly step: Section;
  /** Reminders; visitors then self. */
  readonly attention: Section;
  readonly #visitors: Context[] = [];

  /**
   * Creates an empty context.
   *
   * @param name Human-readable name.
   * @param options The id pool.
   * @throws {TypeError} When `name` is not a string.
   */
  constructor(name: string, options: ContextOptions = {}) {
    if (typeof name !== "string") {
      throw new TypeError("Cannot create a context: name must be a string");
    }
    this.ids = options.ids ?? IdPool.shared;
    this.id = this.ids.next();
    this.name = name;
    const opts = { ids: this.ids };
    this.foundation = new Section("foundation", opts);
    this.focus = new Section("focus", opts);
    this.topic = new Section("topic", opts);
    this.convo = new Section("convo", opts);
    this.step = new Section("step", opts);
    this.attention = new Section("attention", opts);
  }

  /** The included contexts, in include order (a live read-only view). */
  get visitors(): readonly Context[] {
    return this.#visitors;
  }

  /**
   * Looks a section up by name.
   *
   * @param name A section name in any case.
   * @returns The section.
   * @throws {CompileOptionsError} When the name is not one of the six.
   */
  section(name: SectionNameInput): Section {
    return this[sectionName(name, "section()")];
  }

  /**
   * Includes another context; its sections are interleaved with this one's
   * (and its own visitors with them, depth first). Including a context
   * twice does nothing.
   *
   * @param visitor The context to include.
   * @throws {IncludeCycleError} When `visitor` is this context or includes it.
   */
  include(visitor: Context): void {
    if (!(visitor instanceof Context)) {
      throw new TypeError("Cannot include this value: it is not a Context");
    }
    if (visitor === this || reaches(visitor, this)) {
      throw new IncludeCycleError(
        "include_cycle",
        `Cannot include context '${visitor.name}' in '${this.name}': ${
          visitor === this
            ? "a context cannot include itself"
            : `'${visitor.name}' already includes '${this.name}'`
        }`,
      );
    }
    if (!this.#visitors.includes(visitor)) this.#visitors.push(visitor);
  }

  /**
   * Removes an included context.
   *
   * @param visitor The context to remove.
   * @returns `true` when it was included.
   */
  exclude(visitor: Context): boolean {
    const index = this.#visitors.indexOf(visitor);
    if (index < 0) return false;
    this.#visitors.splice(index, 1);
    return true;
  }

  /**
   * Renders every entry (any role) as plain text: section banners, visitor
   * labels, `# NAME` headers, images as `[Image: NAME]`, parts joined by a
   * blank line. An empty context renders `""`.
   *
   * @param options `clearVolatile` (default `true`) clears step afterwards.
   * @returns The text.
   */
  render(options: { readonly clearVolatile?: boolean } = {}): string {
    const text = renderText(this);
    if (options.clearVolatile !== false) this.step.clear();
    return text;
  }

  /**
   * Compiles to provider-neutral messages: first a `system` message holding
   * the system-role entries (one block per entry; images as an image block
   * and a caption), then the other entries as messages in compile order,
   * consecutive same-role entries merged into one message.
   *
   * @param options Breakpoints, TTL, sections, clearVolatile.
   * @returns The messages; the first is always the system message (possibly with no blocks).
   * @throws {CompileOptionsError} On an unknown section, more than 4 breakpoints or another TTL.
   */
  toMessages(options: MessageOptions = {}): Message[] {
    const resolved = resolveOptions(options);
    const { system, turns, last } = layOut(
      collect(this, resolved.sections),
      false,
    );
    markBreakpoints(last, resolved.breakpoints, resolved.cacheControl);
    if (resolved.clearVolatile) this.step.clear();
    return [{ role: "system", content: system }, ...turns];
  }

  /**
   * Compiles to the `system` and `messages` fields of an Anthropic Messages
   * request, valid as is: text-only system blocks; images in user content
   * (system images move to the first user message); roles alternate from
   * `user` (same-role neighbours merged, a `fillerText` user turn inserted
   * when the messages would be empty or start with `assistant`); at most 4
   * `cache_control` markers, each on the last block its section contributes.
   *
   * @param options Breakpoints, TTL, sections, clearVolatile, fillerText.
   * @returns `{ system, messages }`.
   * @throws {CompileOptionsError} On an unknown section, more than 4 breakpoints or another TTL.
   */
  toAnthropic(options: AnthropicOptions = {}): AnthropicMessages {
    const resolved = resolveOptions(options);
    const out = buildAnthropic(
      collect(this, resolved.sections),
      resolved,
      options.fillerText ?? DEFAULT_FILLER_TEXT,
    );
    if (resolved.clearVolatile) this.step.clear();
    return out;
  }

  /**
   * Compiles to Chat Completions messages, valid as is: a text-only system
   * (or developer) message, images as `image_url` data URLs in user
   * messages, other roles as messages. Breakpoint options are validated
   * like the other formats but emit nothing (OpenAI caches automatically).
   *
   * @param options Breakpoints, TTL, sections, clearVolatile, systemRole.
   * @returns The messages.
   * @throws {CompileOptionsError} On an unknown section, more than 4 breakpoints or another TTL.
   */
  toOpenAI(options: OpenAIOptions = {}): OpenAIMessage[] {
    const resolved = resolveOptions(options);
    const out = buildOpenAI(
      collect(this, resolved.sections),
      options.systemRole ?? "system",
    );
    if (resolved.clearVolatile) this.step.clear();
    return out;
  }

  /**
   * Keeps an entry in convo. An entry of step moves (the same object, same
   * id) so clearing step no longer touches it; an entry already in convo
   * stays; any other entry object is added to convo. A string is an entry's
   * id, as in {@linkcode Context.redact} (to keep new text, use
   * `ctx.convo.add(text)`). With `summarize`, a new entry `Learned: TEXT`
   * (same name and role) is stored instead and the original stays where it
   * is.
   *
   * @param entry The entry, or the id of one of this context's entries.
   * @param options `summarize`.
   * @returns The entry now in convo.
   * @throws {UnknownEntryError} When no entry of this context has the id.
   *
   * @example
   * ```ts
   * import { Context } from "@loom/loom";
   * import assert from "node:assert/strict";
   * const ctx = new Context("agent");
   * const output = ctx.step.add("tests pass");
   * assert.equal(ctx.remember(output.id!), output);
   * ctx.render(); // clears step
   * assert.deepEqual(ctx.convo.entries, [output]);
   * ```
   */
  remember(entry: Entry | string, options: RememberOptions = {}): Entry {
    let kept: Entry = typeof entry === "string"
      ? this.#own(entry, "remember")
      : entry;
    if (options.summarize === true) {
      const text = kept.compile();
      kept = new StringEntry(
        text.startsWith("Learned: ") ? text : `Learned: ${text}`,
        { ids: this.ids, role: kept.role, ...nameOf(kept) },
      );
    }
    if (this.convo.entries.includes(kept)) return kept;
    const index = this.step.entries.indexOf(kept);
    if (index >= 0) {
      sectionEntries(this.step).splice(index, 1);
      detachEntry(kept, true);
    }
    this.convo.add(kept);
    return kept;
  }

  /**
   * Removes an entry from this context's own sections and releases its id.
   * With a tombstone, a string entry with the tombstone text and the old
   * entry's name and role takes its place.
   *
   * @param entry The entry object, or its id.
   * @param options `tombstone`.
   * @returns The entry removed.
   * @throws {UnknownEntryError} When none of this context's sections holds
   *   the entry (or an entry with the id).
   */
  redact(entry: Entry | string, options: RedactOptions = {}): Entry {
    const target = typeof entry === "string"
      ? this.#own(entry, "redact")
      : entry;
    for (const name of SECTION_NAMES) {
      const index = this[name].entries.indexOf(target);
      if (index < 0) continue;
      const entries = sectionEntries(this[name]);
      if (options.tombstone === undefined) {
        entries.splice(index, 1);
      } else {
        const tombstone = new StringEntry(options.tombstone, {
          ids: this.ids,
          role: target.role,
          ...nameOf(target),
        });
        attachEntry(tombstone, this.ids);
        entries[index] = tombstone;
      }
      detachEntry(target);
      return target;
    }
    throw new UnknownEntryError(
      "unknown_entry",
      `Cannot redact ${
        target.id === undefined ? "an entry" : `entry ${target.id}`
      }${
        target.name === undefined ? "" : ` (${target.name})`
      }: it is not in context ${this.name}`,
    );
  }

  #own(id: string, verb: string): Entry {
    const found = this.get(id);
    if (found === undefined) {
      throw new UnknownEntryError(
        "unknown_entry",
        `Cannot ${verb} entry ${id}: no entry of context ${this.name} has that id`,
      );
    }
    return found;
  }

  /**
   * Finds an entry of this context's own sections by id.
   *
   * @param id A short id.
   * @returns The entry, or `undefined`.
   */
  get(id: string): Entry | undefined {
    for (const entry of this.entries()) {
      if (entry.id === id) return entry;
    }
    return undefined;
  }

  /**
   * This context's own entries in section order: a read-only array, like
   * {@linkcode Section.entries} (a snapshot; later changes do not show).
   *
   * @param section Only this section (any case).
   * @returns The entries.
   * @throws {CompileOptionsError} When the section name is unknown.
   */
  entries(section?: SectionNameInput): readonly Entry[] {
    const names: readonly SectionName[] = section === undefined
      ? SECTION_NAMES
      : [sectionName(section, "entries()")];
    return Object.freeze(names.flatMap((name) => this[name].entries));
  }

  /**
   * Runs a compactor over this context.
   *
   * @param compactor The compactor.
   * @returns What the compactor returns.
   */
  compact<T>(compactor: Compactor<T>): T {
    return compactor.compact(this);
  }

  /**
   * A short description.
   *
   * @returns `Context(ID, NAME, visitors=N)`.
   */
  toString(): string {
    return `Context(${this.id}, ${this.name}, visitors=${this.#visitors.length})`;
  }
}

function nameOf(entry: Entry): { name?: string } {
  return entry.name === undefined ? {} : { name: entry.name };
}

/** Whether `to` is reachable from `from` through includes. */
function reaches(from: Context, to: Context): boolean {
  const stack = [from];
  const seen = new Set<Context>();
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (next === to) return true;
    if (seen.has(next)) continue;
    seen.add(next);
    for (const visitor of next.visitors) stack.push(visitor);
  }
  return false;
}
