// The tests' raw JSON-RPC servers read their standard input with this (one
// line at a time, blank lines skipped) and write their messages with it.

const encoder = new TextEncoder();

/** Writes all of `bytes` to standard output (a pipe may take a part). */
export function writeAll(bytes: Uint8Array): void {
  let at = 0;
  while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
}

/** Writes one JSON-RPC message as a line. */
export function send(message: unknown): void {
  writeAll(encoder.encode(JSON.stringify(message) + "\n"));
}

/** Answers request `id` with a tool result of one text block. */
export function answerText(id: unknown, text: string): void {
  send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text }] } });
}

/** Answers `initialize` in the client's protocol version. */
export function answerInitialize(
  id: unknown,
  params: { protocolVersion?: unknown } | undefined,
  name: string,
  capabilities: Record<string, unknown>,
): void {
  send({
    jsonrpc: "2.0",
    id,
    result: {
      protocolVersion: params?.protocolVersion,
      capabilities,
      serverInfo: { name, version: "1.0.0" },
    },
  });
}

/** Each non-blank line of standard input, as it arrives. */
export async function* stdinLines(): AsyncGenerator<string> {
  let buffer = "";
  const decoder = new TextDecoder();
  for await (const chunk of Deno.stdin.readable) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl = buffer.indexOf("\n");
    while (nl !== -1) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf("\n");
      if (line.trim() !== "") yield line;
    }
  }
}
