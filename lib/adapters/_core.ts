/**
 * The one core under the three SDK adapters: a large tool result goes into
 * the result store and the model sees a descriptor (id, digest, size,
 * preview and, for JSON, an outline); when a request passes its budget the
 * oldest tool results are retired into compact descriptors in batches, so the
 * prefix stays byte-identical between retirements; and the digest of a
 * request's stable prefix names its cache. Each adapter only maps its SDK's
 * shapes onto {@linkcode Slot}s and back.
 *
 * A tool result is never removed, only its content replaced: a call and its
 * result stay together in every request, whatever is retired.
 *
 * @module
 */
import { ResultStore, type StoredResult } from "../store/result_store.ts";
import { sha256Hex } from "../store/digest.ts";
import {
  fitDescriptor,
  summarizeContent,
} from "../reference/descriptor_fields.ts";
import { Retrieval, type RetrievalAnswer } from "../reference/retrieval.ts";
import { takeInFor } from "../reference/referenced_results.ts";
import { ReferenceFailureError } from "../reference/selection.ts";
import type { LoomErrorCode } from "../errors.ts";
import { DEFAULT_BRIEFING_LIMITS } from "../briefing/briefing.ts";
import { stableStringify } from "../briefing/turn_request.ts";

import {
  type AdapterOptions,
  DEFAULT_BUDGET_BYTES,
  DEFAULT_OFFLOAD_BYTES,
} from "./adapter_options.ts";
import {
  offloadEvent,
  type OffloadFacts,
  retirementEvent,
} from "../telemetry/events.ts";

export type { AdapterOptions } from "./adapter_options.ts";

/** One tool result of a request, as an adapter sees it. */
export interface Slot {
  /** The call id the result answers (unique in a conversation). */
  readonly key: string;
  /** The tool's name. */
  readonly tool: string;
  /** The result's content as the request carries it now. */
  readonly text: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const RETRIEVAL_HINT =
  "Stored by Loom: read a part with read_result (select json_pointer, lines or bytes) or search it with find_in_result";
const RETIRED_HINT =
  "Retired by Loom to keep the request small: read it with read_result or find_in_result";

/**
 * A result this small is never retired: its compact descriptor (about 300
 * bytes) would save next to nothing, or be larger.
 */
const SMALL_RESULT_BYTES = 512;

/** The per-store state every adapter function given that store shares. */
interface State {
  /** sha256 → result id, so the same content is stored once. */
  readonly byDigest: Map<string, string>;
  /** call id → the compact descriptor text that replaced its result. */
  readonly retired: Map<string, string>;
  /** call id → the descriptor text its result was offloaded to. */
  readonly offloaded: Map<string, string>;
  /**
   * Offloads no recording span was active for (the AI SDK converts tool
   * output outside its spans): told on the next request's span instead.
   */
  readonly untold: OffloadFacts[];
}

const states = new WeakMap<ResultStore, State>();
let sharedStore: ResultStore | undefined;

/**
 * The store an option names, or the adapters' shared in-memory one.
 *
 * @param options The adapter options.
 * @returns The store to use.
 */
export function storeOf(options: AdapterOptions | undefined): ResultStore {
  if (options?.store !== undefined) return options.store;
  sharedStore ??= new ResultStore();
  return sharedStore;
}

function stateOf(store: ResultStore): State {
  let state = states.get(store);
  if (state === undefined) {
    state = {
      byDigest: new Map(),
      retired: new Map(),
      offloaded: new Map(),
      untold: [],
    };
    for (const result of store.stored()) {
      state.byDigest.set(result.sha256, result.id);
    }
    states.set(store, state);
  }
  return state;
}

function positive(value: number | undefined, fallback: number, name: string) {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(
      `Cannot use ${name} ${value}: it must be a non-negative integer`,
    );
  }
  return value;
}

/** The serialized form of a tool's output: strings as they are, else JSON. */
export function serialize(output: unknown): string {
  if (typeof output === "string") return output;
  return JSON.stringify(output) ?? "null";
}

/** UTF-8 length of a string. */
export function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}

/**
 * The adapters' core over one store.
 */
export class Core {
  /** The store results go to. */
  readonly store: ResultStore;
  /** The retrieval tools over it. */
  readonly retrieval: Retrieval;
  /** Offload threshold in bytes. */
  readonly offloadBytes: number;
  /** Request budget in bytes. */
  readonly budgetBytes: number;
  /** Retirement aims at this size (the bounded briefing's ratio: half). */
  readonly targetBytes: number;
  /** Results retired at a time (the bounded briefing's batch: 8). */
  readonly batch: number;
  readonly #state: State;
  /** Calls offloaded without an id so far. */
  #calls = 0;

