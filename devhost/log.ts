/**
 * Console output in the spirit of `func start`: timestamped lines, function logs tagged with the
 * function name. `quiet` keeps warnings and errors only (tests, benchmarks).
 */
import type { RpcLogLevel } from './core/types';

export type HostLogLevel = 'debug' | 'info' | 'warn' | 'error';

export type HostLogger = (level: HostLogLevel, message: string) => void;

const order: Record<HostLogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export function fromRpcLevel(level: RpcLogLevel): HostLogLevel {
  switch (level) {
    case 'trace':
    case 'debug':
      return 'debug';
    case 'information':
    case 'none':
      return 'info';
    case 'warning':
      return 'warn';
    case 'error':
    case 'critical':
      return 'error';
  }
}

export interface ConsoleLoggerOptions {
  readonly quiet?: boolean;
  readonly minLevel?: HostLogLevel;
  readonly write?: (line: string, level: HostLogLevel) => void;
}

export function consoleLogger(options: ConsoleLoggerOptions = {}): HostLogger {
  const min = options.quiet === true ? order.warn : order[options.minLevel ?? 'info'];
  const write =
    options.write ??
    ((line: string, level: HostLogLevel): void => {
      if (level === 'error' || level === 'warn') process.stderr.write(`${line}\n`);
      else process.stdout.write(`${line}\n`);
    });
  return (level, message) => {
    if (order[level] < min) return;
    write(`[${new Date().toISOString()}] ${message}`, level);
  };
}
