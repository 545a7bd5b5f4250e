// The tests' raw JSON-RPC servers read their standard input with this: one
// line at a time, blank lines skipped.

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
