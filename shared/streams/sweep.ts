/**
 * The flushers' safety net when nobody appends. A flusher is woken by the append that needs it
 * (receipt `kick` / `restart`) and by the next append that sees a flush overdue; events whose
 * wake-up was lost — the appender's instance died between the receipt and the kick, or the flusher
 * had just retired idle — would otherwise wait for the stream's next append, however long that is.
 * A timer (functions/streams.ts, every minute, on one instance: the host's timer lock) reads the
 * ledger of every writer the app knows — the admitted types' routes and the app's own types' — and
 * kicks each whose oldest unflushed event is overdue (ledger.ts `flushOverdue`): a kick starts a
 * flusher that is not running, and wakes one that waits. One ledger read per writer per minute,
 * bounded by TALLYHO_STREAMS_MAX_TYPES.
 */
import { mapLimited } from '../mapLimited';
import type { Page, PageRequest } from '../storage/list';
import { flushOverdue, type LedgerState } from './ledger';
import { routeWriterKey, type StreamRoute } from './route';

export interface SweepDeps {
  /** Every admitted type with its route, a page at a time. */
  routes(page: PageRequest): Promise<Page<StreamRoute>>;
  /** The routes of the app's own types (not admitted: they take no place under the cap). */
  ownRoutes(): Promise<readonly StreamRoute[]>;
  readLedger(key: string): Promise<LedgerState | undefined>;
  kick(key: string): Promise<void>;
  now(): number;
}

export interface SweepResult {
  readonly writers: number;
  /** Writers whose flush was overdue, and were kicked. */
  readonly kicked: readonly string[];
}

const pageSize = 500;
const concurrentReads = 8;

/** Every writer the app knows: the admitted types' routes and the app's own types' (the sweep's and the depth gauge's list). */
export async function writerKeys(deps: Pick<SweepDeps, 'routes' | 'ownRoutes'>): Promise<string[]> {
  const keys = new Set((await deps.ownRoutes()).map(routeWriterKey));
  let continuationToken: string | undefined;
  do {
    const page = await deps.routes({ maxPageSize: pageSize, continuationToken });
    for (const route of page.items) keys.add(routeWriterKey(route));
    continuationToken = page.continuationToken;
  } while (continuationToken !== undefined);
  return [...keys];
}

export async function sweepWriters(deps: SweepDeps): Promise<SweepResult> {
  const keys = await writerKeys(deps);
  const overdue = await mapLimited(keys, concurrentReads, async (key) =>
    flushOverdue(await deps.readLedger(key), deps.now()) ? key : undefined,
  );
  const kicked = overdue.filter((key): key is string => key !== undefined);
  await mapLimited(kicked, concurrentReads, (key) => deps.kick(key));
  return { writers: keys.length, kicked };
}
