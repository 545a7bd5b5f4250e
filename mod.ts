/**
 * Loom: a context engine for LLM agents. This root entry point is for
 * **composing prompts**: entries in six ordered sections, included contexts,
 * ids, context files, and the Anthropic/OpenAI message shapes they render to,
 * with their errors. The other audiences have their own entry points:
 * `@loom/loom/reference` (result store, JSON scanner, pointers, selections,
 * lookups), `@loom/loom/slice` (run a governed coding slice with a model
 * provider), `@loom/loom/session` (sessions and tool-result persistence),
 * `@loom/loom/testing` (test doubles) and `@loom/loom/cli` (the command line).
 *
 * @example Compose a prompt and render it
 * ```ts
 * import { Context, StringEntry } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const ctx = new Context("agent");
 * ctx.foundation.add(new StringEntry("You are terse."));
 * ctx.focus.add(new StringEntry("Fix the failing test."));
 * assert.match(ctx.render(), /You are terse\./);
 * ```
 * @module
 */
export { VERSION } from "./lib/version.ts";
export {
  isLoomError,
  LoomError,
  type LoomErrorCode,
  type LoomErrorOptions,
} from "./lib/errors.ts";
export {
  type AnthropicMessage,
  type AnthropicMessages,
  type AnthropicOptions,
} from "./lib/context/anthropic.ts";
export {
  type Compactor,
  Context,
  type ContextOptions,
  type RedactOptions,
  type RememberOptions,
} from "./lib/context/context.ts";
export { Entry, type EntryOptions, type Role } from "./lib/context/entry.ts";
export { StubCompactor } from "./lib/context/stub_compactor.ts";
export {
  CompileOptionsError,
  IdPoolExhaustedError,
  IncludeCycleError,
  InvalidEntryError,
  UnknownEntryError,
} from "./lib/context/errors.ts";
export {
  FileEntry,
  type FileEntryOptions,
  type FileSnapshot,
} from "./lib/context/file_entry.ts";
export { IdPool, type IdPoolOptions } from "./lib/context/id_pool.ts";
export {
  detectImageMediaType,
  ImageEntry,
  type ImageEntryOptions,
  type ImageMediaType,
} from "./lib/context/image_entry.ts";
export {
  type ContentBlock,
  type EphemeralCacheControl,
  type ImageContentBlock,
  type Message,
  type MessageOptions,
  type TextContentBlock,
} from "./lib/context/message.ts";
export {
  type OpenAIImagePart,
  type OpenAIMessage,
  type OpenAIOptions,
  type OpenAITextPart,
} from "./lib/context/openai.ts";
export {
  Section,
  type SectionName,
  type SectionNameInput,
  type SectionOptions,
} from "./lib/context/section.ts";
export { StringEntry } from "./lib/context/string_entry.ts";
export {
  ContextFileError,
  loadContextFile,
  type LoadContextFileOptions,
} from "./lib/context/context_file.ts";
