/**
 * The admin console in headless Chromium against a devhost with keys enforced: the page loads with
 * no data until the admin key is entered, a gate released from the UI changes state live (server-
 * sent events, no reload), a job's progress bar reaches completion with its failure reasons shown,
 * a job whose envelope reached the poison queue shows its items marked as poison, the figures of
 * sequences, counters and streams are those the API reports, every view renders at desktop and
 * phone widths, and problems are shown legibly. No console errors or uncaught exceptions are
 * allowed (except the 401s a refused key causes, where asserted).
 * Screenshots land in test-artifacts/console/ (and docs/ with UPDATE_DOCS_SCREENSHOTS=1).
 * Without a Chromium the file is skipped with one line saying so (CI=true: it fails instead).
 */
import { randomBytes } from 'node:crypto';

import type { Page, Route } from 'playwright-core';

import { workQueueNames } from '../../shared/jobs/queueNames';
import { containers } from '../../shared/resources';
import { transactions } from '../support/billing';
import { storageFor } from '../support/sequences';
import { describeWithTool } from '../support/optionalTool';
import { type Browser, chromiumTool, launchBrowser, screenshot } from './support/browser';
import { devhostTest, type E2eHost, hostKind, ownHostTest, startDevhost, startE2eHost, storageOf } from './support/harness';
import { requestJson } from './support/http';
import { readAll } from './support/pages';
import { until as waitUntil } from './support/wait';
import { heldLeaseSeconds, queuesPolledPromptly } from './support/jobs';

// Listings are in name order across the shared Azurite of the whole test run: sort first. A run that
// makes the docs' screenshots (alone, on a fresh Azurite) uses plain names.
const docsRun = process.env.UPDATE_DOCS_SCREENSHOTS === '1';
const unique = (prefix: string): string => (docsRun ? prefix : `0-${prefix}-${randomBytes(4).toString('hex')}`);
const queuePrefix = `cq${randomBytes(4).toString('hex')}`;

interface GateView {
  name: string;
  state: string;
  waiters: { waiting: number };
}

interface JobView {
  id: string;
  state: string;
  totals: { items: number; succeeded: number; failed: number; cancelled: number; pending: number };
}

interface SequenceView {
  sequence: string;
  highWaterMark: number;
  instance: { blockSize: number; remaining: number; refills: number; retries412: number } | null;
}

interface CounterValueView {
  value: number;
  watermark: string | null;
  pendingHits: number;
}

interface StreamWriterView {
  writer: {
    accepted: number;
    bufferDepth: number;
    maxBuffered: number;
    flushedThrough: number;
    flushLagMs: number;
    lastFlush: { events: number } | null;
  };
}

interface FailureView {
  id: string;
  code: string;
  reason: string;
  envelope: string;
}

/** How the console prints an integer (`Intl.NumberFormat('en')`). */
const shown = (n: number): string => new Intl.NumberFormat('en').format(n);

/** The console polls at 200 ms; a wait given up lists the orchestrations still running (the budget is ignored, kept so callers compile). */
const until = <T>(what: string, probe: () => Promise<T | undefined>, _budgetMs?: number): Promise<T> =>
  waitUntil(what, probe, undefined, 200);

