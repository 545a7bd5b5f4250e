/**
 * The host's side of one run: it spawns the process, sends the code,
 * answers the sandbox's requests through the face's {@linkcode CodeBridge},
 * and ends the run — with the returned value, or a {@linkcode CodeError}.
 * Every frame from the sandbox is hostile: sizes are capped before anything
 * is allocated, a frame of an unknown kind, a malformed one or a second
 * request under a live id ends the run, and the limits (calls in all and at
 * once, log bytes, the deadline) are counted here, never in the sandbox.
 * When the run ends, for whatever reason, its process is killed and reaped
 * before the answer is given, and calls still running are aborted.
 *
 * @module
 */
import { encodeFrame, frameReader } from "../executor/frames.ts";
import type { CodeName } from "./code_names.ts";
import { CodeError } from "./code_error.ts";
import type { ProcessPlan } from "./_process.ts";
import { killSandbox } from "../executor/sandbox_end.ts";
import { messageOf } from "../errors.ts";

/** What the face offers the code: its tools, its store and its references. */
export interface CodeBridge {
  /**
   * Calls one tool; resolves to its `CallToolResult` as received (a tool
   * error is a result with `isError`), or with `results: "value"` to the
   * tool's own output (JSON). Rejects when the call cannot be made; a
   * rejection's `message` (and `code`, if any) is what the code sees.
   */
  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<unknown>;
  /**
   * `loom.read(reference)`: the selected text, or the JSON value a pointer
   * selects, checked against the reference's digest.
   */
  read(reference: unknown, signal: AbortSignal): Promise<unknown>;
  /**
   * `loom.store(value)` (and the answers and logs too large to send):
   * stores `text` and resolves to its descriptor.
   */
  store(
    text: string,
    options: { readonly json: boolean; readonly mediaType?: string },
  ): Promise<Record<string, unknown>>;
}

/** The limits of one run. */
export interface RunLimits {
  /** Milliseconds from the start to the kill. */
  readonly timeoutMs: number;
  /** Tool calls in all. */
  readonly maxCalls: number;
  /** Requests (calls, reads, stores) in flight at once. */
  readonly maxInFlight: number;
  /** Bytes of console output. */
  readonly maxLogBytes: number;
  /** Bytes of one frame's body (arguments, a value, a log line). */
  readonly maxBodyBytes: number;
}

/** A run that answered. */
export interface CodeOutcome {
  /** The returned value (JSON; `null` when nothing was returned). */
  readonly result: unknown;
  /** Its JSON text, as the sandbox wrote it. */
  readonly resultJson: string;
  /** Console output, one entry per call (`[warn] `, `[error] ` marked). */
  readonly logs: readonly string[];
  /** Bytes of console output. */
  readonly logBytes: number;
  /** Tool calls made. */
  readonly calls: number;
  /** The tools called, as `[server, tool]` pairs, each once. */
  readonly called: readonly (readonly [string, string])[];
  /** Wall time in milliseconds. */
  readonly ms: number;
}

/**
 * A sandbox process, started and waiting for its code (the runtime reads
 * nothing else first): a runner starts the next one ahead, so a run does
 * not wait for Deno to boot.
 */
export interface Sandbox {
  /** The process (bubblewrap's, or Deno's when unconfined). */
  readonly child: Deno.ChildProcess;
  /** Its stdin. */
  readonly stdin: WritableStreamDefaultWriter<Uint8Array>;
  /** Whether it has exited already. */
  exited(): boolean;
  /** Kills it and every process of it (see `killSandbox`). */
  kill(): void;
}

/**
 * Starts a sandbox process for one run.
 *
 * @param plan Its command line and environment.
 * @returns The process, waiting for its code.
 */
