/** Reading API keys from an injected environment or Deno.env. */

import { messageOf } from "../errors.ts";

export type Env = Readonly<Record<string, string | undefined>>;

export interface KeyLookup {
  readonly key: string | undefined;
  /** Why the environment could not be read, when it could not. */
  readonly problem?: string;
}

/** Reads `name` from `env` when given (exclusively), else from Deno.env; blank counts as unset. */
export function readKey(name: string, env: Env | undefined): KeyLookup {
  if (env !== undefined) return { key: nonBlank(env[name]) };
  try {
    return { key: nonBlank(Deno.env.get(name)) };
  } catch (error) {
    const why = messageOf(error);
    return { key: undefined, problem: `cannot read the environment (${why})` };
  }
}

function nonBlank(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}
