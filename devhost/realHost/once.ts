/**
 * Work that several processes (jest workers) may ask for at once but that must be done once: the
 * first to create the lock directory (creation is atomic) does it, the others wait for `done()`. A
 * lock older than `staleMs` belongs to a process that died and is taken over.
 */
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export async function onceAcrossProcesses(
  lock: string,
  done: () => boolean,
  make: () => Promise<void>,
  staleMs = 10 * 60_000,
): Promise<void> {
  for (;;) {
    if (done()) return;
    try {
      mkdirSync(lock);
    } catch {
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > staleMs) rmSync(lock, { recursive: true, force: true });
      else await sleep(500);
      continue;
    }
    try {
      if (!done()) await make();
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
    return;
  }
}
