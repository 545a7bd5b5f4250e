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
  type LoomError,
  type LoomErrorCode,
  type LoomErrorOptions,
} from "./lib/errors.ts";
export {
  type AnthropicMessage,
  type AnthropicMessages,
  type AnthropicOptions,
  type Base64ImageSource,
  type CacheTtl,
  type Compactor,
  CompileOptionsError,
  type ContentBlock,
  Context,
  ContextFileError,
  type ContextOptions,
  detectImageMediaType,
  Entry,
  type EntryOptions,
  type EphemeralCacheControl,
  FileEntry,
  type FileEntryOptions,
  type FileProblem,
  type FileSnapshot,
  IdPool,
  IdPoolExhaustedError,
  type IdPoolOptions,
  type ImageContentBlock,
  ImageEntry,
  type ImageEntryInit,
  type ImageEntryOptions,
  type ImageMediaType,
  IncludeCycleError,
  InvalidEntryError,
  loadContextFile,
  type LoadContextFileOptions,
  type Message,
  type MessageOptions,
  type OpenAIAssistantMessage,
  type OpenAIImagePart,
  type OpenAIMessage,
  type OpenAIOptions,
  type OpenAISystemMessage,
  type OpenAITextPart,
  type OpenAIUserMessage,
  type RedactOptions,
  type RememberOptions,
  type RenderOptions,
  type Role,
  Section,
  type SectionName,
  type SectionNameInput,
  type SectionOptions,
  StringEntry,
  StubCompactor,
  type TextContentBlock,
  UnknownEntryError,
} from "./lib/context/mod.ts";
