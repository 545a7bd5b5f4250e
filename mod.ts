/**
 * Loom: a context engine for LLM agents.
 *
 * - **Compose**: build prompts from entries in six ordered sections and render
 *   them as text or as Anthropic/OpenAI messages whose stable prefix caches.
 * - **Govern**: keep large tool results out of the prompt behind verified
 *   references, bound the working context, and run governed coding slices.
 *
 * @example
 * ```ts
 * import { VERSION } from "@loom/loom";
 * import assert from "node:assert/strict";
 * assert.match(VERSION, /^\d+\.\d+\.\d+$/);
 * ```
 * @module
 */
export { VERSION } from "./lib/version.ts";
export { type CodedError, isCodedError } from "./lib/errors.ts";
export {
  DISPLAY_MAX_CHARS,
  displayText,
  formatDuration,
} from "./lib/display.ts";
export {
  type AnthropicMessage,
  type AnthropicMessages,
  type AnthropicOptions,
  type Base64ImageSource,
  type CacheTtl,
  type Compactor,
  CompileOptionsError,
  type CompileOptionsErrorCode,
  type ContentBlock,
  Context,
  ContextFileError,
  type ContextFileErrorCode,
  type ContextOptions,
  DEFAULT_FILE_ENTRY_MAX_BYTES,
  detectImageMediaType,
  Entry,
  type EntryOptions,
  type EphemeralCacheControl,
  FileEntry,
  type FileEntryOptions,
  type FileProblem,
  type FileSnapshot,
  type Frontmatter,
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
  parseFrontmatter,
  type RedactOptions,
  type RememberOptions,
  type RenderOptions,
  type Role,
  Section,
  SECTION_NAMES,
  type SectionName,
  type SectionNameInput,
  type SectionOptions,
  StringEntry,
  StubCompactor,
  type TextContentBlock,
  UnknownEntryError,
} from "./lib/context/mod.ts";
export {
  type CacheControl,
  requestBytes,
  serializeTurnRequest,
  stableStringify,
  textEndOffset,
  type TurnMessage,
  type TurnRequest,
  type TurnTextBlock,
  type TurnTool,
} from "./lib/briefing/turn_request.ts";
export {
  Briefing,
  type BriefingLimits,
  type BriefingOptions,
  type ContextPolicy,
  DEFAULT_BRIEFING_LIMITS,
  type TurnInfo,
  type TurnOptions,
} from "./lib/briefing/briefing.ts";
export {
  type ActionRecord,
  type EditedFile,
  type EditedReport,
  type ExecutionReport,
  type InspectedFile,
  type InspectedReport,
  type RefusedReport,
  type TestsRunReport,
} from "./lib/briefing/report.ts";
export {
  type BriefingEvent,
  compactArguments,
  type CompactEditedFile,
  type CompactReport,
  serializeEvent,
  toEvent,
} from "./lib/briefing/event.ts";
export {
  ArchiveCapacityError,
  EventArchive,
  type EventArchiveOptions,
  MAX_ARCHIVED_BYTES,
  MAX_ARCHIVED_EVENTS,
} from "./lib/briefing/event_archive.ts";
export {
  type LatestRefusal,
  type LatestTest,
  MAX_RECENT_ARTIFACTS,
  WorkingState,
  type WorkingStateJson,
} from "./lib/briefing/working_state.ts";
export {
  type AddRequestOptions,
  type BuildReportOptions,
  commonPrefixLength,
  type ContextReport,
  ContextReportBuilder,
  type ContextReportRequest,
  type ReportUsage,
  type StopReason,
} from "./lib/briefing/context_report.ts";
export { RequestCeilingError } from "./lib/briefing/request_ceiling_error.ts";
export {
  type ModelCall,
  type ModelPhase,
  type ModelProvider,
  type ModelReply,
  type ModelToolName,
  type ModelUsage,
} from "./lib/providers/model_provider.ts";
export {
  type ProtocolProblem,
  ProviderError,
  type ProviderErrorCode,
  type ProviderErrorOptions,
} from "./lib/providers/provider_error.ts";
export {
  MAX_REPLY_DEPTH,
  nestsDeeperThan,
} from "./lib/providers/reply_depth.ts";
export {
  CacheControlError,
  type CacheControlErrorCode,
} from "./lib/providers/cache_control_error.ts";
export {
  RecordedProvider,
  type RecordedProviderOptions,
} from "./lib/providers/recorded_provider.ts";
export {
  createProvider,
  type CreateProviderOptions,
} from "./lib/providers/create_provider.ts";
export {
  type Capture,
  type CatalogueItem,
  type CataloguePage,
  type CompactDescriptor,
  compactDescriptor,
  InvalidUtf8Error,
  type PutOptions,
  type ResultDescriptor,
  type ResultReference,
  ResultRestoreError,
  ResultStore,
  type ResultStoreOptions,
  type ResultUnavailable,
  type Selector,
  type StoredResult,
} from "./lib/store/result_store.ts";
export { sha256Hex } from "./lib/store/digest.ts";
export {
  decodeJsonString,
  type JsonIndex,
  type JsonKind,
  JsonScanError,
  type JsonScanErrorCode,
  type JsonSpan,
  scanJson,
} from "./lib/reference/json_scanner.ts";
export {
  formatPointer,
  parsePointer,
  PointerError,
  type PointerErrorCode,
} from "./lib/reference/pointer.ts";
export {
  ReferenceFailure,
  type ReferenceFailureCode,
  select,
  type SelectableRecord,
  type SelectionResult,
  type SelectOptions,
} from "./lib/reference/selection.ts";
export {
  type HistoryItem,
  type HistoryPage,
  type HistorySource,
  isLookupRequest,
  type LookupAnswer,
  LookupBudgetExceeded,
  LookupSession,
  type LookupSessionOptions,
  type LookupStage,
} from "./lib/reference/lookup_session.ts";
export {
  EditExpansionError,
  expandEditContents,
  type ExpandEditContentsOptions,
} from "./lib/reference/edit_contents.ts";
export {
  DEFAULT_PERSISTENCE_THRESHOLD,
  isSelfBounding,
  type PersistenceOverrides,
  persistenceThreshold,
  shouldPersist,
  TOOL_DECLARATIONS,
  type ToolDeclaration,
  toolDeclaration,
  UnknownToolError,
} from "./lib/persist/tool_policy.ts";
export {
  loadPersistenceConfig,
  mergePersistenceConfigs,
  parsePersistenceConfig,
  parseThresholdFlags,
  type PersistenceConfig,
  PersistenceConfigError,
} from "./lib/persist/persistence_config.ts";
export {
  SessionError,
  type SessionErrorCode,
  type SessionErrorDetails,
} from "./lib/persist/session_error.ts";
export { EphemeralSession } from "./lib/persist/ephemeral_session.ts";
export {
  type CreateSessionOptions,
  JOURNAL_FILE,
  type LoadedSession,
  type OpenSessionOptions,
  RESULTS_DIR,
  type SessionRun,
  type SessionSaveInfo,
  SessionStore,
  type SessionTest,
  type UnavailableResult,
  verifySession,
} from "./lib/persist/session_store.ts";
export {
  loadSessionKey,
  SESSION_KEY_ENV,
  sessionKeyPath,
} from "./lib/persist/session_key.ts";
export {
  type EphemeralScope,
  openSession,
  type OwnerScope,
  type SessionHandle,
  type SessionScope,
} from "./lib/persist/session_scope.ts";
export {
  collectGarbage,
  type GarbageReport,
} from "./lib/persist/session_gc.ts";
export {
  listSessions,
  type SessionListing,
  type SessionResultSummary,
  type SessionSummary,
  summarizeSession,
} from "./lib/persist/session_summary.ts";
export {
  type RequestByteFigures,
  type SliceOutcome,
  type SliceStop,
  type SliceTestResult,
} from "./lib/slice/outcome.ts";
export { type RevisionFile, revisionId } from "./lib/slice/revision.ts";
export {
  type RunOptions,
  runSlice,
  runWithOptions,
  type SliceRequest,
  SliceRequestError,
  type SliceTest,
  type StepProgress,
  type WaitingProgress,
} from "./lib/slice/run.ts";
export {
  actionJsonSchema,
  type ActionName,
  ACTIONS,
  type ActionSpec,
  admissibleActions,
  type Admission,
  type CompleteArguments,
  type EditArguments,
  type EditFileArguments,
  type EditReference,
  type EditSegment,
  type ExpandedEditArguments,
  type InspectArguments,
  isActionName,
  type PersistenceClass,
  selectActionSchema,
  type TestsRunArguments,
} from "./lib/slice/actions.ts";
export {
  commission,
  type CommissionAdmitted,
  type CommissionedArguments,
  type CommissionOptions,
  type CommissionRefusal,
  type CommissionResult,
  type RefusalCode,
} from "./lib/slice/commission.ts";
export {
  type EditedFileDigest,
  type InspectedFileText,
  TEST_OUTPUT_TAIL_BYTES,
  type TestRunOutcome,
  WorkspaceExecutor,
  type WorkspaceExecutorOptions,
} from "./lib/executor/workspace_executor.ts";
export { ConfinementUnavailable } from "./lib/executor/confinement_unavailable.ts";
export {
  ExecutorError,
  type ExecutorErrorCode,
} from "./lib/executor/executor_error.ts";
export {
  type LastTurn,
  SLICE_COUNTERS,
  type SliceCheckpoint,
  type SliceCounter,
  type SliceCounters,
  type SliceResume,
  type SliceSessionHooks,
  type SliceState,
  type UnavailableResultEntry,
} from "./lib/slice/checkpoint.ts";
export {
  resumeOf,
  sliceSessionHooks,
  type SliceSessionOptions,
} from "./lib/persist/slice_session.ts";
