/**
 * The program inside `run_code`'s sandbox: the main module of a Deno
 * process with no permission at all. It waits for one `start` frame (the
 * model's code and the names of the tools), runs the code as the body of an
 * async function with `tools`, `callTool`, `ToolError`, `text`, `json` and
 * `loom` in scope, relays their requests as frames over stdout, and ends
 * with a `done` (the returned value's JSON) or `fail` frame.
 *
 * Nothing here is a defence: the code runs in the same isolate and can
 * replace any of it, or write any bytes to stdout. Every limit is kept by
 * the host, which treats each frame as hostile (`_bridge.ts`); this side
 * only makes honest runs pleasant (clear errors, JSON checks with paths,
 * stack lines numbered as in the model's code).
 *
 * {@linkcode sandboxMain} is self-contained: its source text is what runs
 * in the sandbox, after the frame functions of `lib/executor/frames.ts`.
 *
 * @module
 */
import { encodeFrame, frameReader } from "../executor/frames.ts";

/** What the runtime is told besides the code. */
export interface RuntimeConfig {
  /** Requests (calls, reads, stores) in flight at once; more wait here. */
  readonly maxInFlight: number;
  /** The largest frame body the host accepts. */
  readonly maxBodyBytes: number;
}

/**
 * The first line of the module the model's code becomes; its code follows on
 * the same line, inside a block of its own so that it may declare `text` or
 * `json` itself.
 */
export const CODE_HEAD =
  "export default async function (tools, callTool, ToolError, text, json, loom) {{";

/**
 * The runtime's source: the frame functions and {@linkcode sandboxMain},
 * called with `config`.
 */
export function runtimeSource(config: RuntimeConfig): string {
  return `const encodeFrame = ${encodeFrame.toString()};
const frameReader = ${frameReader.toString()};
(${sandboxMain.toString()})(encodeFrame, frameReader, ${
    JSON.stringify({ ...config, head: CODE_HEAD })
  });
`;
}

