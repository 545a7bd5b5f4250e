/**
 * The briefing compiler: what the model sees on each turn of a slice, under
 * the `legacy` or the `bounded` context policy, compiled through
 * `lib/context` and converted into a provider-neutral {@linkcode TurnRequest}.
 *
 * ## API (used by the slice runner)
 *
 * ```text
 * const briefing = new Briefing({ policy, intent, instructions, results, archive?, cacheTtl?, limits? });
 * briefing.record(actionRecord);                  // after every step, refusals included
 * const request = briefing.request({ phase, tool, candidates?, lookupAnswers?, notes? });
 * briefing.history;        // HistorySource for LookupSession (bounded), undefined under legacy
 * briefing.checkpoints;    // retirement checkpoints so far
 * briefing.archivedCount;  // events retired from the tail (the checkpoint line's N)
 * briefing.workingState;   // WorkingStateJson from typed reports (both policies)
 * briefing.lastTurn;       // bytes, retained prefix, retired events, dropped answers of the last request
 * ```
 *
 * `record()` throws {@linkcode ArchiveCapacityError} when the archive is
 * full (bounded); the briefing then refuses every later `request()` with the
 * same error, and nothing archived is lost. `request()` throws
 * {@linkcode RequestCeilingError} when the mandatory content of a bounded
 * request cannot fit the ceiling.
 *
 * ## Layout (both policies)
 *
 * | section    | role   | content                                                      |
 * | ---------- | ------ | ------------------------------------------------------------ |
 * | foundation | system | instructions, tool guidance                                  |
 * | focus      | user   | `Intent:` and the intent, intact             (breakpoint)    |
 * | topic      | user   | checkpoint block (bounded) / omitted-entries line (legacy)   |
 * | convo      | user   | events header, events and state lines / transcript (breakpt) |
 * | step       | user   | stage, candidates, store counts                              |
 * | attention  | user   | lookup answers, lookup budget reminder, notes                |
 *
 * The run's one tool (identical in every request) comes first in the
 * provider's cache prefix, so tools, system and intent share the intent's
 * breakpoint. Between checkpoints (bounded) and rolls (legacy, in batches of
 * 32 entries) convo only grows at its end, so each request begins with the
 * previous request's bytes up to the end of its last retained block's text
 * (an event, a state line or a transcript entry:
 * {@linkcode TurnInfo.retainedPrefixBytes}); its breakpoint moves to the
 * new last block, and when the tail grew by more than Anthropic's 20-block
 * lookback the previous one is kept as well (at most 4 breakpoints).
 *
 * ## The bounded briefing caches like a transcript
 *
 * Between checkpoints a bounded request is the previous request plus what
 * was recorded since, then one short volatile line. The checkpoint block
 * holds the checkpoint line and, in full, the working state of every event
 * retired so far (recent artifacts included); it changes only when events
 * retire, so it belongs to the cached prefix. The events after it arrive in
 * order, each with its own artifacts, and each event that changed the
 * latest revision, test or refusal is followed by a state line: the working
 * state after it, but for the artifacts. The current working state is the
 * last state line, or the checkpoint's when no retained event changed it.
 * Only the stage line (stage, candidates, store counts: a few dozen tokens)
 * changes on every request, where the whole working state used to be about
 * 700 tokens after the last breakpoint. The layout was chosen by dollars
 * (docs/cost.md): state lines in the tail cost less than the same state in
 * the volatile end on both long recordings.
 *
 * ## Bounded sizing
 *
 * Retirement triggers when the tail holds more than 64 events or the whole
 * request (lookup answers included) passes 32 KiB; it then retires the
 * oldest events in batches of 8 until the request is ≤ 16 KiB and the tail
 * ≤ 64 (or the tail is empty), which counts as one checkpoint. If the
 * request still passes 64 KiB, whole lookup answers are replaced by
 * `{"lookup_failed": "answer_too_large: …"}`, largest first. If it still
 * does not fit, {@linkcode RequestCeilingError}.
 *
 * @module
 */
