/**
 * The options every SDK adapter takes, and their defaults.
 *
 * @module
 */
import type { ResultStore } from "../store/result_store.ts";

/** Results whose serialized size passes this go into the store (8 KiB). */
export const DEFAULT_OFFLOAD_BYTES = 8192;
/** A request above this retires old tool results (48 KiB). */
export const DEFAULT_BUDGET_BYTES = 49_152;

/** The options every adapter takes. */
export interface AdapterOptions {
  /** Where results go; default one in-memory store shared by the adapters. */
  readonly store?: ResultStore;
  /** A result larger than this (UTF-8 bytes, serialized) is stored (8,192). */
  readonly offloadBytes?: number;
  /** A request larger than this retires its oldest tool results (49,152). */
  readonly budgetBytes?: number;
}
