/**
 * What the page shows of each run, as plain JSON: the run's summary (kind,
 * status, steps, bytes sent, cache hit rate, estimated dollars) and its
 * detail (the timeline in columns — one array per figure, one entry per
 * request — the stored results, a gateway's per-tool figures). Numbers,
 * names and the model's or a tool's strings travel as data; the page
 * escapes every string it shows (docs/view.md).
 *
 * @module
 */
import type {
  ContextReport,
  ContextReportRequest,
  ContextReportTest,
} from "../briefing/context_report.ts";
import { PART_NAMES } from "../briefing/part_bytes.ts";
import { type ReportCosts, reportCosts } from "../cost/report_costs.ts";
import type { ReadResult, SessionKind } from "../persist/session_reader.ts";
import type { GatewayReport, ViewSource } from "./inputs.ts";

/** What kind of run a row is. */
export type RunKind = SessionKind | "report" | "recording";

/** One row of the runs table. */
export interface RunSummary {
  /** The run's id in this view (`r1`, …). */
  readonly id: string;
  /** The kind of run. */
  readonly kind: RunKind;
  /** Its name (a session's, a file's). */
  readonly name: string;
  /** Where it lives. */
  readonly where: string;
  /** The stop reason, `running` for a slice that can continue, or `—`. */
  readonly status: string;
  /** Steps taken, or `null` for a run without steps. */
  readonly steps: number | null;
  /** Model requests. */
  readonly requests: number;
  /** Request bytes in all. */
  readonly bytes_sent: number;
  /** Share of input tokens read from the cache, or `null` without requests. */
  readonly hit_ratio: number | null;
  /** Estimated dollars, or `null` without requests or prices. */
  readonly dollars: number | null;
  /** Whether the figures are recorded or simulated. */
  readonly cost_source: "recorded" | "simulated" | null;
  /** Stored results. */
  readonly results: number;
  /** Whether the request bodies can be shown. */
  readonly bodies: boolean;
  /** Whether the model's replies can be shown. */
  readonly replies: boolean;
}

/** A run's requests, one array per figure, one entry per request. */
export interface Timeline {
  /** The part names of `by_part` (`["request"]` for a version 1 report). */
  readonly parts: readonly string[];
  /** `s` (selection) or `a` (arguments) per request. */
  readonly phase: string;
  /** The step of each request (0 when the report does not say). */
  readonly step: readonly number[];
  /** Request bytes. */
  readonly bytes: readonly number[];
  /** Bytes shared with the previous request (cache order). */
  readonly stable: readonly number[];
  /** The part where each request first differs from the previous one. */
  readonly divergence: readonly (string | null)[];
  /** Bytes by part: `by_part[k][i]` is part k of request i. */
  readonly by_part: readonly (readonly number[])[];
  /** The body's bytes in cache order (the coordinates of `stable`). */
  readonly cache_order: readonly number[];
  /** Cache breakpoints of each request (cache order). */
  readonly breakpoints: readonly (readonly number[])[];
  /** Requests built at a retirement checkpoint (indices). */
  readonly checkpoints: readonly number[];
  /** Test runs, with the index of their step's first request. */
  readonly tests: readonly (ContextReportTest & { readonly at: number })[];
  /** Cache and dollar figures. */
  readonly cost: ReportCosts;
}

/** Per-tool figures of a gateway run. */
export interface GatewayRow {
  /** `server/tool`, or a retrieval tool's name. */
  readonly tool: string;
  /** Calls. */
  readonly calls: number;
  /** Calls answered with a descriptor. */
  readonly offloaded: number;
  /** Bytes from the upstream. */
  readonly bytes_received: number;
  /** Bytes to the host. */
  readonly bytes_to_host: number;
}

/** Everything the page shows of one run. */
export interface RunDetail {
  /** Its row. */
  readonly summary: RunSummary;
  /** The context policy, when a slice. */
  readonly policy: string | null;
  /** The model, when a slice. */
  readonly model: string | null;
  /** The stop detail (a model can shape it: shown escaped). */
  readonly detail: string | null;
  /** The latest revision. */
  readonly revision: string | null;
  /** Things the reader should know (a request log that does not match…). */
  readonly notes: readonly string[];
  /** The requests, when the run made any. */
  readonly timeline: Timeline | null;
  /** Stored results (sessions). */
  readonly results: readonly ReadResult[];
  /** Per-tool figures (a gateway report). */
  readonly gateway: readonly GatewayRow[] | null;
}

interface RunFacts {
  kind: RunKind;
  policy: string | null;
  model: string | null;
  stop: string | null;
  detail: string | null;
  steps: number | null;
  revision: string | null;
  lines: readonly ContextReportRequest[];
  tests: readonly ContextReportTest[];
  results: readonly ReadResult[];
  gateway: GatewayReport | null;
}