export function spawnSandbox(plan: ProcessPlan): Sandbox {
  const child = new Deno.Command(plan.program, {
    args: [...plan.args],
    clearEnv: true,
    env: { ...plan.env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let exited = false;
  child.status.then(() => exited = true, () => exited = true);
  return {
    child,
    stdin: child.stdin.getWriter(),
    exited: () => exited,
    kill: () => killSandbox(child, plan.initReport, exited),
  };
}

/**
 * Stops a sandbox no run took: kills it and waits for its end.
 *
 * @param sandbox The process.
 */
export async function discardSandbox(sandbox: Sandbox): Promise<void> {
  sandbox.kill();
  sandbox.stdin.close().catch(() => {});
  await Promise.all([
    sandbox.child.status,
    sandbox.child.stdout.cancel().catch(() => {}),
    sandbox.child.stderr.cancel().catch(() => {}),
  ]);
}

/** One run to execute. */
export interface RunSpec {
  /** The process it runs in (fresh: no run took it before). */
  readonly sandbox: Sandbox;
  /** What calls resolve to in the code: MCP results, or the tools' own values. */
  readonly results: "mcp" | "value";
  readonly code: string;
  readonly tools: readonly CodeName[];
  readonly bridge: CodeBridge;
  readonly limits: RunLimits;
  readonly signal?: AbortSignal;
}

/** The largest frame header: kinds, ids, names, error names. */
const MAX_HEADER_BYTES = 64 * 1024;
/** Standard error kept, for the reason a process died. */
const STDERR_BYTES = 16 * 1024;
const LEVELS: Readonly<Record<string, string>> = {
  log: "",
  info: "",
  debug: "",
  warn: "[warn] ",
  error: "[error] ",
};

const encoder = new TextEncoder();
const strict = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder();

type Frame = Record<string, unknown>;

/** Runs one program to its end (see the module doc). */
export function executeRun(spec: RunSpec): Promise<CodeOutcome> {
  return new Promise((resolve, reject) => new Run(spec, resolve, reject));
}

class Run {
  readonly #spec: RunSpec;
  readonly #started = performance.now();
  readonly #child: Deno.ChildProcess;
  readonly #sandbox: Sandbox;
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;
  readonly #calls = new AbortController();
  readonly #live = new Set<number>();
  readonly #logs: string[] = [];
  readonly #called = new Map<string, readonly [string, string]>();
  readonly #timer: ReturnType<typeof setTimeout>;
  #logBytes = 0;
  #callCount = 0;
  #stderr = "";
  #stdoutDone: Promise<void> = Promise.resolve();
  #stderrDone: Promise<void> = Promise.resolve();
  #over = false;

  constructor(
    spec: RunSpec,
    resolve: (outcome: CodeOutcome) => void,
    reject: (error: unknown) => void,
  ) {
    this.#spec = spec;
    this.#settle = { resolve, reject };
    this.#sandbox = spec.sandbox;
    this.#child = spec.sandbox.child;
    this.#stdin = spec.sandbox.stdin;
    this.#timer = setTimeout(
      () =>
        this.#fail(
          "code_timeout",
          `The run passed its deadline of ${spec.limits.timeoutMs} ms and was stopped`,
        ),
      spec.limits.timeoutMs,
    );
    spec.signal?.addEventListener("abort", this.#onAbort, { once: true });
    this.#send({
      t: "start",
      results: spec.results,
      code: encoder.encode(spec.code),
      names: spec.tools.map((
        n,
      ) => [n.serverName, n.toolName, n.server, n.tool]),
    });
    this.#stdoutDone = this.#readStdout();
    this.#stderrDone = this.#readStderr();
    this.#child.status.then((status) => this.#exited(status.code));
  }

  readonly #settle: {
    resolve: (outcome: CodeOutcome) => void;
    reject: (error: unknown) => void;
  };

  readonly #onAbort = () => {
    this.#end(() =>
      this.#settle.reject(
        this.#spec.signal?.reason ?? new DOMException("Aborted", "AbortError"),
      )
    );
  };

  #ms(): number {
    return Math.round(performance.now() - this.#started);
  }

  #send(message: Frame): void {
    if (this.#over) return;
    for (const piece of encodeFrame(message)) {
      this.#stdin.write(piece).catch(() => {});
    }
  }

  async #readStdout(): Promise<void> {
    const push = frameReader(
      (frame) => this.#frame(frame),
      MAX_HEADER_BYTES,
      undefined,
      this.#spec.limits.maxBodyBytes,
    );
    try {
      // Read to the end even after the run is over: the end of the pipe is
      // when every process that held it has exited.
      for await (const chunk of this.#child.stdout) {
        if (!this.#over) push(chunk);
      }
    } catch (error) {
      this.#fail(
        "code_error",
        `The run wrote something to its standard output that is not a frame of the protocol, and was stopped (${
          messageOf(error)
        })`,
      );
    }
  }

  async #readStderr(): Promise<void> {
    try {
      for await (const chunk of this.#child.stderr) {
        if (this.#stderr.length < STDERR_BYTES) {
          this.#stderr += lenient.decode(chunk, { stream: true });
        }
      }
    } catch {
      // Killed.
    }
  }

  async #exited(code: number): Promise<void> {
    if (this.#over) return;
    // Standard error may still be arriving (a frame too: a done frame wins).
    let wait: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#stderrDone,
      new Promise((done) => wait = setTimeout(done, 500)),
    ]);
    clearTimeout(wait);
    if (this.#over) return;
    if (/out of memory/i.test(this.#stderr)) {
      return this.#fail(
        "code_memory",
        "The run used more memory than its heap limit allows and was stopped",
      );
    }
    const said = this.#stderr.trim().slice(0, 2000);
    this.#fail(
      "code_error",
      `The run ended (exit ${code}) without an answer${
        said === "" ? "" : `: ${said}`
      }`,
    );
  }

  /**
   * Ends the run once: stops the calls, kills the sandbox (its PID
   * namespace's init, so that bubblewrap's end is reported only once every
   * process of the namespace has exited: `killSandbox`), and settles when
   * the process has ended and the run's stdout and stderr have closed, so
   * that none is left when the run answers. (At most 5 s: a run's process
   * cannot hold them longer once killed.)
   */
  #end(settle: () => void): void {
    if (this.#over) return;
    this.#over = true;
    clearTimeout(this.#timer);
    this.#spec.signal?.removeEventListener("abort", this.#onAbort);
    this.#calls.abort(new DOMException("The run ended", "AbortError"));
    this.#sandbox.kill();
    this.#stdin.close().catch(() => {});
    let wait: ReturnType<typeof setTimeout> | undefined;
    Promise.race([
      Promise.all([this.#child.status, this.#stdoutDone, this.#stderrDone]),
      new Promise((done) => wait = setTimeout(done, 5000)),
    ]).then(() => {
      clearTimeout(wait);
      settle();
    });
  }

  #fail(code: CodeError["code"], message: string): void {
    const error = new CodeError(code, message, {
      logs: [...this.#logs],
      calls: this.#callCount,
      ms: this.#ms(),
    });
    this.#end(() => this.#settle.reject(error));
  }

  #protocol(what: string): void {
    this.#fail(
      "code_error",
      `The run sent a frame the protocol does not allow (${what}), and was stopped`,
    );
  }

  #frame(frame: unknown): void {
    if (this.#over) return;
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
      return this.#protocol("not an object");
    }
    const message = frame as Frame;
    switch (message.t) {
      case "log":
        return this.#log(message);
      case "call":
      case "read":
      case "store":
        return this.#request(message);
      case "done":
        return this.#done(message);
      case "fail":
        return this.#failed(message);
      default:
        return this.#protocol(
          `kind ${JSON.stringify(message.t)?.slice(0, 40)}`,
        );
    }
  }

  #log(message: Frame): void {
    const prefix = typeof message.level === "string"
      ? LEVELS[message.level]
      : undefined;
    if (prefix === undefined || !(message.text instanceof Uint8Array)) {
      return this.#protocol("a log without a level or text");
    }
    this.#logBytes += message.text.length;
    if (this.#logBytes > this.#spec.limits.maxLogBytes) {
      return this.#fail(
        "code_output",
        `The run wrote more than ${this.#spec.limits.maxLogBytes} bytes of logs and was stopped`,
      );
    }
    this.#logs.push(prefix + lenient.decode(message.text));
  }

  #request(message: Frame): void {
    const id = message.id;
    if (!Number.isSafeInteger(id) || this.#live.has(id as number)) {
      return this.#protocol("a request without a fresh id");
    }
    const limits = this.#spec.limits;
    if (this.#live.size >= limits.maxInFlight) {
      return this.#fail(
        "code_calls",
        `The run had more than ${limits.maxInFlight} requests in flight at once and was stopped`,
      );
    }
    let work: () => Promise<unknown>;
    const signal = this.#calls.signal;
    const bridge = this.#spec.bridge;
    if (message.t === "call") {
      const { server, tool } = message;
      const args = this.#json(message.args);
      if (
        typeof server !== "string" || typeof tool !== "string" ||
        typeof args !== "object" || args === null || Array.isArray(args)
      ) return this.#protocol("a call without server, tool and arguments");
      if (this.#callCount >= limits.maxCalls) {
        return this.#fail(
          "code_calls",
          `The run made more than the ${limits.maxCalls} tool calls a run may make, and was stopped`,
        );
      }
      this.#callCount++;
      this.#called.set(JSON.stringify([server, tool]), [server, tool]);
      work = () =>
        bridge.callTool(server, tool, args as Record<string, unknown>, signal);
    } else if (message.t === "read") {
      const reference = this.#json(message.reference);
      if (reference === NOT_JSON) return this.#protocol("a read without JSON");
      work = () => bridge.read(reference, signal);
    } else {
      const mediaType = message.mediaType;
      const bytes = message.text ?? message.json;
      if (
        !(bytes instanceof Uint8Array) ||
        (mediaType !== undefined && typeof mediaType !== "string")
      ) return this.#protocol("a store without a value");
      const json = message.json !== undefined;
      let text: string;
      try {
        text = strict.decode(bytes);
        if (json) JSON.parse(text);
      } catch {
        return this.#protocol("a store of malformed text");
      }
      work = () =>
        bridge.store(text, {
          json,
          ...(mediaType === undefined ? {} : { mediaType }),
        });
    }
    this.#live.add(id as number);
    work().then(
      (value) => {
        this.#live.delete(id as number);
        let json: string;
        try {
          json = JSON.stringify(value) ?? "null";
        } catch (error) {
          return this.#send({
            t: "reply",
            id,
            ok: false,
            error: {
              code: "not_json",
              message:
                `The answer cannot be passed to the code: it is not JSON (${
                  messageOf(error)
                })`,
            },
          });
        }
        this.#send({ t: "reply", id, ok: true, json: encoder.encode(json) });
      },
      (error: unknown) => {
        this.#live.delete(id as number);
        const code = (error as { code?: unknown })?.code;
        this.#send({
          t: "reply",
          id,
          ok: false,
          error: {
            code: typeof code === "string" ? code : "call_failed",
            message: messageOf(error),
          },
        });
      },
    );
  }

  /** JSON from a frame's bytes, or {@linkcode NOT_JSON}. */
  #json(bytes: unknown): unknown {
    if (!(bytes instanceof Uint8Array)) return NOT_JSON;
    try {
      return JSON.parse(strict.decode(bytes));
    } catch {
      return NOT_JSON;
    }
  }

  #done(message: Frame): void {
    const bytes = message.json;
    let text: string;
    let result: unknown;
    try {
      if (!(bytes instanceof Uint8Array)) throw new TypeError("no value");
      text = strict.decode(bytes);
      result = JSON.parse(text);
    } catch {
      return this.#protocol("an answer that is not JSON");
    }
    const outcome: CodeOutcome = {
      result,
      resultJson: text,
      logs: [...this.#logs],
      logBytes: this.#logBytes,
      calls: this.#callCount,
      called: [...this.#called.values()],
      ms: this.#ms(),
    };
    this.#end(() => this.#settle.resolve(outcome));
  }

  #failed(message: Frame): void {
    const text = (value: unknown) =>
      value instanceof Uint8Array ? lenient.decode(value) : "";
    const name = typeof message.name === "string"
      ? message.name.slice(0, 200)
      : "Error";
    const said = text(message.message);
    const stack = text(message.stack);
    this.#fail(
      "code_error",
      `${name}: ${said}${stack === "" ? "" : `\n${stack}`}`,
    );
  }
}

const NOT_JSON: unique symbol = Symbol("not JSON");
