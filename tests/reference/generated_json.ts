// Generated JSON documents shared by the reference tests and benches.
const encoder = new TextEncoder();

/** A deterministic ~16 MiB document: records with text, numbers, nesting. */
export function generated(): Uint8Array {
  const words = ["alpha", "beta", "gamma", "délta", "ε", "日本語", "😀", "z"];
  const parts: string[] = [];
  let size = 0;
  let i = 0;
  let seed = 1;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed;
  };
  while (size < 16 * 1024 * 1024 - 512) {
    const record = JSON.stringify({
      id: i,
      name: `${words[next() % 8]} ${words[next() % 8]} #${i}`,
      score: (next() % 100000) / 7,
      big: `${next()}${next()}${next()}`,
      tags: [words[next() % 8], words[next() % 8], next() % 2 === 0],
      nested: { path: `src/m${i % 97}/f${i}.ts`, lines: [1, next() % 500] },
      note: i % 50 === 0 ? 'quote " backslash \\ newline \n tab \t' : null,
    }).replace(/"big":"(\d+)"/, '"big":$1');
    parts.push(record);
    size += encoder.encode(record).length + 1;
    i++;
  }
  return encoder.encode("[" + parts.join(",") + "]");
}

/** A 16 MiB object of ~740,000 members: the worst case for name lookup. */
export function wide(): Uint8Array {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < 16 * 1024 * 1024 - 64; i++) {
    const member = `"member-${i}":${i}`;
    parts.push(member);
    size += member.length + 1;
  }
  return encoder.encode("{" + parts.join(",") + "}");
}