/** The runtime (self-contained; see the module doc). */
export function sandboxMain(
  encode: (message: unknown) => Uint8Array[],
  reader: (
    onFrame: (message: unknown) => void,
    maxHeaderBytes: number,
  ) => (chunk: Uint8Array) => void,
  config: RuntimeConfig & { readonly head: string },
): void {
  type Json = Record<string, unknown>;
  type Waiter = {
    resolve: (value: Uint8Array) => void;
    reject: (error: Error) => void;
  };
  const stdout = Deno.stdout;
  const exit: (code?: number) => never = Deno.exit;
  const inspect = Deno.inspect;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  // The runtime's own stack frames (this file is runtime.js wherever it is
  // mounted; no import.meta: a bundler may rewrite it in the text embedded).
  const ownFrame = /file:\/\/\S*\/runtime\.js:\d+:\d+/;

  function send(message: Json): void {
    for (const piece of encode(message)) {
      let at = 0;
      while (at < piece.length) at += stdout.writeSync(piece.subarray(at));
    }
  }

  /** Where `value` is not JSON, as a path from `$`, or `undefined`. */
  function notJson(value: unknown): string | undefined {
    const ancestors: unknown[] = [];
    const key = (k: string) =>
      /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
    function visit(
      v: unknown,
      path: string,
      inArray: boolean,
    ): string | undefined {
      switch (typeof v) {
        case "string":
        case "boolean":
          return undefined;
        case "number":
          return Number.isFinite(v) ? undefined : `${path} is ${v}`;
        case "bigint":
          return `${path} is a BigInt (${v}n)`;
        case "function":
          return `${path} is a function`;
        case "symbol":
          return `${path} is a symbol`;
        case "undefined":
          return inArray ? `${path} is undefined` : undefined;
      }
      if (v === null) return undefined;
      const object = v as Record<string, unknown>;
      if (typeof object.toJSON === "function") {
        return visit(object.toJSON(), path, inArray);
      }
      if (ancestors.includes(v)) {
        return `${path} is a cycle (it contains itself)`;
      }
      ancestors.push(v);
      try {
        if (Array.isArray(v)) {
          for (let i = 0; i < v.length; i++) {
            const found = visit(v[i], `${path}[${i}]`, true);
            if (found !== undefined) return found;
          }
          return undefined;
        }
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) {
          const name = (proto?.constructor?.name as string | undefined) ??
            "object";
          return `${path} is a ${name}, not a plain object`;
        }
        for (const k of Object.keys(object)) {
          const found = visit(object[k], `${path}${key(k)}`, false);
          if (found !== undefined) return found;
        }
        return undefined;
      } finally {
        ancestors.pop();
      }
    }
    return visit(value, "$", false);
  }

  /** `value` as JSON bytes; a `TypeError` naming the first value that is not JSON. */
  function jsonBytes(value: unknown, what: string): Uint8Array {
    const wrong = notJson(value);
    if (wrong !== undefined) {
      throw new TypeError(`${what} is not JSON: ${wrong}`);
    }
    const bytes = encoder.encode(JSON.stringify(value) ?? "null");
    if (bytes.length > config.maxBodyBytes) {
      throw new RangeError(
        `${what} is ${bytes.length} bytes of JSON, more than the ${config.maxBodyBytes} a run may pass`,
      );
    }
    return bytes;
  }

  // Requests: at most maxInFlight at once, the rest wait in order.
  const waiting = new Map<number, Waiter>();
  const queue: (() => void)[] = [];
  let inFlight = 0;
  let nextId = 1;
  function request(message: Json): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      const go = () => {
        inFlight++;
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        send({ ...message, id });
      };
      if (inFlight < config.maxInFlight) go();
      else queue.push(go);
    });
  }
  function settled(): void {
    inFlight--;
    queue.shift()?.();
  }

  type CallResult = Json & { content?: unknown; isError?: boolean };

  function textOf(result: unknown): string {
    const content = (result as CallResult | null)?.content;
    if (!Array.isArray(content)) return "";
    return content
      .filter((b) => b?.type === "text" && typeof b.text === "string")
      .map((b) => b.text as string)
      .join("\n");
  }

  class ToolError extends Error {
    readonly server: string;
    readonly tool: string;
    readonly result: CallResult;
    readonly code: string | undefined;
    constructor(
      server: string,
      tool: string,
      result: CallResult,
      code?: string,
    ) {
      super(textOf(result) || `${server}/${tool} answered an error`);
      this.name = "ToolError";
      this.server = server;
      this.tool = tool;
      this.result = result;
      this.code = code;
    }
  }

  class LoomError extends Error {
    readonly code: string;
    constructor(code: string, message: string) {
      super(message);
      this.name = "LoomError";
      this.code = code;
    }
  }

  /** `mcp`: calls answer CallToolResults; `value`: the tools' own outputs. */
  let results = "mcp";

  async function call(
    server: string,
    tool: string,
    args: unknown,
  ): Promise<unknown> {
    const name = server === "" ? tool : `${server}/${tool}`;
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      throw new TypeError(`The arguments of ${name} must be an object`);
    }
    const body = jsonBytes(args, `The arguments of ${name}`);
    let reply: CallResult;
    try {
      reply = JSON.parse(
        decoder.decode(await request({ t: "call", server, tool, args: body })),
      );
    } catch (error) {
      if (error instanceof LoomError) {
        throw new ToolError(server, tool, {
          content: [{ type: "text", text: error.message }],
          isError: true,
        }, error.code);
      }
      throw error;
    }
    if (results === "mcp" && reply?.isError === true) {
      throw new ToolError(server, tool, reply);
    }
    return reply;
  }

  /** `callTool(server, tool, args)`; for tools without servers `callTool(name, args)`. */
  function callTool(a: unknown, b?: unknown, c?: unknown): Promise<unknown> {
    const flat = results === "value";
    const [server, tool, args] = flat ? ["", a, b ?? {}] : [a, b, c ?? {}];
    if (typeof server !== "string" || typeof tool !== "string") {
      return Promise.reject(
        new TypeError(
          flat
            ? "callTool(name, args) takes a string and an object"
            : "callTool(server, tool, args) takes two strings and an object",
        ),
      );
    }
    return call(server, tool, args);
  }

  function json(result: CallResult): unknown {
    if (result?.structuredContent !== undefined) {
      return result.structuredContent;
    }
    const text = textOf(result);
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new TypeError(
        `json(): the result has no structuredContent and its text is not JSON (${
          (error as Error).message
        })`,
      );
    }
  }

  const loom = Object.freeze({
    async read(reference: unknown): Promise<unknown> {
      const body = jsonBytes(reference, "The reference");
      return JSON.parse(
        decoder.decode(await request({ t: "read", reference: body })),
      );
    },
    async store(
      value: unknown,
      options: { mediaType?: unknown } = {},
    ): Promise<unknown> {
      const mediaType = options?.mediaType;
      if (mediaType !== undefined && typeof mediaType !== "string") {
        throw new TypeError("loom.store(): mediaType must be a string");
      }
      const message: Json = typeof value === "string"
        ? { t: "store", text: encoder.encode(value) }
        : { t: "store", json: jsonBytes(value, "The value to store") };
      if (mediaType !== undefined) message.mediaType = mediaType;
      return JSON.parse(decoder.decode(await request(message)));
    },
  });

  // Unknown names fail with the names there are, not with "undefined is not a function".
  const QUIET = new Set([
    "then",
    "toJSON",
    "constructor",
    "valueOf",
    "toString",
  ]);
  function namespace(members: Record<string, unknown>, where: string): unknown {
    return new Proxy(Object.freeze(members), {
      get(target, key) {
        if (typeof key !== "string" || key in target || QUIET.has(key)) {
          return Reflect.get(target, key);
        }
        const names = Object.keys(target);
        throw new TypeError(
          `${where}.${key} does not exist; ${where} has ${
            names.length === 0 ? "nothing" : names.slice(0, 50).join(", ")
          }`,
        );
      },
    });
  }
  function toolsOf(names: unknown): unknown {
    const servers: Record<string, Record<string, unknown>> = Object.create(
      null,
    );
    const tops: Record<string, unknown> = Object.create(null);
    for (const entry of Array.isArray(names) ? names : []) {
      const [serverName, toolName, server, tool] = entry as string[];
      const run = (args: unknown = {}) => call(server!, tool!, args);
      // A tool without a server sits at the top: tools.<name>.
      if (serverName === "") tops[toolName!] = run;
      else (servers[serverName!] ??= Object.create(null))[toolName!] = run;
    }
    for (const name of Object.keys(servers)) {
      tops[name] = namespace(servers[name]!, `tools.${name}`);
    }
    return namespace(tops, "tools");
  }

  // Stack lines as in the model's code: its line 1 shares the module's first
  // line with CODE_HEAD, whose width comes off that line's columns.
  function clean(text: string): string {
    const lines: string[] = [];
    let caretShift = false;
    for (let line of String(text).split("\n")) {
      if (ownFrame.test(line)) continue;
      line = line.replace(
        /data:application\/typescript,[^\s)]*?:(\d+):(\d+)/g,
        (_, l: string, c: string) =>
          `code:${l}:${
            l === "1" ? Math.max(1, Number(c) - config.head.length) : c
          }`,
      ).replace("Module.default", "run_code");
      if (caretShift) {
        line = line.replace(
          /^(\s*\| )( {0,200})/,
          (_, bar: string, pad: string) =>
            bar + pad.slice(Math.min(pad.length, config.head.length)),
        );
        caretShift = false;
      }
      if (/^\s*1 \| /.test(line) && line.includes(config.head)) {
        line = line.replace(config.head, "");
        caretShift = true;
      }
      lines.push(line);
    }
    return lines.join("\n");
  }

  function fail(error: unknown): never {
    let name = "Error";
    let message = "";
    let stack = "";
    try {
      if (error instanceof Error) {
        name = String(error.name);
        message = String(error.message);
        stack = String(error.stack ?? "");
      } else {
        name = typeof error;
        message = typeof error === "string" ? error : inspect(error);
      }
      const syntax = /^SyntaxError: /.exec(message);
      if (syntax !== null && name === "TypeError") {
        name = "SyntaxError";
        message = message.slice(syntax[0].length);
        stack = "";
      }
      const first = stack.indexOf("\n    at ");
      stack = first < 0 ? "" : clean(stack.slice(first + 1));
      message = clean(message);
    } catch {
      // A hostile error object: report what was read.
    }
    send({
      t: "fail",
      name: name.slice(0, 200),
      message: encoder.encode(message.slice(0, 20_000)),
      stack: encoder.encode(stack.slice(0, 20_000)),
    });
    exit(1);
  }

  function log(level: string, args: unknown[]): void {
    let text: string;
    try {
      text = args.map((a) =>
        typeof a === "string"
          ? a
          : inspect(a, { depth: 6, colors: false, iterableLimit: 1000 })
      ).join(" ");
    } catch (error) {
      text = `(a value that cannot be shown: ${String(error)})`;
    }
    send({ t: "log", level, text: encoder.encode(text) });
  }
  for (const level of ["log", "info", "debug", "warn", "error"] as const) {
    console[level] = (...args: unknown[]) => log(level, args);
  }
  console.dir = (value: unknown) => log("log", [value]);
  console.trace = (...args: unknown[]) => log("error", args);
  // A Worker is a second heap past the heap limit: the data-segment limit
  // would end the run with code_memory; without one the code learns why.
  Reflect.deleteProperty(globalThis, "Worker");
  globalThis.addEventListener("error", (event) => {
    event.preventDefault();
    log("error", ["Uncaught", event.error ?? event.message]);
  });
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    log("error", ["Unhandled rejection:", event.reason]);
  });

  async function start(message: Json): Promise<void> {
    if (message.results === "value") results = "value";
    const tools = toolsOf(message.names);
    const code = decoder.decode(message.code as Uint8Array);
    // Percent-encoded down to the parentheses, which end a stack frame's location.
    const url = `data:application/typescript,${
      encodeURIComponent(`${config.head}${code}\n}}\n`).replace(
        /[()'!*]/g,
        (c) => `%${c.charCodeAt(0).toString(16)}`,
      )
    }`;
    try {
      const module = await import(url);
      const value = await module.default(
        tools,
        callTool,
        ToolError,
        textOf,
        json,
        loom,
      );
      send({ t: "done", json: jsonBytes(value ?? null, "The returned value") });
    } catch (error) {
      fail(error);
    }
    exit(0);
  }

  let started = false;
  const push = reader((frame) => {
    const message = frame as Json;
    if (message.t === "start" && !started) {
      started = true;
      start(message);
    } else if (message.t === "reply") {
      const waiter = waiting.get(message.id as number);
      if (waiter === undefined) return;
      waiting.delete(message.id as number);
      settled();
      if (message.ok === true) waiter.resolve(message.json as Uint8Array);
      else {
        const error = message.error as { code?: string; message?: string };
        waiter.reject(
          new LoomError(String(error?.code), String(error?.message)),
        );
      }
    }
  }, 0x7fffffff);
  (async () => {
    try {
      for await (const chunk of Deno.stdin.readable) push(chunk);
    } catch {
      // The host went away.
    }
    exit(3);
  })();
}
