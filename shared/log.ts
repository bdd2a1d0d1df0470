/**
 * Structured logs for the events an operator acts on (block refills, 412 retries, exhausted retries,
 * poison messages). One JSON object per line, so Application Insights and `grep` both read them.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  log(level: LogLevel, event: string, fields?: LogFields): void;
}

export type LogSink = (level: LogLevel, line: string) => void;

const consoleSink: LogSink = (level, line) => {
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.log(line);
};

function serialize(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

export function createLogger(sink: LogSink = consoleSink, minimum: LogLevel = 'info'): Logger {
  const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
  return {
    log(level, event, fields = {}) {
      if (order[level] < order[minimum]) return;
      const entry: Record<string, unknown> = { level, event };
      for (const [key, value] of Object.entries(fields)) entry[key] = serialize(value);
      sink(level, JSON.stringify(entry));
    },
  };
}

/** Keeps entries in memory; tests assert on what an operator would see. */
export class MemoryLogger implements Logger {
  readonly entries: { level: LogLevel; event: string; fields: LogFields }[] = [];

  log(level: LogLevel, event: string, fields: LogFields = {}): void {
    this.entries.push({ level, event, fields });
  }

  events(name: string): LogFields[] {
    return this.entries.filter((e) => e.event === name).map((e) => e.fields);
  }
}

export const silentLogger: Logger = { log: () => undefined };
