// The benchmark's "not compiled in" variant of lib/telemetry/code.ts.
export type CodeRunEnd = Record<string, unknown>;

export class CodeRunSpan {
  static start(_confinement: string): CodeRunSpan {
    return new CodeRunSpan();
  }
  get recording(): boolean {
    return false;
  }
  began(_timeoutMs: number): void {}
  within<T>(fn: () => T): T {
    return fn();
  }
  stored(_stored: unknown): void {}
  read(_read: unknown): void {}
  end(_end: unknown): void {}
}
