/**
 * The section compiler: entries in six ordered sections, included contexts,
 * and compilers to text, Anthropic and OpenAI messages.
 *
 * @module
 */
export {
  type AnthropicMessage,
  type AnthropicMessages,
  type AnthropicOptions,
} from "./anthropic.ts";
export {
  type Compactor,
  Context,
  type ContextOptions,
  type RedactOptions,
  type RememberOptions,
} from "./context.ts";
export { Entry, type EntryOptions, type Role } from "./entry.ts";
export { StubCompactor } from "./stub_compactor.ts";
export {
  CompileOptionsError,
  IdPoolExhaustedError,
  IncludeCycleError,
  InvalidEntryError,
  UnknownEntryError,
} from "./errors.ts";
export {
  DEFAULT_FILE_ENTRY_MAX_BYTES,
  FileEntry,
  type FileEntryOptions,
  type FileProblem,
  type FileSnapshot,
} from "./file_entry.ts";
export { type Frontmatter, parseFrontmatter } from "./frontmatter.ts";
export { IdPool, type IdPoolOptions } from "./id_pool.ts";
export {
  detectImageMediaType,
  ImageEntry,
  type ImageEntryInit,
  type ImageEntryOptions,
  type ImageMediaType,
} from "./image_entry.ts";
export {
  type Base64ImageSource,
  type CacheTtl,
  type ContentBlock,
  type EphemeralCacheControl,
  type ImageContentBlock,
  type Message,
  type MessageOptions,
  type RenderOptions,
  type TextContentBlock,
} from "./message.ts";
export {
  type OpenAIAssistantMessage,
  type OpenAIImagePart,
  type OpenAIMessage,
  type OpenAIOptions,
  type OpenAISystemMessage,
  type OpenAITextPart,
  type OpenAIUserMessage,
} from "./openai.ts";
export {
  Section,
  SECTION_NAMES,
  type SectionName,
  type SectionNameInput,
  type SectionOptions,
} from "./section.ts";
export { StringEntry } from "./string_entry.ts";
export {
  ContextFileError,
  loadContextFile,
  type LoadContextFileOptions,
} from "./context_file.ts";
