/**
 * The scripted conversations every adapter test runs: a tool returns a 2 MB
 * JSON document, the model reads one value by pointer and one found by
 * `find_in_result`, then answers; and a long conversation with a large
 * result every turn.
 */
import assert from "node:assert/strict";
import {
  type SessionStore,
  sessionStore,
} from "../../lib/adapters/session_result_store.ts";
import { Retrieval } from "../../lib/reference/retrieval.ts";
import { sha256Hex } from "../../lib/store/digest.ts";
import type { ResultStore } from "../../lib/store/result_store.ts";
import { tempDir } from "../_kit.ts";
import {
  breakpoints,
  type Move,
  type Received,
  type ScriptedServer,
  scriptedServer,
  toolResults,
  type Wire,
} from "./_scripted_server.ts";

/** The 2 MB document: 20,000 items, one of them holding a needle. */
export function bigDocument(): { text: string; value: unknown } {
  const items = Array.from({ length: 20_000 }, (_, i) => ({
    id: i,
    name: `item-${i}`,
    tags: ["alpha", "beta", i % 7 === 0 ? "seven" : "other"],
    body: "x".repeat(60),
    ...(i === 15_321 ? { secret: "needle-15321" } : {}),
  }));
  const value = { kind: "catalogue", items };
  const text = JSON.stringify(value);
  assert.ok(text.length > 2_000_000, `${text.length}`);
  return { text, value };
}

/** A string inside the big document that no descriptor preview can hold. */
export const DEEP_MARKER = '"name":"item-19999"';

/** What the scripted model found, for the test to compare. */
export interface Findings {
  byPointer?: unknown;
  byFind?: unknown;
  pointer?: string;
}

function reference(text: string): Record<string, unknown> {
  const value = JSON.parse(text) as { reference?: Record<string, unknown> };
  assert.ok(value.reference, `no reference in ${text.slice(0, 200)}`);
  return value.reference;
}

/**
 * The 2 MB scenario's model: fetch, read `/items/1234/name`, search for the
 * needle, read the value at the match's pointer, answer.
 *
 * @param tool The name of the tool returning the document.
 * @param findings Filled as the model reads.
 */
export function bigDocumentModel(
  tool: string,
  findings: Findings,
): (body: Record<string, unknown>, wire: Wire) => Move {
  return (body, wire) => {
    const results = toolResults(body, wire);
    if (results.length === 0) return { call: { name: tool, input: {} } };
    if (results.length === 1) {
      return {
        call: {
          name: "read_result",
          input: {
            reference: {
              ...reference(results[0]!),
              select: { kind: "json_pointer", pointer: "/items/1234/name" },
              rendering: "json",
            },
          },
        },
      };
    }
    if (results.length === 2) {
      findings.byPointer = JSON.parse(
        (JSON.parse(results[1]!) as { selected_json: string }).selected_json,
      );
      return {
        call: {
          name: "find_in_result",
          input: { reference: reference(results[0]!), pattern: "needle-15321" },
        },
      };
    }
    if (results.length === 3) {
      const found = JSON.parse(results[2]!) as {
        matches: { pointer: string }[];
      };
      const pointer = found.matches[0]!.pointer;
      findings.pointer = pointer;
      return {
        call: {
          name: "read_result",
          input: {
            reference: {
              ...reference(results[0]!),
              select: { kind: "json_pointer", pointer },
              rendering: "json",
            },
          },
        },
      };
    }
    findings.byFind = JSON.parse(
      (JSON.parse(results[3]!) as { selected_json: string }).selected_json,
    );
    return { text: "done" };
  };
}

/** Follows an RFC 6901 pointer into a parsed document. */
export function at(value: unknown, pointer: string): unknown {
  return pointer.split("/").slice(1).reduce(
    (v: unknown, t) =>
      (v as Record<string, unknown>)[
        t.replaceAll("~1", "/").replaceAll("~0", "~")
      ],
    value,
  );
}

/** The 2 MB scenario, set up: the document and the scripted model's server. */
export interface BigDocumentRun extends AsyncDisposable {
  readonly text: string;
  readonly value: unknown;
  readonly server: ScriptedServer;
  /** The scenario's assertions, once the conversation has ended. */
  assertRun(): void;
}

/**
 * Sets up the 2 MB scenario: a tool `catalogue` returns the document, the
 * scripted model (served on 127.0.0.1) reads it as {@linkcode bigDocumentModel}.
 */