function factsOf(source: ViewSource): RunFacts {
  const session = source.session?.reading;
  const context = source.report?.kind === "context"
    ? source.report.report
    : undefined;
  const gateway = source.report?.kind === "gateway"
    ? source.report.report
    : null;
  const run: ContextReport | undefined = context;
  return {
    kind: session?.kind ??
      (gateway !== null
        ? "gateway"
        : run !== undefined
        ? "report"
        : "recording"),
    policy: run?.policy ?? session?.policy ?? null,
    model: run?.model ?? session?.model ?? null,
    stop: run?.outcome.stop ??
      (session?.kind === "slice" ? session.stop ?? "running" : null),
    detail: run?.outcome.detail ?? null,
    steps: run?.steps ?? (session?.kind === "slice" ? session.steps : null),
    revision: run?.revision ?? session?.revision ?? null,
    lines: run?.requests ?? session?.requests ?? [],
    tests: run?.tests ?? session?.tests ?? [],
    results: session?.results ?? [],
    gateway,
  };
}

/**
 * The row of one run.
 *
 * @param source The run.
 * @returns Its summary.
 */
export function runSummary(source: ViewSource): RunSummary {
  return summaryOf(source, factsOf(source));
}

function summaryOf(source: ViewSource, facts: RunFacts): RunSummary {
  const lines = facts.lines;
  const cost = lines.length === 0 ? null : reportCosts(facts.model, lines);
  const gatewayBytes = facts.gateway === null ? 0 : Object.values(
    facts.gateway.tools,
  ).reduce((n, t) => n + t.bytes_to_host, 0);
  return {
    id: source.id,
    kind: facts.kind,
    name: source.name,
    where: source.where,
    status: facts.stop ?? "—",
    steps: facts.steps,
    requests: lines.length,
    bytes_sent: lines.length === 0
      ? gatewayBytes
      : lines.reduce((n, l) => n + l.request_bytes, 0),
    hit_ratio: cost?.hit_ratio ?? null,
    dollars: cost === null || cost.prices.startsWith("not priced")
      ? null
      : cost.total_dollars,
    cost_source: cost?.source ?? null,
    results: facts.results.length,
    bodies: source.requests !== undefined,
    replies: source.replies !== undefined,
  };
}

/**
 * Everything the page shows of one run.
 *
 * @param source The run.
 * @param notes What the caller found wrong with its inputs.
 * @returns Its detail.
 */
export function runDetail(
  source: ViewSource,
  notes: readonly string[] = [],
): RunDetail {
  const facts = factsOf(source);
  return {
    summary: summaryOf(source, facts),
    policy: facts.policy,
    model: facts.model,
    detail: facts.detail,
    revision: facts.revision,
    notes,
    timeline: facts.lines.length === 0 ? null : timelineOf(facts),
    results: facts.results,
    gateway: facts.gateway === null
      ? null
      : Object.entries(facts.gateway.tools).map(([tool, t]) => ({
        tool,
        ...t,
      })),
  };
}

function timelineOf(facts: RunFacts): Timeline {
  const lines = facts.lines;
  const v2 = lines.every((l) => l.bytes_by_part !== undefined);
  const parts: readonly string[] = v2 ? PART_NAMES : ["request"];
  const firstOfStep = new Map<number, number>();
  lines.forEach((l, i) => {
    if (l.step !== undefined && !firstOfStep.has(l.step)) {
      firstOfStep.set(l.step, i);
    }
  });
  return {
    parts,
    phase: lines.map((l) => l.phase === "selection" ? "s" : "a").join(""),
    step: lines.map((l) => l.step ?? 0),
    bytes: lines.map((l) => l.request_bytes),
    stable: lines.map((l) => l.prefix_stable_bytes),
    divergence: lines.map((l) => l.first_divergence?.part ?? null),
    by_part: v2
      ? PART_NAMES.map((p) => lines.map((l) => l.bytes_by_part![p]))
      : [lines.map((l) => l.request_bytes)],
    cache_order: lines.map((l) => l.cache_order_bytes ?? l.request_bytes),
    breakpoints: lines.map((l) => l.cache_breakpoints ?? []),
    checkpoints: lines.flatMap((l, i) => l.checkpoint === true ? [i] : []),
    tests: facts.tests.map((t) => ({
      ...t,
      at: firstOfStep.get(t.step) ?? -1,
    })),
    cost: reportCosts(facts.model, lines),
  };
}

/**
 * A run's requests as the request log must match them: count and bytes.
 *
 * @param source The run.
 * @returns The report lines (empty without any).
 */
export function requestLines(
  source: ViewSource,
): readonly ContextReportRequest[] {
  return factsOf(source).lines;
}