import { Context } from "../context/context.ts";
import type { Entry } from "../context/entry.ts";
import { StringEntry } from "../context/string_entry.ts";
import type { ResultStore } from "../store/result_store.ts";
import type { HistorySource } from "../reference/lookup_session.ts";
import type { ActionRecord, ExecutionReport } from "./report.ts";
import { serializeEvent, toEvent } from "./event.ts";
import { ArchiveCapacityError, EventArchive } from "./event_archive.ts";
import { WorkingState, type WorkingStateJson } from "./working_state.ts";
import { RequestCeilingError } from "./request_ceiling_error.ts";
import { placeBreakpoints, type PlacedBreakpoint } from "./_breakpoints.ts";
import {
  boundedStageText,
  checkpointText,
  EVENTS_HEADER,
  omittedLine,
  stateLine,
  toolGuidance,
  transcriptEntry,
} from "./_text.ts";
import {
  serializeTurnRequest,
  stableStringify,
  textEndOffset,
  type TurnRequest,
} from "./turn_request.ts";
import {
  type BriefingLimits,
  type BriefingOptions,
  type ContextPolicy,
  DEFAULT_BRIEFING_LIMITS,
  type TurnInfo,
  type TurnOptions,
} from "./briefing_options.ts";
import { toTurnBlock, toTurnMessage } from "./_turn_blocks.ts";
import type { SectionName } from "../context/section.ts";
import {
  type BlockShare,
  type DescriptorText,
  escapedBytes,
  partBytes,
  plainShare,
  textShare,
} from "./part_bytes.ts";

// What it is configured with lives beside it; importers find it here too.
export * from "./briefing_options.ts";

interface Retained {
  readonly record: ActionRecord;
  /** Text of the item's last block (its state line, else its event). */
  readonly text: string;
  /** The item's blocks: the event or transcript entry, then a state line. */
  readonly entries: readonly Entry[];
}

interface Built {
  readonly request: TurnRequest;
  readonly json: string;
  readonly bytes: number;
  /** The request's last cache breakpoint. */
  readonly breakpoint: PlacedBreakpoint | undefined;
}

const encoder = new TextEncoder();

/**
 * Builds the turn requests of one slice run under a context policy.
 *
 * @example
 * ```ts
 * import { ResultStore } from "@loom/loom/reference";
 * import { Briefing } from "./briefing.ts";
 * import { requestBytes } from "./turn_request.ts";
 * import assert from "node:assert/strict";
 * const briefing = new Briefing({
 *   policy: "bounded",
 *   intent: "Fix the failing test",
 *   instructions: "You are a careful engineer",
 *   results: new ResultStore(),
 * });
 * briefing.record({
 *   sequence: 1, action: "tests.run", arguments: {},
 *   report: { kind: "refused", code: "no_tests", reason: "No test command is configured" },
 * });
 * const request = briefing.request({
 *   phase: "selection",
 *   tool: { name: "select_action", description: "Pick the next action", input_schema: { type: "object" } },
 *   candidates: ["repository.inspect"],
 * });
 * assert.equal(request.tool_choice.name, "select_action");
 * assert.ok(requestBytes(request) <= 65_536);
 * assert.equal(briefing.history?.count, 1);
 * ```
 */
export class Briefing {
  readonly #policy: ContextPolicy;
  readonly #limits: BriefingLimits;
  readonly #results: ResultStore;
  readonly #archive: EventArchive | undefined;
  readonly #cacheTtl: "5m" | "1h" | undefined;
  readonly #ctx: Context;
  readonly #state = new WorkingState();
  /** Bounded: the working state of the events retired from the tail. */
  readonly #retiredState = new WorkingState();
  readonly #retained: Retained[] = [];
  readonly #intentText: string;
  #topic: Entry | undefined;
  #header: Entry | undefined;
  #lastSequence = 0;
  #archived = 0;
  #omitted = 0;
  #checkpoints = 0;
  #failure: ArchiveCapacityError | undefined;
  #lastTurn: TurnInfo | undefined;
  /** Counts rolls and retirements: a breakpoint of an older epoch is gone. */
  #epoch = 0;
  #breakpoint: (PlacedBreakpoint & { readonly epoch: number }) | undefined;
  /** What each entry's text holds of descriptors and inline results. */
  readonly #carved = new WeakMap<Entry, Omit<BlockShare, "section">>();

