/**
 * The OpenTelemetry names Loom emits, copied from the semantic conventions
 * (`open-telemetry/semantic-conventions-genai`: `docs/gen-ai/gen-ai-spans.md`,
 * `gen-ai-agent-spans.md`, `gen-ai-metrics.md`, `mcp.md`; the general
 * `error.*`, `server.*`, `network.*` and `jsonrpc.*` registries). The GenAI
 * and MCP names are in Development: `@opentelemetry/semantic-conventions`
 * keeps them in its `incubating` entry point and advises copying them rather
 * than importing it, which is what this file is. The constant names follow
 * that package's (`ATTR_…`, `…_VALUE_…`, `METRIC_…`).
 *
 * Loom's own names (`loom.*`) are at the end, apart from the conventions'.
 *
 * @module
 */

// --- Attributes (registry: gen-ai.md) --------------------------------------

/** The name of the operation being performed (`chat`, `invoke_agent`, `execute_tool`). */
export const ATTR_GEN_AI_OPERATION_NAME = "gen_ai.operation.name";
/** The Generative AI provider as identified by the instrumentation. */
export const ATTR_GEN_AI_PROVIDER_NAME = "gen_ai.provider.name";
/** Human-readable name of the GenAI agent. */
export const ATTR_GEN_AI_AGENT_NAME = "gen_ai.agent.name";
/** The unique identifier for a conversation (session, thread). */
export const ATTR_GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id";
/** The name of the GenAI model a request is being made to. */
export const ATTR_GEN_AI_REQUEST_MODEL = "gen_ai.request.model";
/** The maximum number of tokens the model generates for a request. */
export const ATTR_GEN_AI_REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens";
/** The unique identifier for the completion. */
export const ATTR_GEN_AI_RESPONSE_ID = "gen_ai.response.id";
/** The name of the model that generated the response. */
export const ATTR_GEN_AI_RESPONSE_MODEL = "gen_ai.response.model";
/** Reasons the model stopped generating tokens, one per generation. */
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS =
  "gen_ai.response.finish_reasons";
/** Tokens in the input, cached ones (read and written) included. */
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens";
/** Tokens in the response. */
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens";
/** Input tokens served from a provider-managed cache (part of input tokens). */
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS =
  "gen_ai.usage.cache_read.input_tokens";
/** Input tokens written to a provider-managed cache (part of input tokens). */
export const ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS =
  "gen_ai.usage.cache_creation.input_tokens";
/** Opt-in: the chat history provided to the model. */
export const ATTR_GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages";
/** Opt-in: the messages returned by the model. */
export const ATTR_GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages";
/** Opt-in: the system instructions, apart from the chat history. */
export const ATTR_GEN_AI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions";
/** Opt-in: the tool definitions available to the model. */
export const ATTR_GEN_AI_TOOL_DEFINITIONS = "gen_ai.tool.definitions";
/** Name of the tool utilized by the agent. */
export const ATTR_GEN_AI_TOOL_NAME = "gen_ai.tool.name";
/** The tool call identifier. */
export const ATTR_GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id";
/** Type of the tool (`function`, `extension`, `datastore`). */
export const ATTR_GEN_AI_TOOL_TYPE = "gen_ai.tool.type";
/** Opt-in: parameters passed to the tool call. */
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments";
/** Opt-in: the result returned by the tool call. */
export const ATTR_GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result";
/** The name of the prompt a request is about. */
export const ATTR_GEN_AI_PROMPT_NAME = "gen_ai.prompt.name";
/** The type of token counted (`input`, `output`). */
export const ATTR_GEN_AI_TOKEN_TYPE = "gen_ai.token.type";

/** `gen_ai.operation.name` of a chat completion. */
export const GEN_AI_OPERATION_NAME_VALUE_CHAT = "chat";
/** `gen_ai.operation.name` of an agent invocation. */
export const GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT = "invoke_agent";
/** `gen_ai.operation.name` of a tool execution. */
export const GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL = "execute_tool";
/** `gen_ai.provider.name` of Anthropic. */
export const GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC = "anthropic";
/** `gen_ai.provider.name` of OpenAI (and servers speaking its API). */
export const GEN_AI_PROVIDER_NAME_VALUE_OPENAI = "openai";
/** `gen_ai.token.type` of input tokens. */
export const GEN_AI_TOKEN_TYPE_VALUE_INPUT = "input";
/** `gen_ai.token.type` of output tokens. */
export const GEN_AI_TOKEN_TYPE_VALUE_OUTPUT = "output";
/** `gen_ai.tool.type` of a tool the client executes. */
export const GEN_AI_TOOL_TYPE_VALUE_FUNCTION = "function";

