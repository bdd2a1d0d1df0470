/** Small hooks the views share: polling a resource, and the section named in the URL fragment. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

import type { ApiError } from './api';

export interface Resource<T> {
  readonly data: T | undefined;
  readonly error: ApiError | Error | undefined;
  readonly loading: boolean;
  readonly updatedAt: number | undefined;
  readonly refresh: () => void;
}

function isAbort(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'AbortError';
}

/**
 * Loads with `load` now, then every `intervalMs` while the page is visible; keeps the last good data
 * when a refresh fails, so a blip shows as an error above still-readable numbers.
 */
export function usePolling<T>(load: (signal: AbortSignal) => Promise<T>, intervalMs: number, key: string): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [updatedAt, setUpdatedAt] = useState<number | undefined>(undefined);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    setData(undefined);
    setUpdatedAt(undefined);
  }, [key]);

  useEffect(() => {
    const controller = new AbortController();
    let timer: number | undefined;
    const run = async (): Promise<void> => {
      if (document.visibilityState === 'visible') {
        setLoading(true);
        try {
          const value = await loadRef.current(controller.signal);
          if (controller.signal.aborted) return;
          setData(value);
          setError(undefined);
          setUpdatedAt(Date.now());
        } catch (err) {
          if (controller.signal.aborted || isAbort(err)) return;
          setError(err instanceof Error ? err : new Error(String(err)));
        } finally {
          if (!controller.signal.aborted) setLoading(false);
        }
      }
      if (!controller.signal.aborted) timer = window.setTimeout(() => void run(), intervalMs);
    };
    void run();
    return () => {
      controller.abort();
      window.clearTimeout(timer);
    };
  }, [key, intervalMs, tick]);

  const refresh = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, updatedAt, refresh };
}

/**
 * `usePolling` for a section that shows a list a page at a time: `load` reads the first `pages`
 * pages; `more` asks for one more page (read at once, and on every refresh after).
 */
export function usePagedPolling<T>(
  load: (pages: number, signal: AbortSignal) => Promise<T>,
  intervalMs: number,
  key: string,
): Resource<T> & { readonly more: () => void } {
  const [pages, setPages] = useState(1);
  const resource = usePolling((signal) => load(pages, signal), intervalMs, key);
  const { refresh } = resource;
  const more = useCallback(() => {
    setPages((p) => p + 1);
    refresh();
  }, [refresh]);
  return { ...resource, more };
}

/** Runs an admin action, tracking whether it is under way and what went wrong. */
export function useAction(): {
  readonly busy: boolean;
  readonly error: ApiError | Error | undefined;
  readonly run: <T>(action: () => Promise<T>) => Promise<T | undefined>;
  readonly clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | Error | undefined>(undefined);
  const run = useCallback(async <T>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await action();
    } catch (err) {
      setError(err instanceof Error ? err : new Error(String(err)));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  const clear = useCallback(() => setError(undefined), []);
  return { busy, error, run, clear };
}

export function useHash(): string {
  const [hash, setHash] = useState(() => location.hash.replace(/^#/, ''));
  useEffect(() => {
    const onChange = (): void => setHash(location.hash.replace(/^#/, ''));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return hash;
}

/** Re-renders every `ms` (for "3 s ago" labels). */
export function useNow(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), ms);
    return () => window.clearInterval(timer);
  }, [ms]);
  return now;
}