export function bigDocumentRun(): BigDocumentRun {
  const { text, value } = bigDocument();
  const findings: Findings = {};
  const server = scriptedServer(bigDocumentModel("catalogue", findings));
  return {
    text,
    value,
    server,
    assertRun: () =>
      assertBigDocumentRun(server.received, server.refused, findings, value),
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}

/** The assertions of the 2 MB scenario. */
export function assertBigDocumentRun(
  received: readonly Received[],
  refused: readonly unknown[],
  findings: Findings,
  value: unknown,
): void {
  assert.deepEqual(refused, []);
  assert.equal(received.length, 5);
  for (const r of received) {
    assert.ok(!r.text.includes(DEEP_MARKER), "the 2 MB reached a request");
    assert.ok(r.text.length < 64 * 1024, `request of ${r.text.length} bytes`);
    if (r.wire === "anthropic") assert.ok(breakpoints(r.body) <= 4);
  }
  assert.equal(findings.byPointer, at(value, "/items/1234/name"));
  assert.equal(findings.pointer, "/items/15321/secret");
  assert.equal(findings.byFind, at(value, findings.pointer!));
}

/** A result of about 12 KB for turn `i` of the long conversation. */
export function turnResult(i: number): string {
  return JSON.stringify({
    turn: i,
    rows: Array.from(
      { length: 120 },
      (_, j) => ({ j, v: `t${i}-r${j}-${"y".repeat(60)}` }),
    ),
  });
}

/**
 * The long conversation's model: call `probe` `turns` times, then answer.
 * The tool's input carries the turn number.
 */
export function longModel(
  turns: number,
): (body: Record<string, unknown>, wire: Wire) => Move {
  return (body, wire) => {
    const done = toolResults(body, wire).length;
    if (done < turns) return { call: { name: "probe", input: { turn: done } } };
    return { text: "finished" };
  };
}

/** Every reference in a text (descriptors, retired or not). */
export function referencesIn(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (
    const m of text.matchAll(
      /\{\\?"result\\?":\\?"(result-\d+)\\?",\\?"sha256\\?":\\?"([0-9a-f]{64})\\?"/g,
    )
  ) {
    out.push({ result: m[1], sha256: m[2], select: { kind: "whole" } });
  }
  return out;
}

/** What the second process's model read, for the test to compare. */
export interface SecondFindings extends Findings {
  /** The tool result of a read of a result the store does not hold. */
  gone?: string;
}

/**
 * The model of the session-store tests' second process: with `reference`
 * (stored by the first process) it reads `/items/1234/name`, searches for
 * the needle, reads the value at the match's pointer, reads a result no
 * store holds, and answers.
 *
 * @param reference The whole-result reference the first process saw.
 * @param findings Filled as the model reads.
 */
export function secondProcessModel(
  reference: Record<string, unknown>,
  findings: SecondFindings,
): (body: Record<string, unknown>, wire: Wire) => Move {
  const read = (pointer: string): Move => ({
    call: {
      name: "read_result",
      input: {
        reference: {
          ...reference,
          select: { kind: "json_pointer", pointer },
          rendering: "json",
        },
      },
    },
  });
  const value = (text: string) =>
    JSON.parse((JSON.parse(text) as { selected_json: string }).selected_json);
  return (body, wire) => {
    const results = toolResults(body, wire);
    if (results.length === 0) return read("/items/1234/name");
    if (results.length === 1) {
      findings.byPointer = value(results[0]!);
      return {
        call: {
          name: "find_in_result",
          input: { reference, pattern: "needle-15321" },
        },
      };
    }
    if (results.length === 2) {
      const found = JSON.parse(results[1]!) as {
        matches: { pointer: string }[];
      };
      findings.pointer = found.matches[0]!.pointer;
      return read(findings.pointer);
    }
    if (results.length === 3) {
      findings.byFind = value(results[2]!);
      return {
        call: {
          name: "read_result",
          input: { reference: { ...reference, result: "result-999" } },
        },
      };
    }
    findings.gone = results[3]!;
    return { text: "done" };
  };
}

/**
 * Runs `tests/adapters/_second_process.ts` as a real subprocess: it opens
 * the session folder through `adapter`'s `sessionStore` and runs one
 * conversation of that SDK against `url`.
 *
 * @returns Its exit code, standard output and standard error.
 */
export async function runSecondProcess(
  adapter: "ai-sdk" | "anthropic" | "openai",
  url: string,
  dir: string,
  keyFile: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = new URL("./_second_process.ts", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-sys=hostname",
      "--allow-net=127.0.0.1",
      script,
      adapter,
      url,
      dir,
      keyFile,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return {
    code: out.code,
    stdout: decode(out.stdout),
    stderr: decode(out.stderr),
  };
}

/**
 * The assertions of the second process: it exited 0 with the model's
 * answer, every body passed the services' rules, the values read equal the
 * original document's, and the read of a result no store holds answered
 * `unknown_result` with what to do instead.
 */
export function assertSecondProcess(
  run: { code: number; stdout: string; stderr: string },
  received: readonly Received[],
  refused: readonly unknown[],
  findings: SecondFindings,
  value: unknown,
): void {
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout.trim(), "done");
  assert.deepEqual(refused, []);
  assert.equal(received.length, 5);
  assert.equal(findings.byPointer, at(value, "/items/1234/name"));
  assert.equal(findings.pointer, "/items/15321/secret");
  assert.equal(findings.byFind, "needle-15321");
  assert.match(findings.gone ?? "", /unknown_result/);
  assert.match(findings.gone ?? "", /list_results/);
}

/**
 * The session-store tests' first model: call `tool` once, then answer
 * `stored`.
 */
export function storeOnceModel(
  tool: string,
): (body: Record<string, unknown>, wire: Wire) => Move {
  return (body, wire) =>
    toolResults(body, wire).length === 0
      ? { call: { name: tool, input: {} } }
      : { text: "stored" };
}

/**
 * The long conversation's requests, checked alike for every adapter: old
 * results retired in batches (the count of retired descriptors never moves
 * by fewer than 8), every request under `maxBytes`, and each of the 40
 * results referenced in the last request readable from `store`, checked
 * against its digest.
 *
 * @returns How many retired descriptors each request held.
 */
export function assertRetiredInBatches(
  received: readonly Received[],
  store: ResultStore,
  maxBytes: number,
): number[] {
  const retiredAt = received.map((r) =>
    (r.text.match(/\\"retired\\":true|"retired":true/g) ?? []).length
  );
  assert.ok(retiredAt.at(-1)! >= 8, String(retiredAt));
  const steps = retiredAt.slice(1).map((n, i) => n - retiredAt[i]!).filter(
    (d) => d !== 0,
  );
  assert.ok(steps.every((d) => d >= 8), String(steps));
  const sizes = received.map((r) => r.text.length);
  assert.ok(Math.max(...sizes) < maxBytes, String(sizes));
  const references = referencesIn(received.at(-1)!.text);
  assert.equal(references.length, 40);
  const retrieval = new Retrieval(store);
  for (const [i, reference] of references.entries()) {
    const read = retrieval.read({ reference });
    assert.ok(read.ok);
    assert.ok(
      turnResult(i).startsWith(
        (read.structured["selected_text"] as string).slice(0, 1000),
      ),
    );
  }
  return retiredAt;
}

/** The 2 MB document, as text and as a value, for a first process's tool. */
export type BigDocument = ReturnType<typeof bigDocument>;

/**
 * The session-store scenario, alike for every adapter: a first
 * conversation (`first`, through the adapter, against a scripted server
 * playing {@linkcode storeOnceModel}) stores the 2 MB document in a session
 * store and ends; a second process opens the same session through the
 * adapter's `sessionStore` and reads values from the result by the
 * reference the first one saw, which carries the document's digest.
 *
 * @param adapter The adapter the second process uses.
 * @param first Runs the first conversation against `url` with `store`.
 */
export async function assertSecondProcessReads(
  adapter: "ai-sdk" | "anthropic" | "openai",
  first: (
    url: string,
    store: SessionStore,
    document: BigDocument,
  ) => Promise<void>,
): Promise<void> {
  const document = bigDocument();
  await using home = await tempDir();
  const dir = `${home.path}/chat-1`;
  const keyFile = `${home.path}/session.key`;
  await using server = scriptedServer(storeOnceModel("catalogue"));
  {
    await using store = await sessionStore(dir, { keyFile });
    await first(server.url, store, document);
  }
  const [reference] = referencesIn(server.received.at(-1)!.text);
  assert.equal(
    reference!["sha256"],
    sha256Hex(new TextEncoder().encode(document.text)),
  );
  const findings: SecondFindings = {};
  await using second = scriptedServer(secondProcessModel(reference!, findings));
  const run = await runSecondProcess(adapter, second.url, dir, keyFile);
  assertSecondProcess(
    run,
    second.received,
    second.refused,
    findings,
    document.value,
  );
}
