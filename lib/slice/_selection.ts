/** Parsing of the model's action selection. */
import { type ActionName, isActionName } from "./_schema.ts";

/** A parsed selection: an admissible action or a refusal. */
export type Selection =
  | { readonly ok: true; readonly action: ActionName }
  | {
    readonly ok: false;
    readonly action: string;
    readonly code: string;
    readonly reason: string;
  };

/**
 * Parses a selection against the candidate actions.
 *
 * @param value The selection the model gave.
 * @param candidates The actions offered this step.
 * @returns The action, or why the selection is refused.
 */
export function parseSelection(
  value: unknown,
  candidates: readonly string[],
): Selection {
  if (
    value === null || typeof value !== "object" || Array.isArray(value) ||
    Object.keys(value).length !== 1 ||
    typeof (value as { action?: unknown }).action !== "string"
  ) {
    return {
      ok: false,
      action: "select_action",
      code: "invalid_selection",
      reason:
        'The selection must be {"action": <one of the candidate actions>} or one lookup',
    };
  }
  const action = (value as { action: string }).action;
  if (!isActionName(action) || !candidates.includes(action)) {
    const shown = action.length > 64 ? `${action.slice(0, 64)}…` : action;
    return {
      ok: false,
      action: shown,
      code: "not_a_candidate",
      reason: `${JSON.stringify(shown)} is not one of the candidate actions ${
        JSON.stringify(candidates)
      }`,
    };
  }
  return { ok: true, action };
}