describeWithTool(chromiumTool, 'admin console in Chromium', () => {
  let host: E2eHost;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    host = await startE2eHost({
      env: {
        ...queuesPolledPromptly,
        AzureFunctionsJobHost__extensions__queues__visibilityTimeout: '00:00:00',
        AzureFunctionsJobHost__extensions__queues__maxDequeueCount: '2',
        TALLYHO_JOBS_QUEUES: '2',
        TALLYHO_JOBS_QUEUE_PREFIX: queuePrefix,
        TALLYHO_JOBS_RETRY_DELAY_SECONDS: '0',
        TALLYHO_GATES_WATCH_INTERVAL_MS: '250',
        // Quiet timers: with the counters rollup and jobs reconciler firing, a schedule's trigger waited
        // well past this test's patience on the devhost (reported; the schedules e2e quiets them too).
        TALLYHO_COUNTERS_ROLLUP_SCHEDULE: '0 0 0 1 1 *',
        TALLYHO_JOBS_RECONCILE_SCHEDULE: '0 0 0 1 1 *',
        // A submitter of its own (a named caller), so the console reads jobs that are not the master key's.
        TALLYHO_CREDENTIALS_KEY: Buffer.alloc(32, 3).toString('base64'),
      },
    });
    browser = await launchBrowser();
    page = await browser.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await host?.dispose();
  });

  afterEach(() => {
    // Each test empties what it allowed; anything left is a real error.
    expect(browser.errors).toEqual([]);
  });

  const admin = <T>(method: string, path: string, body?: unknown) =>
    requestJson<T>(host, method, path, { key: 'admin', ...(body === undefined ? {} : { body }) });

  /** A fresh load of the page (a hash-only change would keep the section mounted with its older data). */
  async function openSection(section: string): Promise<void> {
    await page.goto('about:blank');
    await page.goto(host.url(`/api/console#${section}`));
    await page.waitForSelector('main');
  }

  test('serves the page and hashed assets with a strict CSP, long caching and correct types', async () => {
    const res = await fetch(host.url('/api/console'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    const script = /<script type="module" src="([^"]+)"/.exec(html)?.[1];
    const style = /<link rel="stylesheet" href="([^"]+)"/.exec(html)?.[1];
    expect(script).toMatch(/^\/api\/console\/assets\/console-[A-Z0-9]+\.js$/);
    expect(html).not.toMatch(/<script>|style="/);

    const js = await fetch(host.url(script!));
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const css = await fetch(host.url(style!));
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');

    const missing = await requestJson(host, 'GET', '/api/console/assets/console-NOPE.js', { key: 'none' });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const traversal = await requestJson(host, 'GET', '/api/console/assets/..%2Fmanifest.json', { key: 'none' });
    expect([400, 404]).toContain(traversal.status);
  });

  test('holds no data and calls no API until the admin key is entered; the key stays in session storage', async () => {
    const apiCalls: string[] = [];
    const onRequest = (request: { url(): string }): void => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/api/') && !url.pathname.startsWith('/api/console')) apiCalls.push(url.pathname);
    };
    page.on('request', onRequest);
    await openSection('gates');
    await page.getByLabel('Admin key').waitFor();
    await expectText(page, 'main', 'Enter the admin key');
    await screenshot(page, 'key-prompt');
    expect(apiCalls).toEqual([]);

    await page.getByLabel('Admin key').fill(host.keys.admin ?? '');
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.getByRole('heading', { name: 'Gates' }).waitFor();
    await page.getByText('Using the admin key for this browser session.').waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).sessionStorage.getItem('tallyho.adminKey'))).toBe(
      host.keys.admin,
    );
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).localStorage.getItem('tallyho.adminKey'))).toBeNull();
    await until('an API call with the key', () => Promise.resolve(apiCalls.length > 0 ? true : undefined));
    page.off('request', onRequest);
  });

  ownHostTest('a gate released from the console changes state live, after a keyboard-usable confirmation', async () => {
    const name = unique('launch');
    expect((await admin('PUT', `/api/gates/${name}`, { note: 'console test' })).status).toBe(201);
    expect((await requestJson(host, 'POST', `/api/gates/${name}/runs`, { body: { runId: `${name}-w1` } })).status).toBe(202);
    // More closed gates than a browser has connections for event streams (six per origin): the
    // console follows only a few, so its own calls still get a connection.
    const others = Array.from({ length: 6 }, (_, i) => `${name}-${i}`);
    for (const other of others) expect((await admin('PUT', `/api/gates/${other}`)).status).toBe(201);
    await until('the gate in the list with a waiter', async () => {
      const gates = await readAll<GateView>(host, '/api/gates', { key: 'admin' });
      return gates.find((g) => g.name === name && g.waiters.waiting === 1);
    });

    await openSection('gates');
    const card = page.locator(`[data-gate="${name}"]`);
    await card.waitFor();
    await expectText(page, `[data-gate="${others[5] as string}"] .live`, 'with the list');
    expect(await page.locator('[data-gate] .live:not(.listed)').count()).toBeLessThanOrEqual(3);
    await expectText(page, `[data-gate="${name}"] [data-testid="gate-state"]`, 'closed');
    await expectText(page, `[data-gate="${name}"] [data-testid="gate-waiting"]`, '1');
    await card.locator('.live.live').waitFor();
    await screenshot(page, 'gates-closed');

    // Keyboard: the button opens the dialog with Cancel focused; Escape backs out and nothing happens.
    const releaseButton = page.getByRole('button', { name: `Release gate ${name}`, exact: true });
    await releaseButton.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: `Release gate ${name}?`, exact: true });
    await dialog.waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.textContent)).toBe('Cancel');
    await screenshot(page, 'gates-confirm', { docs: true, fullPage: false });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect((await admin<GateView>('GET', `/api/gates/${name}`)).body.state).toBe('closed');

    await releaseButton.click();
    // The list polls every 15 s, and on a slow machine one poll can fall inside the release: such reads
    // are held unanswered until the card shows the change, so it can only have come over the stream.
    const heldListReads: Route[] = [];
    const isList = (url: URL): boolean => url.pathname === '/api/gates';
    const holdListRead = (route: Route): void => {
      heldListReads.push(route);
    };
    await page.route(isList, holdListRead);
    // The release call's own answer first, so a slow or failed call is told apart from a stream that missed it.
    const answered = page.waitForResponse(
      (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/api/gates/${name}/release`,
    );
    await dialog.getByRole('button', { name: 'Release', exact: true }).click();
    const answer = await answered;
    expect({ status: answer.status(), body: await answer.text() }).toEqual({ status: 200, body: expect.stringContaining('"released"') });
    // No reload and no Refresh click: the change arrives over the gate's event stream.
    await expectText(page, `[data-gate="${name}"] [data-testid="gate-state"]`, 'released');
    await page.unroute(isList, holdListRead);
    await Promise.all(heldListReads.map((route) => route.continue()));
    await expectText(page, `[data-gate="${name}"]`, 'released from the console');
    expect((await admin<GateView>('GET', `/api/gates/${name}`)).body.state).toBe('released');
    await screenshot(page, 'gates-released', { docs: true });
  });

  ownHostTest(
    'a schedule is triggered, paused, resumed and cancelled from the console, with its next fire and last runs shown',
    async () => {
      const id = unique('nightly');
      const queue = `app-cs${randomBytes(4).toString('hex')}`;
      const created = await requestJson<{ state: string }>(host, 'POST', '/api/schedules', {
        body: {
          id,
          cron: '0 30 2 * * *',
          timeZone: 'Europe/Berlin',
          target: { type: 'queueMessage', queue, message: { report: 'nightly' } },
        },
      });
      expect(created.status).toBe(201);
      const once = unique('yearly-audit');
      const onceCreated = await requestJson(host, 'POST', '/api/schedules', {
        body: { id: once, at: '2029-06-15T12:00:00Z', target: { type: 'queueMessage', queue, message: { report: 'audit' } } },
      });
      expect(onceCreated.status).toBe(201);
      const state = `[data-schedule="${id}"] [data-testid="schedule-state"]`;

      await openSection('schedules');
      await page.locator(`[data-schedule="${id}"]`).waitFor();
      await expectText(page, state, 'active');
      await expectText(page, `[data-schedule="${id}"]`, 'in ');
      // A one-off far ahead: its date, then the distance in a unit that fits (not "in 1,146 days").
      await page.locator(`[data-schedule="${once}"]`).waitFor();
      const onceShown = await page.locator(`[data-schedule="${once}"] [data-testid="schedule-at"]`).textContent();
      expect(onceShown).toMatch(/^Jun 15, 2029, \d{1,2}:\d{2}\s?[AP]M \(in \d yr\.\)$/);
      await page.getByRole('button', { name: `Trigger schedule ${id} now` }).click();
      await expectText(page, `[data-schedule="${id}"] .runs`, 'succeeded');
      await screenshot(page, 'schedules', { docs: true });

      await page.getByRole('button', { name: `Pause schedule ${id}` }).click();
      await expectText(page, state, 'paused');
      await page.getByRole('button', { name: `Resume schedule ${id}` }).click();
      await expectText(page, state, 'active');

      await page.getByRole('button', { name: `Cancel schedule ${id}` }).click();
      const dialog = page.getByRole('dialog', { name: `Cancel schedule ${id}?` });
      await dialog.getByRole('button', { name: 'Cancel schedule' }).click();
      await expectText(page, state, 'cancelled');
      expect(await page.getByRole('button', { name: `Cancel schedule ${id}` }).isDisabled()).toBe(true);
      const after = await requestJson<{ state: string; nextFireAt: string | null }>(host, 'GET', `/api/schedules/${id}`);
      expect(after.body).toMatchObject({ state: 'cancelled', nextFireAt: null });
      await screenshot(page, 'schedules-cancelled');
    },
  );

  ownHostTest("a job's progress bar reaches completion and its failures show their reasons, whoever submitted it", async () => {
    const items: Record<string, unknown>[] = transactions(90, 7, 'console');
    items[3] = { ...items[3], currency: 'XXX' };
    // Submitted by a named caller: its job is not the master key's (`key:shared` on function-level
    // routes), and the console reads it through the admin-level routes.
    const caller = await admin<{ credential: string }>('POST', '/api/callers', { name: `console-${Date.now()}`, roles: ['submitter'] });
    expect(caller.status).toBe(201);
    const asSubmitter = { authorization: `Bearer ${caller.body.credential}` };
    const submitted = await requestJson<JobView>(host, 'POST', '/api/jobs', {
      body: { processor: 'billing', items },
      headers: asSubmitter,
    });
    expect(submitted.status).toBe(202);
    const id = submitted.body.id;

    await openSection('jobs');
    const card = page.locator(`[data-job="${id}"]`);
    await card.waitFor();
    const progress = card.locator('[data-testid="job-progress"]');
    const seen: number[] = [];
    await until('the job to complete in the console', async () => {
      seen.push(Number(await progress.getAttribute('aria-valuenow')));
      const state = await card.locator('[data-testid="job-state"]').textContent();
      return state === 'completed with failures' ? state : undefined;
    });
    expect(Number(await progress.getAttribute('aria-valuemax'))).toBe(90);
    expect(Number(await progress.getAttribute('aria-valuenow'))).toBe(90);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    await card.getByRole('button', { name: 'Failures (1)' }).click();
    await expectText(page, `[data-job="${id}"] .failures`, 'console-000003');
    const reason = await card.locator('.failures .reason').first().textContent();
    expect(reason).toMatch(/XXX|currency/i);
    const job = await requestJson<JobView>(host, 'GET', `/api/jobs/${id}`, { headers: asSubmitter });
    expect(job.body.totals).toEqual({ items: 90, succeeded: 89, failed: 1, cancelled: 0, pending: 0 });
    // The master key on the owner's route is `key:shared`, a stranger to this job.
    expect((await admin('GET', `/api/jobs/${id}`)).status).toBe(404);
    await screenshot(page, 'jobs', { docs: true });
  });

  ownHostTest(
    'a declared processor shows its backlog, leased envelopes, oldest envelope and failed items, as the API reports them',
    async () => {
      // A processor's name starts with a letter (unique() starts with a digit, to sort first).
      const processor = docsRun ? 'thumbnails' : `thumbs-${randomBytes(4).toString('hex')}`;
      expect(
        (await admin('PUT', `/api/processors/${processor}`, { type: 'external', batchSize: 5, leaseSeconds: heldLeaseSeconds })).status,
      ).toBe(201);
      const items = Array.from({ length: 12 }, (_, i) => ({ id: `t-${i}` }));
      const submitted = await requestJson<JobView>(host, 'POST', '/api/jobs', { body: { processor, items } });
      expect(submitted.status).toBe(202);
      type Leased = { leaseId: string; items: { id: string }[] };
      const take = async (): Promise<Leased> => {
        const lease = await requestJson<Leased>(host, 'POST', `/api/processors/${processor}/leases`, { body: { wait: 5 } });
        expect(lease.status).toBe(200);
        return lease.body;
      };
      // One batch completed with two failures; a second held by its lease; the third waiting.
      const first = await take();
      const results = first.items.map((item, i) =>
        i < 2
          ? { id: item.id, status: 'failed', code: 'BadImage', reason: 'not an image' }
          : { id: item.id, status: 'succeeded', output: {} },
      );
      expect((await requestJson(host, 'POST', `/api/leases/${first.leaseId}/complete`, { body: { results } })).status).toBe(200);
      const held = await take();
      type Declared = { processor: string; backlog: number; waiting: number; leased: number | null; oldestAgeSeconds: number };
      const api = await until('the API’s figures of the processor: one waiting, one leased', async () => {
        const figures = await admin<{ declared: Declared[] }>('GET', '/api/figures/jobs');
        const mine = figures.body.declared.find((d) => d.processor === processor);
        return mine?.backlog === 2 && mine.waiting === 1 && mine.leased === 1 ? mine : undefined;
      });

      await openSection('jobs');
      const figure = page.locator(`[aria-label="Declared processors"] [data-figure="${processor}"]`);
      await figure.waitFor();
      const detail = await until('the processor’s figure with its failures', async () => {
        const text = (await figure.locator('.figure-detail').textContent()) ?? '';
        return text.includes('failed 2 in 1 job') ? text : undefined;
      });
      expect(detail).toContain(`external · waiting ${api.waiting} · leased ${api.leased ?? '?'} · oldest `);
      expect(await figure.locator('.figure-value').textContent()).toBe(shown(api.backlog));
      const job = await admin<JobView>('GET', `/api/jobs/${submitted.body.id}`);
      // The first lease took any of the three envelopes (5, 5 or 2 items): a queue does not promise its order.
      expect(job.body.totals).toMatchObject({ failed: 2, succeeded: first.items.length - 2 });
      await screenshot(page, 'jobs-declared-processor');
      // Leave nothing running: the held batch completed, the job cancelled.
      const rest = held.items.map((item) => ({ id: item.id, status: 'succeeded', output: {} }));
      expect((await requestJson(host, 'POST', `/api/leases/${held.leaseId}/complete`, { body: { results: rest } })).status).toBe(200);
      expect((await requestJson(host, 'DELETE', `/api/jobs/${submitted.body.id}`)).status).toBeLessThan(300);
    },
  );

  ownHostTest('a job whose envelope crashes every delivery shows its poisoned items, with the reasons the API gives', async () => {
    // As in jobs.test.ts: a host with the work triggers off submits the job, so its envelope waits in
    // the queue while the input blob its claim check points into is deleted. Moved to this host's work
    // queue, the envelope crashes each delivery and reaches the poison queue.
    const holdPrefix = `ch${randomBytes(4).toString('hex')}`;
    const holdQueues = workQueueNames({ queues: 2, queuePrefix: holdPrefix });
    const workQueues = workQueueNames({ queues: 2, queuePrefix: queuePrefix });
    const items: Record<string, unknown>[] = transactions(3, 23, unique('poison'));
    items[1] = { ...items[1], metadata: { blob: 'b'.repeat(40_000) } };
    const holding = await startE2eHost({
      storage: host.storage,
      env: {
        TALLYHO_JOBS_QUEUES: '2',
        TALLYHO_JOBS_QUEUE_PREFIX: holdPrefix,
        'AzureWebJobs.jobsWork0.Disabled': 'true',
        'AzureWebJobs.jobsWork1.Disabled': 'true',
        TALLYHO_COUNTERS_ROLLUP_SCHEDULE: '0 0 0 1 1 *',
        TALLYHO_JOBS_RECONCILE_SCHEDULE: '0 0 0 1 1 *',
      },
    });
    let id: string;
    try {
      const submitted = await requestJson<JobView>(holding, 'POST', '/api/jobs', { body: { processor: 'billing', items } });
      expect(submitted.status).toBe(202);
      id = submitted.body.id;
    } finally {
      await holding.stop();
    }
    const storage = storageFor(storageOf(host));
    const jobsContainer = await storage.container(containers.jobs);
    for await (const blob of jobsContainer.listBlobsFlat({ prefix: `${id}/input` })) await jobsContainer.deleteBlob(blob.name);
    let moved = 0;
    for (const [i, name] of holdQueues.entries()) {
      const queue = await storage.queue(name);
      for (const m of (await queue.peekMessages({ numberOfMessages: 32 })).peekedMessageItems) {
        await (await storage.queue(workQueues[i]!)).sendMessage(m.messageText);
        moved++;
      }
      await queue.delete();
    }
    expect(moved).toBe(1);

    const failures = await until('the poisoned items recorded', async () => {
      const job = await admin<JobView>('GET', `/api/jobs/${id}`);
      if (job.body.state !== 'completedWithFailures') return undefined;
      return (await admin<{ items: FailureView[] }>('GET', `/api/jobs/${id}/failures?maxPageSize=50`)).body.items;
    });
    expect(failures.map((f) => f.code)).toEqual(['poisoned', 'poisoned', 'poisoned']);
    expect(failures[0]?.reason).toMatch(/failed 3 deliveries and reached .*-r-\d-poison; last error: Claim check cannot be redeemed/);

    await openSection('jobs');
    const card = page.locator(`[data-job="${id}"]`);
    await card.waitFor();
    await expectText(page, `[data-job="${id}"] [data-testid="job-state"]`, 'completed with failures');
    // Every item failed: its full bar is drawn in the failure colour (its badge's), not the accent a
    // success gets; and the job is listed under its processor.
    expect(await page.locator(`[data-processor="billing"] [data-job="${id}"]`).count()).toBe(1);
    const bar = card.locator('[data-testid="job-progress"]');
    expect(await bar.getAttribute('data-outcome')).toBe('failed');
    // Painted, not only classed: the failed segment fills the bar in the badge's colour, nothing in the accent.
    const painted = await bar.evaluate((node) => {
      const g = globalThis as unknown as PageStyles;
      const el = node as unknown as PageBox;
      const segment = (name: string) => {
        const part = el.querySelector(`[data-segment="${name}"]`);
        return part === null ? null : { width: part.getBoundingClientRect().width, colour: g.getComputedStyle(part).backgroundColor };
      };
      const badge = g.document.querySelector('[data-testid="job-state"].completedWithFailures');
      return {
        inner: el.clientWidth,
        failed: segment('failed'),
        succeeded: segment('succeeded'),
        badge: badge === null ? null : g.getComputedStyle(badge).color,
      };
    });
    expect(painted.failed?.colour).toBe(painted.badge);
    expect(painted.failed?.width).toBeCloseTo(painted.inner, 0);
    expect(painted.succeeded?.width).toBe(0);
    await card.getByRole('button', { name: 'Failures (3)' }).click();
    const rows = card.locator('.failures li');
    await rows.first().waitFor();
    const onPage = await rows.evaluateAll((lis) =>
      (lis as unknown as PageElement[]).map((li) => ({
        id: li.querySelector('strong')?.textContent,
        poisonedClass: li.classList.contains('poisoned'),
        code: li.querySelector('code')?.textContent,
        badge: li.querySelector('.badge')?.textContent,
        reason: li.querySelector('.reason')?.textContent,
        detail: li.querySelector('.small')?.textContent?.trim(),
      })),
    );
    // No item attempt count beside a reason that counts the envelope's deliveries.
    expect(onPage).toEqual(
      failures.map((f) => ({
        id: f.id,
        poisonedClass: true,
        code: 'poisoned',
        badge: 'poison',
        reason: f.reason,
        detail: `envelope ${f.envelope}`,
      })),
    );
    await screenshot(page, 'jobs-poisoned');
  });

  ownHostTest('sequences, counters and streams show their figures as the API reports them, at desktop and phone widths', async () => {
    const sequence = unique('orders');
    expect((await admin('PUT', `/api/sequences/${sequence}`, { prefix: 'ORD-', width: 7, checkDigit: true })).status).toBe(201);
    expect((await requestJson(host, 'POST', `/api/sequences/${sequence}/next`, { body: { count: 5 } })).status).toBe(200);
    // No safety window, so a rollup run now folds the first hits: both a watermark and pending hits to show.
    const counter = unique('visits');
    expect((await admin('PUT', `/api/counters/${counter}`, { mode: 'hits', partitions: 4, safetyWindowSeconds: 0 })).status).toBe(201);
    const increment = async (): Promise<void> => {
      expect((await requestJson(host, 'POST', `/api/counters/${counter}/increment`, { body: { by: 2 } })).status).toBe(202);
    };
    for (let i = 0; i < 3; i++) await increment();
    let probes = 0;
    await until('a rollup watermark on the counter', async () => {
      // The host's admin API runs the (quieted) rollup timer now; again now and then if a run missed the hits.
      if (probes++ % 10 === 0) expect((await admin('POST', '/admin/functions/countersRollup', {})).status).toBe(202);
      const read = await admin<CounterValueView>('GET', `/api/counters/${counter}`);
      return read.body.watermark === null ? undefined : read.body;
    });
    for (let i = 0; i < 2; i++) await increment();
    const type = unique('clicks').replace(/^0-/, 'c');
    const appended = await requestJson(host, 'POST', `/api/streams/${type}/events`, {
      body: { events: [1, 2, 3].map((seq) => ({ producer: 'console-test', seq, data: { n: seq } })) },
    });
    expect(appended.status).toBe(202);

    await openSection('sequences');
    const seqCell = (id: string): string => `[data-sequence="${sequence}"] [data-testid="sequence-${id}"]`;
    await page.locator(`[data-sequence="${sequence}"]`).waitFor();
    const listed = (await admin<SequenceView>('GET', `/api/sequences/${sequence}`)).body;
    // Five numbers taken: the first block (at least those five) is reserved, so the high-water mark is past them.
    expect(listed?.highWaterMark).toBeGreaterThanOrEqual(6);
    expect(listed?.instance?.refills).toBeGreaterThanOrEqual(1);
    // The format in words: a made-up number (ORD-0000000-c) would read like one it issues.
    expect(await page.locator(`[data-sequence="${sequence}"] [data-testid="sequence-format"]`).textContent()).toBe(
      '"ORD-", 7 digits, "-" and a check digit',
    );
    // "In hand" counts prefetched blocks too, so it may exceed the newest block: the headers say which is which.
    expect(await page.locator('table:has([data-sequence]) thead th').allTextContents()).toEqual(
      expect.arrayContaining(['Newest block', 'In hand']),
    );
    const seqShown = {
      hwm: await page.locator(seqCell('hwm')).textContent(),
      block: await page.locator(seqCell('block')).textContent(),
      remaining: await page.locator(seqCell('remaining')).textContent(),
      refills: await page.locator(seqCell('refills')).textContent(),
      retries412: await page.locator(seqCell('412')).textContent(),
    };
    const instance = listed?.instance;
    expect(seqShown).toEqual({
      hwm: shown(listed?.highWaterMark ?? -1),
      block: shown(instance?.blockSize ?? -1),
      remaining: shown(instance?.remaining ?? -1),
      refills: shown(instance?.refills ?? -1),
      retries412: shown(instance?.retries412 ?? -1),
    });
    await screenshot(page, 'sequences', { docs: true });

    // Another host's rollup may fold the newer hits at any moment: compare a page load with API reads either side of it.
    const counterRow = `[data-counter="${counter}"]`;
    const counterShown = await until('the counters view to match the API', async () => {
      const before = (await admin<CounterValueView>('GET', `/api/counters/${counter}`)).body;
      await openSection('counters');
      await page.locator(`${counterRow} [data-testid="counter-value"] .num`).waitFor();
      const onPage = {
        value: await page.locator(`${counterRow} [data-testid="counter-value"]`).textContent(),
        watermark: await page.locator(`${counterRow} [data-testid="counter-watermark"] time`).getAttribute('datetime'),
        pendingHits: await page.locator(`${counterRow} [data-testid="counter-pending"]`).textContent(),
      };
      const after = (await admin<CounterValueView>('GET', `/api/counters/${counter}`)).body;
      const expected = { value: shown(after.value), watermark: after.watermark, pendingHits: shown(after.pendingHits) };
      return JSON.stringify(before) === JSON.stringify(after) && JSON.stringify(onPage) === JSON.stringify(expected) ? after : undefined;
    });
    expect(counterShown.value).toBe(10);
    expect(counterShown.watermark).not.toBeNull();
    await screenshot(page, 'counters', { docs: true });

    // The flush interval (1 s) settles the writer; then its figures stay put while the page and the API are compared.
    const settled = await until('the stream writer to flush', async () => {
      const view = (await admin<StreamWriterView>('GET', `/api/streams/${type}`)).body;
      return view.writer.flushedThrough === 3 && view.writer.bufferDepth === 0 ? view.writer : undefined;
    });
    expect(settled).toMatchObject({ accepted: 3, flushLagMs: 0, lastFlush: { events: 3 } });
    await openSection('streams');
    await page.getByLabel('Event type').fill(type);
    await page.getByRole('button', { name: 'Watch' }).click();
    const streamCell = (id: string): string => `[data-stream="${type}"] [data-testid="stream-${id}"]`;
    await page
      .locator(`${streamCell('flushed-through')} .num`)
      .first()
      .waitFor();
    const streamShown = {
      buffered: await page.locator(streamCell('buffered')).textContent(),
      flushedThrough: await page.locator(streamCell('flushed-through')).textContent(),
      flushLag: await page.locator(streamCell('flush-lag')).textContent(),
      lastFlush: await page.locator(streamCell('last-flush')).textContent(),
    };
    expect(streamShown).toEqual({
      buffered: `${shown(settled.bufferDepth)} / ${shown(settled.maxBuffered)}`,
      flushedThrough: `${shown(settled.flushedThrough)} of ${shown(settled.accepted)}`,
      flushLag: 'none',
      lastFlush: expect.stringContaining(`(${settled.lastFlush?.events ?? -1} events)`),
    });
    expect((await admin<StreamWriterView>('GET', `/api/streams/${type}`)).body.writer).toEqual(settled);
    await screenshot(page, 'streams', { docs: true });

    // Phone width: nothing overflows the page sideways (wide tables scroll inside their own region).
    await page.setViewportSize({ width: 375, height: 800 });
    for (const section of ['gates', 'schedules', 'jobs', 'streams', 'counters', 'sequences']) {
      await openSection(section);
      await page.getByRole('heading', { level: 2 }).waitFor();
      const overflow = await page.evaluate(() => {
        const root = (globalThis as unknown as PageGlobals).document.documentElement;
        return root.scrollWidth - root.clientWidth;
      });
      expect({ section, overflow }).toEqual({ section, overflow: 0 });
    }
    await openSection('gates');
    await page.locator('[data-gate]').first().waitFor();
    await screenshot(page, 'gates-narrow', { docs: true });
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  test('a refused key is shown as a legible problem, and a good key clears it', async () => {
    await openSection('counters');
    // Every request the bad key makes is refused and logged by Chromium as a failed load. The page makes
    // several (the list, and the figures on their own poll) that answer in any order, some after the good
    // key is in: count them by the key they carried, so that exactly those 401s are excused.
    let refused = 0;
    const onResponse = (r: { status(): number; request(): { headers(): Record<string, string> } }): void => {
      if (r.status() === 401 && r.request().headers()['x-functions-key'] === 'not-the-key') refused += 1;
    };
    page.on('response', onResponse);
    await page.getByRole('button', { name: 'Forget key' }).click();
    await page.getByLabel('Admin key').fill('not-the-key');
    await page.getByRole('button', { name: 'Use key' }).click();
    const alert = page.getByRole('alert').first();
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/401/);
    await screenshot(page, 'problem-401');

    await page.getByRole('button', { name: 'Forget key' }).click();
    await page.getByLabel('Admin key').fill(host.keys.admin ?? '');
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.getByRole('heading', { name: 'Counters' }).waitFor();
    await page.locator('.figures[data-state="ok"]').first().waitFor();
    expect(await page.locator('[role="alert"]').count()).toBe(0);
    page.off('response', onResponse);

    const is401 = (e: string): boolean => /status of 401/.test(e);
    // A failed load's console line can trail its response event by a moment.
    await waitUntil('the refused loads to be logged', () =>
      Promise.resolve(browser.errors.filter(is401).length >= refused ? true : undefined),
    );
    expect(refused).toBeGreaterThan(0);
    expect({ refusedLoadsLogged: browser.errors.filter(is401).length, other: browser.errors.filter((e) => !is401(e)) }).toEqual({
      refusedLoadsLogged: refused,
      other: [],
    });
    browser.errors.length = 0;
  });
});

describeWithTool(chromiumTool, 'admin console without a key (App Service authentication, or a host with keys off)', () => {
  let host: E2eHost | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    // Keys off, as `func start` runs; the real host build checks keys, so this needs the devhost.
    if (hostKind() !== 'devhost') return;
    host = await startDevhost();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await host?.dispose();
  });

  devhostTest(
    '"Continue without a key" loads the sections with no key sent, and "Use a key instead" returns to the prompt',
    async () => {
      if (host === undefined || browser === undefined) throw new Error('no devhost');
      const page = await browser.newPage();
      const keyHeaders: (string | undefined)[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname.startsWith('/api/gates')) keyHeaders.push(request.headers()['x-functions-key']);
      });
      await page.goto(host.url('/api/console#gates'));
      await page.getByRole('button', { name: 'Continue without a key' }).click();
      await page.getByText('Sending no key').waitFor();
      await page.getByRole('heading', { name: 'Gates' }).waitFor();
      await page.getByText('Updated').waitFor();
      expect(keyHeaders.length).toBeGreaterThan(0);
      expect(keyHeaders.every((h) => h === undefined)).toBe(true);
      expect(await page.locator('[role="alert"]').count()).toBe(0);

      await page.getByRole('button', { name: 'Use a key instead' }).click();
      await page.getByLabel('Admin key').waitFor();
      expect(browser.errors).toEqual([]);
    },
    undefined,
    'keys off (the real host build checks keys, as Azure does)',
  );
});

/** A failure's list item, as the jobs view renders it. */
interface PageElement {
  querySelector(selector: string): { readonly textContent: string | null } | null;
  readonly classList: { contains(name: string): boolean };
}

/** What the page functions below touch (this file is compiled without the DOM library). */
interface PageGlobals {
  readonly document: {
    querySelectorAll(selector: string): ArrayLike<{ readonly textContent: string | null }>;
    readonly activeElement: { readonly textContent: string | null } | null;
    readonly documentElement: { readonly scrollWidth: number; readonly clientWidth: number };
  };
  readonly sessionStorage: { getItem(key: string): string | null };
  readonly localStorage: { getItem(key: string): string | null };
}

/** The style lookups of the bar-colour check (this file is compiled without the DOM library). */
interface PageStyles {
  readonly document: { querySelector(selector: string): unknown };
  getComputedStyle(el: unknown): { readonly backgroundColor: string; readonly color: string };
}

/** A job's bar and its segments, as the bar check measures them. */
interface PageBox {
  readonly clientWidth: number;
  querySelector(selector: string): { getBoundingClientRect(): { readonly width: number } } | null;
}

// A function, not a string: the console's CSP forbids eval, and a string predicate would need it.
async function expectText(page: Page, selector: string, text: string): Promise<void> {
  await page.waitForFunction(
    (arg) =>
      Array.from((globalThis as unknown as PageGlobals).document.querySelectorAll(arg.selector)).some((el) =>
        (el.textContent ?? '').includes(arg.text),
      ),
    { selector, text },
  );
}
