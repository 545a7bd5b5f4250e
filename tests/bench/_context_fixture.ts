// The context bench's fixture and its floor: `build(n)` spreads n entries
// over six sections of a root and four visitors (two nested) with roles,
// names and 5% duplicates; `pieces` are the strings render() joins, computed
// through the public API only (visitor order, dedup by identity, `# NAME`
// headers, banners and labels glued to the first or last text of their run).
import { SECTION_NAMES } from "../../lib/context/section.ts";
import {
  Context,
  IdPool,
  type Role,
  type SectionName,
  StringEntry,
} from "../../mod.ts";

const PROBE = "\u2063banner probe\u2063";

/** The lines around a section's entries, read off the render of one entry. */
function bannerOf(section: SectionName): readonly [string, string] {
  const ctx = new Context("probe", { ids: new IdPool({ seed: 2 }) });
  ctx[section].add(PROBE);
  const [prefix = "", postfix = ""] = ctx.render().split(PROBE);
  return [prefix.replace(/\n$/, ""), postfix.replace(/^\n/, "")];
}

const BANNER = Object.fromEntries(
  SECTION_NAMES.map((section) => [section, bannerOf(section)]),
) as Readonly<Record<SectionName, readonly [string, string]>>;

const LABEL: Readonly<Record<SectionName, (name: string) => string>> = {
  foundation: (name) => `># ${name} (visitor)`,
  focus: (name) => `># Focus from ${name}`,
  topic: (name) => `># Topic from ${name}`,
  convo: (name) => `># Conversation from ${name}`,
  step: (name) => name,
  attention: (name) => `># Attention from ${name}`,
};

function order(root: Context, section: SectionName): Context[] {
  if (section === "step") return [root];
  const selfFirst = section === "foundation" || section === "topic";
  const out: Context[] = [];
  const seen = new Set<Context>();
  const visit = (ctx: Context): void => {
    if (seen.has(ctx)) return;
    seen.add(ctx);
    if (selfFirst) out.push(ctx);
    for (const visitor of ctx.visitors) visit(visitor);
    if (!selfFirst) out.push(ctx);
  };
  visit(root);
  return out;
}

/** The pieces whose `join("\n\n")` is `root.render()`. */
function pieceTexts(root: Context): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const section of SECTION_NAMES) {
    const start = out.length;
    for (const owner of order(root, section)) {
      const group = out.length;
      for (const entry of owner[section].entries) {
        if (section !== "step") {
          if (seen.has(entry.identity())) continue;
          seen.add(entry.identity());
        }
        const body = entry.compile();
        if (body.trim() === "") continue;
        // Flat copies, as fresh as the compiler's own cached texts.
        out.push(entry.name === undefined ? body : `# ${entry.name}\n${body}`);
      }
      if (owner !== root && out.length > group) {
        out[group] = `${LABEL[section](owner.name)}\n${out[group]}`;
      }
    }
    if (out.length === start) continue;
    const [prefix, postfix] = BANNER[section];
    if (prefix !== "") out[start] = `${prefix}\n${out[start]}`;
    if (postfix !== "") out[out.length - 1] += `\n${postfix}`;
  }
  return out;
}

const ids = new IdPool({ length: 5, seed: 1 });

/** A built context and the pieces of its render. */
export interface Fixture {
  readonly ctx: Context;
  readonly pieces: string[];
}

/** Builds the context of `count` entries and its baseline pieces. */
export function build(count: number): Fixture {
  const root = new Context("root", { ids });
  const visitors = [1, 2, 3, 4].map((i) =>
    new Context(`visitor-${i}`, { ids })
  );
  root.include(visitors[0]!);
  root.include(visitors[1]!);
  visitors[0]!.include(visitors[2]!);
  visitors[1]!.include(visitors[3]!);
  const owners = [root, ...visitors];
  const roles: Role[] = ["system", "system", "system", "user", "assistant"];
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    // Every 20th entry repeats an earlier text, so dedup has work to do.
    const text = i % 20 === 19
      ? texts[i - 7]!
      : `Entry ${i}: the quick brown fox jumps over the lazy dog ${i * 7919}.`;
    texts.push(text);
    const section = SECTION_NAMES[i % SECTION_NAMES.length]!;
    const owner = section === "step" ? root : owners[i % owners.length]!;
    owner[section].add(
      new StringEntry(text, {
        ids,
        role: roles[i % roles.length]!,
        ...(i % 10 === 0 ? { name: `note-${i}` } : {}),
      }),
    );
  }
  const pieces = pieceTexts(root);
  if (pieces.join("\n\n") !== root.render({ clearVolatile: false })) {
    throw new Error("The baseline pieces do not join to render()'s text");
  }
  return { ctx: root, pieces };
}
