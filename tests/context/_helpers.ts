import {
  Context,
  IdPool,
  ImageEntry,
  type SectionName,
  StringEntry,
} from "../../mod.ts";

/** A fresh two-character pool, as the upstream fixtures use. */
export function pool(seed = 42): IdPool {
  return new IdPool({ length: 2, seed });
}

/** A context with its own pool, so tests never touch the shared one. */
export function context(name = "test", ids: IdPool = pool()): Context {
  return new Context(name, { ids });
}

/** A context whose foundation holds one system rule. */
export function ruled(rule: string): Context {
  const ctx = context();
  ctx.foundation.add(rule);
  return ctx;
}

/** A context with these strings added to these sections, in the order given. */
export function filled(
  sections: Partial<Record<SectionName, readonly string[]>>,
): Context {
  const ctx = context();
  for (const [name, texts] of Object.entries(sections)) {
    for (const text of texts) ctx[name as SectionName].add(text);
  }
  return ctx;
}

/** One entry, "shared", held by two sections of a context. */
export function sharedEntry(
  ctx: Context,
  first: SectionName,
  second: SectionName,
): StringEntry {
  const entry = new StringEntry("shared", { ids: ctx.ids });
  ctx[first].add(entry);
  ctx[second].add(entry);
  return entry;
}

/** A turn of the conversation: its role and text. */
export type Turn = readonly ["user" | "assistant", string];

/** The greeting the SDK type-check tests send after the picture. */
export const GREETING: readonly Turn[] = [
  ["user", "Hi"],
  ["assistant", "Hello!"],
];

/**
 * A context with a rule in foundation, the PNG named "shot" in topic and
 * these turns in convo: the shape every provider output test starts from.
 */
export function pictureContext(rule: string, turns: readonly Turn[]): Context {
  const ctx = ruled(rule);
  ctx.topic.add(
    new ImageEntry({ data: PNG, mediaType: "image/png", name: "shot" }),
  );
  for (const [role, text] of turns) {
    ctx.convo.add(new StringEntry(text, { role }));
  }
  return ctx;
}

/** 1×1 transparent PNG. */
export const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
/** Another image's data. */
export const PNG2 = "R0lGODlhAQABAAAAACw=";
