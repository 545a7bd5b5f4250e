import fc from "fast-check";
import { SECTION_NAMES } from "../../lib/context/section.ts";
import {
  Context,
  IdPool,
  ImageEntry,
  type Role,
  type SectionName,
  StringEntry,
} from "../../mod.ts";
import { PNG, PNG2 } from "./_helpers.ts";

interface EntrySpec {
  readonly section: SectionName;
  readonly kind: "text" | "image";
  readonly text: string;
  readonly role: Role;
  readonly name: string | undefined;
  readonly visitor: number;
}

const entrySpec: fc.Arbitrary<EntrySpec> = fc.record({
  section: fc.constantFrom(...SECTION_NAMES),
  kind: fc.constantFrom("text", "text", "text", "image"),
  text: fc.oneof(
    fc.constantFrom("", " ", "same", "\n"),
    fc.string({ maxLength: 12 }),
  ),
  role: fc.constantFrom<Role>("system", "user", "assistant"),
  name: fc.option(fc.constantFrom("a", "b"), { nil: undefined }),
  visitor: fc.integer({ min: 0, max: 2 }),
});

/** A root context with up to two nested visitors and random entries of every kind and role. */
export const randomContext: fc.Arbitrary<Context> = fc.array(entrySpec, {
  maxLength: 30,
})
  .map((specs) => {
    const ids = new IdPool({ length: 4, seed: 1 });
    const contexts = [0, 1, 2].map((i) => new Context(`c${i}`, { ids }));
    contexts[0]!.include(contexts[1]!);
    contexts[1]!.include(contexts[2]!);
    for (const spec of specs) {
      const name = spec.name === undefined ? {} : { name: spec.name };
      const entry = spec.kind === "image"
        ? new ImageEntry({
          data: spec.text.length % 2 === 0 ? PNG : PNG2,
          mediaType: "image/png",
          role: spec.role === "assistant" ? "user" : spec.role,
          ids,
          ...name,
        })
        : new StringEntry(spec.text, { role: spec.role, ids, ...name });
      contexts[spec.visitor]![spec.section].add(entry);
    }
    return contexts[0]!;
  });

/** Up to four distinct section names. */
export const breakpoints: fc.Arbitrary<SectionName[]> = fc.uniqueArray(
  fc.constantFrom(...SECTION_NAMES),
  { maxLength: 4 },
);