// --- Attributes (registry: mcp.md, jsonrpc, network, error, server) --------

/** The name of the MCP request or notification method. */
export const ATTR_MCP_METHOD_NAME = "mcp.method.name";
/** Identifies the MCP session. */
export const ATTR_MCP_SESSION_ID = "mcp.session.id";
/** The version of the Model Context Protocol used. */
export const ATTR_MCP_PROTOCOL_VERSION = "mcp.protocol.version";
/** The URI of the resource a request is about. */
export const ATTR_MCP_RESOURCE_URI = "mcp.resource.uri";
/** The `id` of a JSON-RPC request, as a string. */
export const ATTR_JSONRPC_REQUEST_ID = "jsonrpc.request.id";
/** The error code of a JSON-RPC response. */
export const ATTR_RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code";
/** The transport: `pipe` for stdio, `tcp` for HTTP. */
export const ATTR_NETWORK_TRANSPORT = "network.transport";
/** The application-layer protocol (`http`). */
export const ATTR_NETWORK_PROTOCOL_NAME = "network.protocol.name";
/** A class of error the operation ended with. */
export const ATTR_ERROR_TYPE = "error.type";
/** Server domain name or address. */
export const ATTR_SERVER_ADDRESS = "server.address";
/** Server port number. */
export const ATTR_SERVER_PORT = "server.port";

/** `network.transport` of stdio. */
export const NETWORK_TRANSPORT_VALUE_PIPE = "pipe";
/** `network.transport` of HTTP. */
export const NETWORK_TRANSPORT_VALUE_TCP = "tcp";
/** `error.type` of a `CallToolResult` with `isError: true`. */
export const ERROR_TYPE_VALUE_TOOL_ERROR = "tool_error";
/** `error.type` when nothing more precise is known. */
export const ERROR_TYPE_VALUE_OTHER = "_OTHER";

// --- Metrics ---------------------------------------------------------------

/** Histogram of input and output tokens used, by `gen_ai.token.type`. */
export const METRIC_GEN_AI_CLIENT_TOKEN_USAGE = "gen_ai.client.token.usage";
/** Histogram of GenAI operation durations in seconds. */
export const METRIC_GEN_AI_CLIENT_OPERATION_DURATION =
  "gen_ai.client.operation.duration";
/** Histogram of tool execution durations in seconds. */
export const METRIC_GEN_AI_EXECUTE_TOOL_DURATION =
  "gen_ai.execute_tool.duration";
/** Histogram of MCP request durations on the server, in seconds. */
export const METRIC_MCP_SERVER_OPERATION_DURATION =
  "mcp.server.operation.duration";
/** Histogram of MCP request durations on the client, in seconds. */
export const METRIC_MCP_CLIENT_OPERATION_DURATION =
  "mcp.client.operation.duration";

/** Bucket boundaries the conventions give `gen_ai.client.token.usage`. */
export const TOKEN_USAGE_BUCKETS: readonly number[] = [
  1,
  4,
  16,
  64,
  256,
  1024,
  4096,
  16384,
  65536,
  262144,
  1048576,
  4194304,
  16777216,
  67108864,
];
/** Bucket boundaries of the GenAI durations (operation, tool). */
export const GEN_AI_DURATION_BUCKETS: readonly number[] = [
  0.01,
  0.02,
  0.04,
  0.08,
  0.16,
  0.32,
  0.64,
  1.28,
  2.56,
  5.12,
  10.24,
  20.48,
  40.96,
  81.92,
];
/** Bucket boundaries of the MCP operation durations. */
export const MCP_DURATION_BUCKETS: readonly number[] = [
  0.01,
  0.02,
  0.05,
  0.1,
  0.2,
  0.5,
  1,
  2,
  5,
  10,
  30,
  60,
  120,
  300,
];

