/** Provider and executor setup of a slice run. */
import type { ModelProvider } from "../providers/model_provider.ts";
import { createProvider } from "../providers/create_provider.ts";
import { ProviderError } from "../providers/provider_error.ts";
import { RecordingProvider } from "../providers/recording_provider.ts";
import { RequestLogProvider } from "../providers/request_log.ts";
import { WorkspaceExecutor } from "../executor/workspace_executor.ts";
import { ProtectedPaths } from "../executor/protected_paths.ts";
import type { Effects } from "./_execute.ts";
import type { RunOptions, SliceRequest } from "./request.ts";
import { sessionHookParts } from "./run_state.ts";
import { stopped } from "./_stopped.ts";

/**
 * Creates the provider of a run; a string spec resumes at the model call
 * the session stopped at.
 *
 * @param request The slice request.
 * @param options The run options.
 * @returns The provider.
 * @throws {SliceStoppedError} `provider_error` when the spec cannot be used.
 */
export function sliceProvider(
  request: SliceRequest,
  options: RunOptions,
): ModelProvider {
  const provider = specProvider(request, options);
  const recorded = options.record === undefined
    ? provider
    : new RecordingProvider(provider, options.record);
  if (options.recordRequests === undefined) return recorded;
  const resume = options.session === undefined
    ? undefined
    : sessionHookParts(options.session).resume;
  return new RequestLogProvider(recorded, options.recordRequests, {
    startAtLine: resume?.requests.length ?? 0,
  });
}

function specProvider(
  request: SliceRequest,
  options: RunOptions,
): ModelProvider {
  const spec = request.provider;
  if (typeof spec !== "string") return spec;
  try {
    const resume = options.session === undefined
      ? undefined
      : sessionHookParts(options.session).resume;
    return createProvider(spec, {
      ...(resume === undefined ? {} : { startAtCall: resume.modelCalls }),
      ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.modelTimeoutMs === undefined
        ? {}
        : { timeoutMs: Math.ceil(options.modelTimeoutMs) }),
    });
  } catch (error) {
    if (error instanceof ProviderError) {
      throw stopped(
        "provider_error",
        `${error.code}: ${error.message}`,
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * The protected paths of a run: the files its test command names (unless
 * lifted) and its `--protect` globs.
 *
 * @param request The slice request (its test command).
 * @param workspace The real path of the workspace.
 * @returns The protected paths.
 */
export function protectedPaths(
  request: SliceRequest,
  workspace: string,
): ProtectedPaths {
  const test = request.test;
  return ProtectedPaths.forTest(test?.command, workspace, {
    globs: test?.protect ?? [],
    defaults: test?.protectNamedFiles !== false,
  });
}

/**
 * Starts the permission-scoped executor of the workspace.
 *
 * @param request The slice request (its test command and confinement).
 * @param workspace The real path of the workspace.
 * @param options The run options (the bubblewrap program).
 * @returns The executor's effects.
 * @throws {SliceStoppedError} `confinement_unavailable` when the executor or the
 *   tests cannot be confined.
 */
export async function startExecutor(
  request: SliceRequest,
  workspace: string,
  options: RunOptions,
): Promise<Effects> {
  const test = request.test;
  try {
    return await WorkspaceExecutor.start({
      workspace,
      ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
      ...(test === undefined ? {} : {
        testCommand: [...test.command],
        testTimeoutMs: test.timeoutMs,
        testEnv: { ...(test.env ?? {}) },
        testNetwork: test.network === true,
        unconfinedTests: test.unconfined === true,
        protect: protectedPaths(request, workspace),
      }),
    });
  } catch (error) {
    if ((error as { code?: unknown })?.code === "confinement_unavailable") {
      throw stopped(
        "confinement_unavailable",
        `confinement_unavailable: ${(error as Error).message}`,
        { cause: error },
      );
    }
    throw error;
  }
}
