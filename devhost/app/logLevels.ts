/**
 * host.json `logging.logLevel` as the real host applies it to a function's own lines: the category of
 * an invocation's "Executing/Executed" lines is `Function.<name>` (its code's own logs are
 * `Function.<name>.User`), and the most specific entry that names the category or a dot-separated
 * prefix of it wins, else `default` (Microsoft docs, "Configure monitoring for Azure Functions":
 * log categories and levels). The devhost applies it to the lines it writes for an invocation.
 */
import type { HostLogger, HostLogLevel } from '../log';

type Threshold = HostLogLevel | 'none';

const dotnetLevels: Record<string, Threshold> = {
  trace: 'debug',
  debug: 'debug',
  information: 'info',
  warning: 'warn',
  error: 'error',
  critical: 'error',
  none: 'none',
};

const rank: Record<Threshold, number> = { debug: 0, info: 1, warn: 2, error: 3, none: 4 };

/** The threshold host.json sets for `category` (Information when it says nothing). */
export function categoryThreshold(hostJson: Readonly<Record<string, unknown>>, category: string): Threshold {
  const logging = hostJson.logging as { logLevel?: Record<string, unknown> } | undefined;
  const levels = logging?.logLevel ?? {};
  let best: { key: string; level: Threshold } | undefined;
  for (const [key, value] of Object.entries(levels)) {
    const level = typeof value === 'string' ? dotnetLevels[value.toLowerCase()] : undefined;
    if (level === undefined || key.toLowerCase() === 'default') continue;
    const k = key.toLowerCase();
    const c = category.toLowerCase();
    if ((c === k || c.startsWith(`${k}.`)) && (best === undefined || k.length > best.key.length)) best = { key: k, level };
  }
  if (best !== undefined) return best.level;
  const fallback = Object.entries(levels).find(([key]) => key.toLowerCase() === 'default')?.[1];
  return (typeof fallback === 'string' ? dotnetLevels[fallback.toLowerCase()] : undefined) ?? 'info';
}

/** `log`, keeping only the lines host.json lets through for function `name`'s invocations (`Function.<name>`). */
export function functionLogger(log: HostLogger, hostJson: Readonly<Record<string, unknown>>, name: string): HostLogger {
  const threshold = rank[categoryThreshold(hostJson, `Function.${name}`)];
  return (level, message) => {
    if (rank[level] >= threshold) log(level, message);
  };
}