  /**
   * @param options The adapter options.
   * @throws {RangeError} When a size is not a non-negative integer.
   */
  constructor(options: AdapterOptions | undefined) {
    this.store = storeOf(options);
    this.retrieval = new Retrieval(this.store);
    this.offloadBytes = positive(
      options?.offloadBytes,
      DEFAULT_OFFLOAD_BYTES,
      "offloadBytes",
    );
    this.budgetBytes = positive(
      options?.budgetBytes,
      DEFAULT_BUDGET_BYTES,
      "budgetBytes",
    );
    const limits = DEFAULT_BRIEFING_LIMITS;
    this.targetBytes = Math.floor(
      this.budgetBytes * limits.retireTargetBytes / limits.retireAboveBytes,
    );
    this.batch = limits.retireBatch;
    this.#state = stateOf(this.store);
  }

  /**
   * Keeps `text` in the store (once per digest).
   *
   * @returns The stored result, or `undefined` when the store is full.
   */
  async keep(text: string, origin: string): Promise<StoredResult | undefined> {
    const bytes = encoder.encode(text);
    const sha256 = sha256Hex(bytes);
    const known = this.#state.byDigest.get(sha256);
    const existing = known === undefined ? undefined : this.store.get(known);
    if (existing !== undefined) return existing;
    const descriptor = await this.store.put(bytes, {
      origin,
      capture: "complete",
    });
    if (descriptor.result === undefined) return undefined;
    this.#state.byDigest.set(sha256, descriptor.result);
    return this.store.get(descriptor.result);
  }

  /**
   * What the model sees of a tool's output: the descriptor text when its
   * serialized size passes the offload threshold, else `undefined` (the
   * output passes unchanged). The same call id always gets the same text.
   *
   * @param key The call id.
   * @param tool The tool's name.
   * @param output The tool's output.
   */
  async offload(
    key: string,
    tool: string,
    output: unknown,
  ): Promise<string | undefined> {
    const done = this.#state.offloaded.get(key);
    if (done !== undefined) return done;
    const text = serialize(output);
    if (utf8Bytes(text) <= this.offloadBytes) return undefined;
    const result = await this.keep(text, tool);
    if (result === undefined) return undefined;
    const described = JSON.stringify(describe(tool, result));
    this.#state.offloaded.set(key, described);
    this.tellOffload({
      tool,
      result: result.id,
      sha256: result.sha256,
      bytes: result.bytes.length,
      sentBytes: utf8Bytes(described),
    });
    return described;
  }

  /**
   * {@linkcode Core.offload} of a call the SDK may not name: a call without
   * an id gets `call-N`, numbered by this core.
   *
   * @param id The SDK's call id, if it gave one.
   * @param tool The tool's name.
   * @param output The tool's output.
   */
  offloadCall(
    id: string | undefined,
    tool: string,
    output: unknown,
  ): Promise<string | undefined> {
    return this.offload(id ?? `call-${++this.#calls}`, tool, output);
  }

  /**
   * Tells an offload inside the SDK's own trace: a `loom.offload` event on
   * the span active now, or else on the span of the next request (the one
   * that carries the descriptor).
   *
   * @param facts The tool, the result id and digest, and the sizes.
   */
  tellOffload(facts: OffloadFacts): void {
    if (!offloadEvent(facts)) this.#state.untold.push(facts);
  }

  /**
   * Stores `text` (once per digest) and answers its full descriptor, the
   * one an offloaded result gets (`run_code`'s stored values and logs).
   *
   * @param text The text.
   * @param tool The tool it came from.
   * @throws {RangeError} When the store is full.
   */
  async storeDescribed(
    text: string,
    tool: string,
  ): Promise<Record<string, unknown>> {
    const result = await this.keep(text, tool);
    if (result === undefined) {
      throw new RangeError(
        `store_full: the result store cannot hold ${
          utf8Bytes(text)
        } more bytes`,
      );
    }
    return describe(tool, result);
  }

  /** The compact descriptor that replaced a retired result, if any. */
  retiredText(key: string): string | undefined {
    return this.#state.retired.get(key);
  }