// --- Loom's own names ------------------------------------------------------

/** Why a slice stopped (`completed`, `step_budget`, …). */
export const ATTR_LOOM_SLICE_STOP = "loom.slice.stop";
/** The slice's context policy (`legacy`, `bounded`). */
export const ATTR_LOOM_SLICE_POLICY = "loom.slice.policy";
/** Steps the slice took. */
export const ATTR_LOOM_SLICE_STEPS = "loom.slice.steps";
/** The slice step a span belongs to (1-based). */
export const ATTR_LOOM_STEP = "loom.step";
/** The stage of a model call (`selection`, `arguments`). */
export const ATTR_LOOM_STAGE = "loom.stage";
/** UTF-8 bytes of the provider-neutral request (DESIGN.md "Request bytes"). */
export const ATTR_LOOM_REQUEST_BYTES = "loom.request.bytes";
/** How an action ended: `ok`, `refused` and the like. */
export const ATTR_LOOM_OUTCOME = "loom.outcome";
/** Result ids a span's answer was stored as. */
export const ATTR_LOOM_RESULT_IDS = "loom.result.ids";
/** SHA-256 digests of those results, in the same order. */
export const ATTR_LOOM_RESULT_SHA256 = "loom.result.sha256";
/** Bytes an upstream answered (before offloading). */
export const ATTR_LOOM_BYTES_UPSTREAM = "loom.offload.bytes_upstream";
/** Bytes sent to the host (after offloading). */
export const ATTR_LOOM_BYTES_TO_HOST = "loom.offload.bytes_to_host";
/** The upstream server of a gateway call. */
export const ATTR_LOOM_UPSTREAM = "loom.upstream";
/** Byte sizes of the results in `loom.result.ids`, in the same order. */
export const ATTR_LOOM_RESULT_BYTES = "loom.result.bytes";

/** The span of one `run_code` run (the sandbox executing the model's code). */
export const SPAN_LOOM_CODE_RUN = "run_code";
/** How a run is confined: `bubblewrap`, or `deno-flags-only` (`--code-unconfined`). */
export const ATTR_LOOM_CODE_CONFINEMENT = "loom.code.confinement";
/** The run's deadline in milliseconds. */
export const ATTR_LOOM_CODE_TIMEOUT_MS = "loom.code.timeout_ms";
/** Milliseconds the run waited for a turn (at most four run at once). */
export const ATTR_LOOM_CODE_QUEUED_MS = "loom.code.queued_ms";
/** Tool calls the run made. */
export const ATTR_LOOM_CODE_CALLS = "loom.code.calls";
/** The run's wall time in milliseconds, as its answer says (`ms`). */
export const ATTR_LOOM_CODE_MS = "loom.code.ms";
/** Bytes of console output the run wrote. */
export const ATTR_LOOM_CODE_LOG_BYTES = "loom.code.log_bytes";

/** Event: a retirement checkpoint of the briefing (or an adapter). */
export const EVENT_LOOM_RETIREMENT = "loom.retirement";
/** Event: a test run of a slice. */
export const EVENT_LOOM_TEST_RUN = "loom.test_run";
/** Event: a tool result an adapter offloaded into the store. */
export const EVENT_LOOM_OFFLOAD = "loom.offload";
/** Event: a run's code stored a value (`loom.store`). */
export const EVENT_LOOM_STORE = "loom.store";
/** Event: a run's code read a reference (`loom.read`). */
export const EVENT_LOOM_READ = "loom.read";
/** Exit code of a test run. */
export const ATTR_LOOM_TEST_EXIT_CODE = "loom.test.exit_code";
/** Whether a test run timed out. */
export const ATTR_LOOM_TEST_TIMED_OUT = "loom.test.timed_out";
/** The revision a test run tested. */
export const ATTR_LOOM_TEST_REVISION = "loom.test.revision";
/** Results retired at a checkpoint. */
export const ATTR_LOOM_RETIRED = "loom.retirement.results";
/** Checkpoints so far. */
export const ATTR_LOOM_CHECKPOINTS = "loom.retirement.checkpoints";
