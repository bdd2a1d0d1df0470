/**
 * How the identity matrix calls each route (test/e2e/identityMatrix.test.ts): path values naming the
 * resources submitter A made before the matrix (its job, schedule and gated run), processor P and a
 * lease of P, and a body per route that reaches its handler. A caller that gets past the role check
 * may well be answered 400, 404 (a file that is not there) or 409 (a job already cancelled): what
 * the matrix holds each answer to is the class the table gives (./identities.ts).
 */
import type { RouteDefinition } from '../../../shared/http/route';
import type { E2eHost } from './harness';

/** What submitter A (and the admin) made before the matrix, and the names the routes are called with. */
export interface Fixture {
  readonly gate: string;
  readonly sequence: string;
  readonly counter: string;
  readonly streamType: string;
  readonly processorP: string;
  readonly jobA: string;
  readonly scheduleA: string;
  readonly runA: string;
  readonly leaseP: string;
  /** Submitter B's producer id, which the matrix's appends use too. */
  readonly producer: string;
  /** B's gated run id, which the matrix's starts name too. */
  readonly runB: string;
}

export interface Answer {
  readonly status: number;
  readonly code: string | undefined;
  readonly detail: string | undefined;
}

function valueOf(route: RouteDefinition, name: string, f: Fixture): string {
  const capability = route.name.replace(/[A-Z].*$/, '');
  switch (name) {
    case 'id':
      return capability === 'jobs' ? f.jobA : f.scheduleA;
    case 'name':
      if (capability === 'jobs') return 'wordcount.csv';
      if (capability === 'processors' || capability === 'leases') return f.processorP;
      if (capability === 'sequences') return f.sequence;
      if (capability === 'counters') return f.counter;
      return f.gate;
    case 'runId':
      return f.runA;
    case 'leaseId':
      return f.leaseP;
    case 'type':
      return f.streamType;
    case 'formatted':
      return 'ORD-0000001-0';
    case 'file':
      return 'probe.txt';
    default:
      return 'matrix-probe';
  }
}

function pathOf(route: RouteDefinition, f: Fixture): string {
  const path = route.path.replace(/\{(\*?)([A-Za-z]+)[^}]*\}/g, (_m, _star, name: string) => encodeURIComponent(valueOf(route, name, f)));
  return `/api/${path}${route.name === 'gatesWait' ? '?timeout=0' : ''}`;
}

/** Bodies that pass validation where that is cheap, so a caller past the role check reaches the use-case. */
function bodyOf(route: RouteDefinition, f: Fixture, who: string): unknown {
  const bodies: Partial<Record<RouteDefinition['name'], unknown>> = {
    jobsSubmit: { processor: f.processorP, items: [{ id: 'm-1' }] },
    schedulesCreate: { at: '2099-01-01T00:00:00Z', target: { type: 'queueMessage', queue: 'app-matrix', message: 1 } },
    // B's run id: a caller other than B must not get B's run.
    gatesStartRun: { runId: f.runB },
    // B's producer id: B itself at seq 2, everyone else far ahead; B's seq 3 must still be new for B.
    streamsAppend: { producer: f.producer, seq: who === 'submitterB' ? 2 : 1000, data: { by: who } },
    leasesTake: { wait: 0, maxItems: 1 },
    leasesComplete: { results: [] },
  };
  return bodies[route.name] ?? (route.method === 'GET' || route.method === 'DELETE' ? undefined : {});
}

/** One call; an event stream is read to its first chunk and closed. */
export async function callRoute(
  host: E2eHost,
  route: RouteDefinition,
  who: string,
  headers: Readonly<Record<string, string>>,
  f: Fixture,
): Promise<Answer> {
  const body = bodyOf(route, f, who);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  try {
    const res = await fetch(host.url(pathOf(route, f)), {
      method: route.method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: controller.signal,
    });
    if (/text\/event-stream/.test(res.headers.get('content-type') ?? '')) {
      controller.abort();
      return { status: res.status, code: undefined, detail: undefined };
    }
    const text = await res.text();
    const problem = /problem\+json/.test(res.headers.get('content-type') ?? '')
      ? (JSON.parse(text) as { code?: string; detail?: string })
      : {};
    return { status: res.status, code: problem.code, detail: problem.detail };
  } finally {
    clearTimeout(timer);
  }
}