  /**
   * Creates the briefing of one run.
   *
   * @param options Policy, intent, instructions, result store and options.
   * @throws {TypeError} When an archive is given under the legacy policy, or
   *   the policy is unknown.
   * @throws {RangeError} When a limit is not a positive integer.
   */
  constructor(options: BriefingOptions) {
    if (options.policy !== "legacy" && options.policy !== "bounded") {
      throw new TypeError(
        `Cannot build briefings for policy ${
          JSON.stringify(options.policy)
        }: policies are legacy and bounded`,
      );
    }
    if (options.policy === "legacy" && options.archive !== undefined) {
      throw new TypeError(
        "Cannot use an event archive under the legacy policy: only bounded briefings archive events",
      );
    }
    const limits = { ...DEFAULT_BRIEFING_LIMITS, ...options.limits };
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isSafeInteger(value) || value < 1) {
        throw new RangeError(
          `Cannot use briefing limit ${name} ${value}: limits are positive integers`,
        );
      }
    }
    this.#policy = options.policy;
    this.#limits = limits;
    this.#results = options.results;
    this.#cacheTtl = options.cacheTtl;
    const bounded = options.policy === "bounded";
    this.#archive = bounded ? options.archive ?? new EventArchive() : undefined;
    this.#archived = this.#archive?.count ?? 0;
    this.#lastSequence = this.#archive?.lastSequence ?? 0;

    this.#ctx = new Context(`briefing-${options.policy}`);
    this.#ctx.foundation.add(
      new StringEntry(options.instructions, { role: "system" }),
    );
    this.#ctx.foundation.add(
      new StringEntry(toolGuidance(bounded), { role: "system" }),
    );
    this.#intentText = `Intent:\n${options.intent}`;
    this.#ctx.focus.add(new StringEntry(this.#intentText, { role: "user" }));
    if (bounded) {
      this.#topic = this.#ctx.topic.add(
        new StringEntry(this.#checkpointText(), { role: "user" }),
      );
      this.#header = this.#ctx.convo.add(
        new StringEntry(EVENTS_HEADER, { role: "user" }),
      );
    }
  }

  /** The context policy. */
  get policy(): ContextPolicy {
    return this.#policy;
  }

  /** The event archive as a lookup history source; `undefined` under legacy. */
  get history(): (HistorySource & EventArchive) | undefined {
    return this.#archive;
  }

  /** Retirement checkpoints so far (always 0 under legacy). */
  get checkpoints(): number {
    return this.#checkpoints;
  }

  /** Events retired from the tail, as the checkpoint line counts them. */
  get archivedCount(): number {
    return this.#archived;
  }

  /** Legacy transcript entries rolled out of the window. */
  get omittedCount(): number {
    return this.#omitted;
  }

  /** Events (bounded) or transcript entries (legacy) currently retained. */
  get retainedCount(): number {
    return this.#retained.length;
  }

  /** The working state derived from the typed reports recorded so far. */
  get workingState(): WorkingStateJson {
    return this.#state.toJSON();
  }

  /** Measurements of the last request, or `undefined` before the first. */
  get lastTurn(): TurnInfo | undefined {
    return this.#lastTurn;
  }

  /**
   * Records a finished step (refusals included).
   *
   * @param record The action record; sequences must increase.
   * @throws {RangeError} When the sequence does not increase.
   * @throws {ArchiveCapacityError} When the bounded archive is full; nothing
   *   changes and every later request fails with the same error.
   */
  record(record: ActionRecord): void {
    if (this.#failure !== undefined) throw this.#failure;
    if (
      !Number.isSafeInteger(record.sequence) ||
      record.sequence <= this.#lastSequence
    ) {
      throw new RangeError(
        `Cannot record step ${record.sequence}: sequences must increase and the last one is ${this.#lastSequence}`,
      );
    }
    if (this.#archive !== undefined) {
      const event = toEvent(record);
      try {
        this.#archive.append(event);
      } catch (error) {
        if (error instanceof ArchiveCapacityError) this.#failure = error;
        throw error;
      }
      this.#state.apply(record);
      const line = serializeEvent(event);
      const texts = [line];
      if (record.report.kind !== "inspected") {
        texts.push(stateLine(record.sequence, this.#state.toJSON()));
      }
      const artifacts = event.artifacts.map((a) => ({
        json: stableStringify(a),
      }));
      this.#retain(record, texts, textShare(line, artifacts));
    } else {
      this.#state.apply(record);
      const entry = transcriptEntry(record, this.#limits.entryBytes);
      this.#retain(
        record,
        [entry],
        textShare(entry, legacyDescriptors(record.report)),
      );
      this.#rollTranscript();
    }
    this.#lastSequence = record.sequence;
  }

  /**
   * Rebuilds the state an earlier run of the same slice reached (a resumed
   * session): records every action record again, then, under the bounded
   * policy, retires the `archived` oldest events from the tail and takes
   * over the checkpoint count. The next request is then byte-identical to
   * the one the earlier run would have built. Only on a fresh briefing.
   *
   * @param records The earlier run's action records, in sequence order.
   * @param state Events retired from the tail and checkpoints so far
   *   (both 0 under legacy, where records alone determine the transcript).
   * @throws {TypeError} When the briefing already recorded or requested.
   * @throws {RangeError} When `archived` exceeds the recorded events.
   *
   * @example
   * ```ts
   * import { ResultStore } from "@loom/loom/reference";
   * import { Briefing } from "./briefing.ts";
   * import assert from "node:assert/strict";
   * const options = { policy: "bounded" as const, intent: "i", instructions: "x", results: new ResultStore() };
   * const records = [1, 2, 3].map((sequence) => ({
   *   sequence, action: "tests.run", arguments: {},
   *   report: { kind: "refused" as const, code: "no_tests", reason: "No test command" },
   * }));
   * const briefing = new Briefing(options);
   * briefing.restore(records, { archived: 2, checkpoints: 1 });
   * assert.equal(briefing.archivedCount, 2);
   * assert.equal(briefing.retainedCount, 1);
   * assert.equal(briefing.checkpoints, 1);
   * ```
   */
  restore(
    records: readonly ActionRecord[],
    state: { readonly archived: number; readonly checkpoints: number },
  ): void {
    if (
      this.#retained.length > 0 || this.#lastTurn !== undefined ||
      this.#lastSequence !== (this.#archive?.lastSequence ?? 0)
    ) {
      throw new TypeError(
        "Cannot restore a briefing that already recorded or built a request",
      );
    }
    for (const record of records) this.record(record);
    if (this.#archive === undefined) return;
    const retire = state.archived - this.#archived;
    if (
      !Number.isSafeInteger(retire) || retire < 0 ||
      retire > this.#retained.length
    ) {
      throw new RangeError(
        `Cannot restore ${state.archived} archived events: ${this.#retained.length} events are in the tail`,
      );
    }
    if (retire > 0) this.#retire(retire);
    this.#checkpoints = state.checkpoints;
  }

  /**
   * Builds the request of one model turn.
   *
   * @param turn Phase, tool, candidates, lookup answers and notes.
   * @returns The turn request.
   * @throws {ArchiveCapacityError} After the archive overflowed.
   * @throws {RequestCeilingError} When bounded mandatory content cannot fit.
   */
  request(turn: TurnOptions): TurnRequest {
    if (this.#failure !== undefined) throw this.#failure;
    const answers = (turn.lookupAnswers ?? []).map((a) => stableStringify(a));
    const dropped: number[] = [];
    let built = this.#build(turn, answers);
    let retired = 0;
    if (this.#policy === "bounded") {
      const limits = this.#limits;
      if (
        this.#retained.length > limits.maxTailEvents ||
        built.bytes > limits.retireAboveBytes
      ) {
        while (
          this.#retained.length > 0 &&
          (this.#retained.length > limits.maxTailEvents ||
            built.bytes > limits.retireTargetBytes)
        ) {
          retired += this.#retireBatch();
          built = this.#build(turn, answers);
        }
        if (retired > 0) this.#checkpoints += 1;
      }
      if (built.bytes > limits.ceilingBytes) {
        const order = answers.map((a, i) =>
          [encoder.encode(a).byteLength, i] as const
        )
          .sort((x, y) => y[0] - x[0] || y[1] - x[1]);
        for (const [size, index] of order) {
          if (built.bytes <= limits.ceilingBytes) break;
          answers[index] = stableStringify({
            lookup_failed:
              `answer_too_large: this answer of ${size} bytes was dropped to keep the request within ${limits.ceilingBytes} bytes`,
          });
          dropped.push(index);
          built = this.#build(turn, answers);
        }
      }
      if (built.bytes > limits.ceilingBytes) {
        this.#clearVolatile();
        const limit = limits.ceilingBytes;
        throw new RequestCeilingError(
          "request_too_large",
          `Cannot build a bounded request within ${limit} bytes: its mandatory content alone takes ${built.bytes} bytes with every event retired and every lookup answer dropped`,
          { bytes: built.bytes, limit },
        );
      }
    }
    // Measured while the volatile sections still hold this request's blocks.
    const parts = partBytes(built.request, this.#shares(built.request));
    this.#clearVolatile();
    if (built.breakpoint !== undefined) {
      this.#breakpoint = { ...built.breakpoint, epoch: this.#epoch };
    }
    this.#lastTurn = {
      bytes: built.bytes,
      retainedPrefixBytes: this.#retainedPrefix(built.request),
      retired,
      droppedAnswers: dropped,
      retained: this.#retained.length,
      parts,
    };
    return built.request;
  }

  /**
   * One share per block of the request just built: the section of each
   * entry in compile order, with what its text holds of descriptors and
   * inline results. The compiler makes one block per entry; should it
   * ever merge equal texts, blocks are matched to entries by text.
   */
  #shares(request: TurnRequest): BlockShare[] {
    const entries: { text: string; share: BlockShare }[] = [];
    for (const section of SHARE_SECTIONS) {
      for (const entry of this.#ctx[section].entries) {
        const carved = this.#carved.get(entry);
        entries.push({
          text: (entry as StringEntry).text,
          share: carved === undefined
            ? plainShare(section)
            : { section, ...carved },
        });
      }
    }
    const blocks = [
      ...request.system,
      ...request.messages.flatMap((m) => m.content),
    ];
    if (blocks.length === entries.length) return entries.map((e) => e.share);
    let next = 0;
    return blocks.map((block) => {
      const found = entries.findIndex((e, i) =>
        i >= next && e.text === block.text
      );
      if (found < 0) return plainShare("convo");
      next = found + 1;
      return entries[found]!.share;
    });
  }

  #retain(
    record: ActionRecord,
    texts: readonly string[],
    first: Omit<BlockShare, "section">,
  ): void {
    const entries = texts.map((text) =>
      this.#ctx.convo.add(new StringEntry(text, { role: "user" }))
    );
    if (entries[0] !== undefined) this.#carved.set(entries[0], first);
    this.#retained.push({ record, text: texts.at(-1) ?? "", entries });
  }

  #rollTranscript(): void {
    const { transcriptEntries, transcriptRollBatch } = this.#limits;
    const over = this.#retained.length - transcriptEntries;
    if (over <= 0) return;
    const rolled = Math.min(
      this.#retained.length,
      Math.max(over, transcriptRollBatch),
    );
    for (const oldest of this.#retained.splice(0, rolled)) {
      for (const entry of oldest.entries) this.#ctx.convo.remove(entry);
    }
    this.#omitted += rolled;
    this.#setTopic(omittedLine(this.#omitted));
  }

  #retireBatch(): number {
    return this.#retire(
      Math.min(this.#limits.retireBatch, this.#retained.length),
    );
  }

  /**
   * Retires the `count` oldest events of the tail: the checkpoint block
   * (line and working state of every retired event) is rewritten.
   */
  #retire(count: number): number {
    const batch = this.#retained.splice(0, count);
    for (const item of batch) {
      for (const entry of item.entries) this.#ctx.convo.remove(entry);
      this.#retiredState.apply(item.record);
    }
    this.#archived += batch.length;
    this.#setTopic(this.#checkpointText());
    return batch.length;
  }

  /** The checkpoint block: line, then the retired events' working state. */
  #checkpointText(): string {
    return checkpointText(this.#archived, this.#retiredState.toJSON());
  }

  #setTopic(text: string): void {
    this.#epoch += 1;
    if (this.#topic !== undefined) this.#ctx.topic.remove(this.#topic);
    this.#topic = this.#ctx.topic.add(new StringEntry(text, { role: "user" }));
  }

  #build(turn: TurnOptions, answers: readonly string[]): Built {
    const ctx = this.#ctx;
    this.#clearVolatile();
    ctx.step.add(new StringEntry(this.#stepText(turn), { role: "user" }));
    if (answers.length > 0) {
      const per = this.#limits.lookupsPerStage;
      const entry = ctx.attention.add(
        new StringEntry(
          `Lookup answers of this stage (untrusted JSON data, oldest first):\n${
            answers.join("\n")
          }\nLookups used this stage: ${answers.length} of ${per}.`,
          { role: "user" },
        ),
      );
      this.#carved.set(entry, {
        descriptors: 0,
        results: answers.reduce((n, a) => n + escapedBytes(a), 0),
      });
    }
    const notes = turn.notes?.filter((n) => n.length > 0) ?? [];
    if (notes.length > 0) {
      ctx.attention.add(
        new StringEntry(`Notes:\n${notes.map((n) => `- ${n}`).join("\n")}`, {
          role: "user",
        }),
      );
    }
    const compiled = ctx.toAnthropic({
      cacheBreakpoints: [],
      clearVolatile: false,
    });
    const placed = placeBreakpoints({
      system: compiled.system.map(toTurnBlock),
      messages: compiled.messages.map(toTurnMessage),
      tool: turn.tool,
      tool_choice: { type: "tool", name: turn.tool.name },
    }, {
      stable: this.#intentText,
      last: this.#lastRetainedText(),
      previous: this.#breakpoint?.epoch === this.#epoch
        ? this.#breakpoint
        : undefined,
      ttl: this.#cacheTtl,
    });
    const request = placed.request;
    const json = serializeTurnRequest(request);
    return {
      request,
      json,
      bytes: encoder.encode(json).byteLength,
      breakpoint: placed.last,
    };
  }

  #stepText(turn: TurnOptions): string {
    if (this.#archive !== undefined) {
      return boundedStageText(turn, this.#results.count, this.#archive.count);
    }
    const answer = turn.phase === "selection"
      ? '{"action": <one of the candidate actions>}'
      : "the chosen action's arguments";
    const lines = [
      `Current stage: ${turn.phase}. Answer by calling the ${turn.tool.name} tool with {"step": ${answer}}, or with one lookup as the step.`,
    ];
    if (turn.candidates !== undefined) {
      lines.push(
        `${
          turn.phase === "selection" ? "Candidate actions" : "Chosen action"
        }: ${JSON.stringify(turn.candidates)}`,
      );
    }
    lines.push(
      `Stored results: ${this.#results.count} (list them with {"$list_results": 0}).`,
    );
    return lines.join("\n");
  }

  #clearVolatile(): void {
    this.#ctx.step.clear();
    this.#ctx.attention.clear();
  }

  /** Text of the last block the next request repeats (convo, or the intent). */
  #lastRetainedText(): string {
    return this.#retained.at(-1)?.text ??
      (this.#header === undefined ? this.#intentText : EVENTS_HEADER);
  }

  /** Offset just after the text of the last convo block of `request`. */
  #retainedPrefix(request: TurnRequest): number {
    const last = this.#lastRetainedText();
    for (const [m, message] of request.messages.entries()) {
      const index = message.content.findIndex((b) => b.text === last);
      if (index >= 0) {
        return textEndOffset(request, { message: m, block: index });
      }
    }
    const index = request.system.findIndex((b) => b.text === last);
    return index >= 0
      ? textEndOffset(request, { message: "system", block: index })
      : 0;
  }
}

/** The sections in compile order (every briefing entry is a StringEntry). */
const SHARE_SECTIONS: readonly SectionName[] = [
  "foundation",
  "focus",
  "topic",
  "convo",
  "step",
  "attention",
];

/**
 * The descriptors a legacy transcript entry writes in full (previews
 * included): inspected files' and the test output's.
 */
function legacyDescriptors(report: ExecutionReport): DescriptorText[] {
  const list = report.kind === "inspected"
    ? report.files.flatMap((f) =>
      f.descriptor === undefined ? [] : [f.descriptor]
    )
    : report.kind === "tests_run"
    ? [report.output]
    : [];
  return list.map((d) => ({
    json: stableStringify(d),
    ...(d.preview === undefined ? {} : { preview: JSON.stringify(d.preview) }),
  }));
}
