import { Context, IdPool } from "../../mod.ts";

/** A fresh two-character pool, as the upstream fixtures use. */
export function pool(seed = 42): IdPool {
  return new IdPool({ length: 2, seed });
}

/** A context with its own pool, so tests never touch the shared one. */
export function context(name = "test", ids: IdPool = pool()): Context {
  return new Context(name, { ids });
}

/** A temporary directory removed by the returned disposer. */
export function tempDir(): { path: string; [Symbol.dispose](): void } {
  const path = Deno.makeTempDirSync({ prefix: "loom_context_" });
  return {
    path,
    [Symbol.dispose]: () => Deno.removeSync(path, { recursive: true }),
  };
}

/** 1×1 transparent PNG. */
export const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
/** Another image's data. */
export const PNG2 = "R0lGODlhAQABAAAAACw=";