  /**
   * Retires the oldest results of `slots` (those over 512 bytes) in batches
   * when the request (as `request()` builds it, with every retirement so far
   * applied) passes the budget in UTF-8 bytes of its JSON,
   * until it is at most half the budget or nothing is left to retire; a
   * result already retired stays retired with the same text, so between
   * retirements the prefix is byte-identical.
   *
   * @param slots The retirable results, oldest first (not the newest turn's).
   * @param request Builds the request body with retirements applied.
   * @returns How many results were retired now.
   */
  async retire(
    slots: readonly Slot[],
    request: () => unknown,
  ): Promise<number> {
    const measure = () => utf8Bytes(JSON.stringify(request()));
    const untold = this.#state.untold.splice(0);
    for (const facts of untold) offloadEvent(facts);
    if (measure() <= this.budgetBytes) return 0;
    const open = slots.filter((s) =>
      !this.#state.retired.has(s.key) &&
      utf8Bytes(s.text) > SMALL_RESULT_BYTES
    );
    let retired = 0;
    for (let i = 0; i < open.length && measure() > this.targetBytes;) {
      for (const slot of open.slice(i, i + this.batch)) {
        this.#state.retired.set(slot.key, await this.#compact(slot));
        retired += 1;
      }
      i += this.batch;
    }
    if (retired > 0) retirementEvent(undefined, { retired });
    return retired;
  }

  async #compact(slot: Slot): Promise<string> {
    const described = ownDescriptor(slot.text, this.store);
    const result = described ?? await this.keep(slot.text, slot.tool);
    if (result === undefined) return slot.text;
    return JSON.stringify(compact(slot.tool, result));
  }

  /**
   * Answers a retrieval tool's call with its structured JSON, after taking
   * in what other processes stored in a shared store.
   *
   * @param name `read_result`, `find_in_result` or `list_results`.
   * @param args The call's arguments (untrusted).
   * @throws {ReferenceFailureError} A tool error whose message starts with
   *   its code; `unknown_result` says what the model can do instead.
   */
  async answer(
    name: string,
    args: unknown,
  ): Promise<Record<string, unknown>> {
    // A store shared with other processes: take in what the call needs.
    await takeInFor(this.store, name, args);
    let answer: RetrievalAnswer;
    if (name === "read_result") answer = this.retrieval.read(args);
    else if (name === "find_in_result") answer = this.retrieval.find(args);
    else answer = this.retrieval.list(args);
    if (answer.ok) return answer.structured;
    const advice = answer.code === "unknown_result"
      ? "; this store no longer holds it (it was stored by another store or session, or evicted): call the tool that produced it again, or list_results to see what is stored"
      : "";
    throw new ReferenceFailureError(
      answer.code as LoomErrorCode<"ReferenceFailureError">,
      `${answer.code}: ${answer.message}${advice}`,
    );
  }
}

/** The full descriptor of an offloaded result (at most about 2 KiB). */
function describe(tool: string, result: StoredResult): Record<string, unknown> {
  const summary = summarizeContent(result.bytes);
  return fitDescriptor({
    tool,
    result: result.id,
    sha256: result.sha256,
    utf8_bytes: summary.utf8_bytes,
    lines: summary.lines,
    media_type: summary.media_type,
    preview: summary.preview,
    preview_truncated: summary.preview_truncated,
    ...(summary.outline === undefined ? {} : { outline: summary.outline }),
    reference: wholeReference(result),
    note: RETRIEVAL_HINT,
  });
}

/** The compact descriptor of a retired result (no preview). */
function compact(tool: string, result: StoredResult): Record<string, unknown> {
  return {
    tool,
    retired: true,
    utf8_bytes: result.bytes.length,
    reference: wholeReference(result),
    note: RETIRED_HINT,
  };
}

function wholeReference(result: StoredResult): Record<string, unknown> {
  return {
    result: result.id,
    sha256: result.sha256,
    select: { kind: "whole" },
  };
}

/**
 * The stored result a descriptor text of ours names, when it is one and the
 * store holds that result with that digest.
 */
function ownDescriptor(
  text: string,
  store: ResultStore,
): StoredResult | undefined {
  if (!text.startsWith('{"tool":') || text.length > 4096) return undefined;
  try {
    const value = JSON.parse(text) as {
      reference?: { result?: unknown; sha256?: unknown };
    };
    const id = value.reference?.result;
    if (typeof id !== "string") return undefined;
    const result = store.get(id);
    return result?.sha256 === value.reference?.sha256 ? result : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The digest that names a request's cache: SHA-256 over the stable JSON of
 * its stable prefix (instructions and tools), cut to 32 hex digits.
 *
 * @param prefix The stable parts of the request.
 */
export function prefixDigest(prefix: unknown): string {
  return sha256Hex(encoder.encode(stableStringify(prefix))).slice(0, 32);
}

/** Decodes UTF-8 bytes. */
export function text(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
