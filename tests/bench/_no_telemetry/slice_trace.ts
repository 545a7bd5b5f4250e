// The benchmark's "not compiled in" variant of lib/slice/_trace.ts: the
// same surface, doing nothing (telemetry_figures.ts maps it in with an
// import map, so no telemetry module is loaded at all).
export interface TraceSession {
  readonly id: string;
  readonly location: string;
}

export class SliceTrace {
  constructor(_start: unknown) {}
  run<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }
  end(_stop: string, _detail: string, _steps: number): void {}
  checkpoint(_checkpoints: number, _retired: number): void {}
  modelCall(_step: number, _phase: string): { span: undefined } {
    return { span: undefined };
  }
  modelCallEnded(..._args: unknown[]): void {}
  actionStarted(_action: string, _step: number): void {}
  actionEnded(..._args: unknown[]): void {}
  closeAction(_failure: unknown, _outcome?: string): void {}
}
