import { CompileOptionsError } from "./errors.ts";
import type { EphemeralCacheControl, MessageOptions } from "./message.ts";
import { SECTION_NAMES, type SectionName } from "./section.ts";

export const MAX_BREAKPOINTS = 4;

export interface ResolvedOptions {
  readonly sections: ReadonlySet<SectionName>;
  readonly breakpoints: ReadonlySet<SectionName>;
  readonly cacheControl: EphemeralCacheControl;
  readonly clearVolatile: boolean;
}

export function sectionName(name: unknown, what: string): SectionName {
  const lower = typeof name === "string" ? name.toLowerCase() : undefined;
  if (
    lower !== undefined && (SECTION_NAMES as readonly string[]).includes(lower)
  ) {
    return lower as SectionName;
  }
  throw new CompileOptionsError(
    "unknown_section",
    `Unknown section '${String(name)}' in ${what}: sections are ${
      SECTION_NAMES.join(", ")
    }`,
  );
}

export function resolveOptions(options: MessageOptions): ResolvedOptions {
  const breakpoints = new Set<SectionName>();
  for (const name of options.cacheBreakpoints ?? []) {
    breakpoints.add(sectionName(name, "cacheBreakpoints"));
  }
  if (breakpoints.size > MAX_BREAKPOINTS) {
    throw new CompileOptionsError(
      "too_many_breakpoints",
      `Cannot set ${breakpoints.size} cache breakpoints: a request takes at most ${MAX_BREAKPOINTS}`,
    );
  }
  const sections = options.sections === undefined
    ? new Set(SECTION_NAMES)
    : new Set(options.sections.map((name) => sectionName(name, "sections")));
  const cacheControl: EphemeralCacheControl = { type: "ephemeral" };
  const ttl = options.cacheTtl as unknown;
  if (ttl === "5m" || ttl === 300) cacheControl.ttl = "5m";
  else if (ttl === "1h" || ttl === 3600) cacheControl.ttl = "1h";
  else if (ttl !== undefined) {
    throw new CompileOptionsError(
      "invalid_ttl",
      `Cannot use cache TTL ${
        JSON.stringify(ttl)
      }: it must be "5m" or "1h" (300 or 3600 seconds)`,
    );
  }
  return {
    sections,
    breakpoints,
    cacheControl,
    clearVolatile: options.clearVolatile !== false,
  };
}
