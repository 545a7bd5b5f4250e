// The code runner's test kit: a bridge that records what reaches it, a TCP
// listener that counts connections (the network attacks), the process tree
// of a run (the outlive attack), and one call that runs code and reports an
// answer or a failure alike.
import { type CodeBridge, CodeRunner } from "../../lib/code/code_runner.ts";
import type { CodeName } from "../../lib/code/code_names.ts";
import { codeNames } from "../../lib/code/code_names.ts";

/** A bridge whose tools are functions of the test, recording each call. */
export interface RecordingBridge extends CodeBridge {
  /** Calls that reached the bridge, in order. */
  readonly calls: { server: string; tool: string; args: unknown }[];
  /** The most calls in flight at once. */
  readonly peak: () => number;
  /** Stored texts. */
  readonly stored: { text: string; json: boolean; mediaType?: string }[];
}

/** Tool implementations by `server/tool`. */
export type ToolImpl = (
  args: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<Record<string, unknown>> | Record<string, unknown>;

/** A bridge over `impls`; `read` answers from `reads` by result id. */
export function recordingBridge(
  impls: Readonly<Record<string, ToolImpl>> = {},
  reads: Readonly<Record<string, unknown>> = {},
): RecordingBridge {
  const calls: RecordingBridge["calls"] = [];
  const stored: RecordingBridge["stored"] = [];
  let live = 0;
  let peak = 0;
  return {
    calls,
    stored,
    peak: () => peak,
    async callTool(server, tool, args, signal) {
      calls.push({ server, tool, args });
      const impl = impls[`${server}/${tool}`];
      if (impl === undefined) {
        throw Object.assign(new Error(`No tool ${server}/${tool}`), {
          code: "unknown_tool",
        });
      }
      live++;
      peak = Math.max(peak, live);
      try {
        return await impl(args, signal);
      } finally {
        live--;
      }
    },
    read(reference) {
      const id = (reference as { result?: string })?.result ?? "";
      if (!(id in reads)) {
        return Promise.reject(
          Object.assign(new Error(`No stored result has the id ${id}`), {
            code: "unknown_result",
          }),
        );
      }
      return Promise.resolve(reads[id]);
    },
    store(text, options) {
      stored.push({ text, ...options });
      return Promise.resolve({
        result: `result-${stored.length}`,
        utf8_bytes: new TextEncoder().encode(text).length,
      });
    },
  };
}

/** Code names for `server/tool` keys. */
export function toolNames(keys: readonly string[]): CodeName[] {
  return codeNames(keys.map((key) => {
    const [server, ...rest] = key.split("/");
    return { server: server!, tool: rest.join("/") };
  }));
}

/** A run's answer or its failure, for assertions. */
export type Attempt =
  | {
    readonly ok: true;
    readonly result: unknown;
    readonly logs: readonly string[];
  }
  | {
    readonly ok: false;
    readonly code: string;
    readonly message: string;
    readonly logs: readonly string[];
  };

/** Runs `code` and reports an answer or a failure alike. */
export async function attempt(
  runner: CodeRunner,
  code: string,
  options: {
    readonly bridge?: CodeBridge;
    readonly tools?: readonly CodeName[];
    readonly timeoutMs?: number;
  } = {},
): Promise<Attempt> {
  try {
    const outcome = await runner.run(code, {
      tools: options.tools ?? [],
      bridge: options.bridge ?? recordingBridge(),
      ...(options.timeoutMs === undefined
        ? {}
        : { timeoutMs: options.timeoutMs }),
    });
    return { ok: true, result: outcome.result, logs: outcome.logs };
  } catch (error) {
    const e = error as { code?: string; message?: string; logs?: string[] };
    return {
      ok: false,
      code: String(e.code),
      message: String(e.message),
      logs: e.logs ?? [],
    };
  }
}

/** A 127.0.0.1 listener that counts connections and answers a JS module. */
export interface CountingListener extends AsyncDisposable {
  readonly port: number;
  connections(): number;
}

/** Starts a {@linkcode CountingListener} on a free port. */
export function countingListener(): CountingListener {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let count = 0;
  const open = new Set<Deno.Conn>();
  const serving = (async () => {
    for await (const conn of listener) {
      count++;
      open.add(conn);
      (async () => {
        try {
          await conn.read(new Uint8Array(4096));
          const body = 'export default "from the listener";\n';
          await conn.write(new TextEncoder().encode(
            `HTTP/1.1 200 OK\r\ncontent-type: application/javascript\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
          ));
        } catch {
          // The client went away.
        } finally {
          open.delete(conn);
          try {
            conn.close();
          } catch {
            // Closed.
          }
        }
      })();
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    connections: () => count,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch {
          // Closed.
        }
      }
      await serving;
    },
  };
}

/** One process as `ps` lists it. */
interface Listed {
  readonly pid: number;
  readonly ppid: number;
  readonly state: string;
  readonly args: string;
}

/** Every process of the machine (by `ps`: Deno reads /proc only with --allow-all). */
export function processes(): Listed[] {
  const out = new Deno.Command("ps", {
    args: ["-eo", "pid=,ppid=,stat=,args="],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").flatMap((line) => {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    return m === null
      ? []
      : [{ pid: Number(m[1]), ppid: Number(m[2]), state: m[3]!, args: m[4]! }];
  });
}

/** This process's children whose command line mentions `marker`. */
export function childrenMarked(marker: string): number[] {
  return processes()
    .filter((p) => p.ppid === Deno.pid && p.args.includes(marker))
    .map((p) => p.pid);
}

/** The processes `roots` and all their descendants, now. */
export function processTree(roots: readonly number[]): number[] {
  const all = processes();
  const found: number[] = [];
  const visit = (pid: number) => {
    found.push(pid);
    for (const p of all) if (p.ppid === pid) visit(p.pid);
  };
  for (const root of roots) {
    if (all.some((p) => p.pid === root)) visit(root);
  }
  return found;
}

/** Whether a process is alive (a zombie counts as gone). */
export function alive(pid: number): boolean {
  const found = processes().find((p) => p.pid === pid);
  return found !== undefined && !found.state.startsWith("Z");
}

export { CodeRunner };
