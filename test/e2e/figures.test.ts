/**
 * The operator figures (GET /api/figures/…) over HTTP, on whichever host the project runs. With the
 * work and poison triggers disabled (the host's `AzureWebJobs.<fn>.Disabled` setting, which both hosts
 * honour) a submitted job's envelopes wait in the work queues, so the backlog must show them; one of
 * them moved to its poison queue, as the host moves an envelope that failed every delivery, must show
 * as a poison count of 1. The figures are read from storage, so a second read after the move answers
 * the new numbers whichever instance reads. In Chromium the console's Jobs page shows the same two
 * numbers, and after a failed read it shows the failure instead of the numbers. (Who may call them: test/e2e/authorization.test.ts, which
 * covers every route of the catalog.)
 */
import type { Page } from 'playwright-core';

import { describeWithTool } from '../support/optionalTool';
import { storageFor } from '../support/sequences';
import type { StorageClients } from '../../shared/storage/clients';
import { type Browser, chromiumTool, launchBrowser, screenshot } from './support/browser';
import { ownHostTest, type E2eHost, startE2eHost, storageOf } from './support/harness';
import { requestJson } from './support/http';
import { heldLeaseSeconds } from './support/jobs';
import { unique } from './support/names';

interface JobFigures {
  readAt: string;
  processors: string[];
  queues: { queue: string; messages: number; oldestAgeSeconds: number; poisonQueue: string; poison: number }[];
  total: { messages: number; poison: number; oldestAgeSeconds: number };
  declared: {
    processor: string;
    type: string;
    queue: string;
    backlog: number;
    waiting: number;
    waitingAtLeast: boolean;
    leased: number | null;
    oldestAgeSeconds: number;
  }[];
}

const queueCount = 2;

describe('operator figures', () => {
  let storage: StorageClients;
  const prefix = unique('jf');
  const disabled = Object.fromEntries(
    Array.from({ length: queueCount }, (_, i) => [
      [`AzureWebJobs.jobsWork${i}.Disabled`, 'true'],
      [`AzureWebJobs.jobsPoison${i}.Disabled`, 'true'],
    ]).flat(),
  );
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({ env: { ...disabled, TALLYHO_JOBS_QUEUES: String(queueCount), TALLYHO_JOBS_QUEUE_PREFIX: prefix } });
    // Only the own-host tests read it (an external host's storage is not this run's).
    if (!host.external) storage = storageFor(storageOf(host));
  });
  afterAll(async () => {
    await host?.dispose();
  });

  const jobFigures = async (): Promise<JobFigures> => {
    const res = await requestJson<JobFigures>(host, 'GET', '/api/figures/jobs', { key: 'admin' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    return res.body;
  };

  ownHostTest('waiting envelopes show as backlog, a poisoned one as poison count 1', async () => {
    const empty = await jobFigures();
    expect(empty.total).toEqual({ messages: 0, poison: 0, oldestAgeSeconds: 0 });
    expect(empty.queues.map((q) => [q.queue, q.poisonQueue])).toEqual([
      [`${prefix}-0`, `${prefix}-0-poison`],
      [`${prefix}-1`, `${prefix}-1-poison`],
    ]);
    expect(empty.processors).toEqual(expect.arrayContaining(['billing', 'wordcount']));

    // 40 items: two envelopes (32 per envelope), one on each work queue; nothing processes them.
    const items = Array.from({ length: 40 }, (_, i) => ({ id: `doc-${i}`, text: 'one two three' }));
    const submitted = await requestJson(host, 'POST', '/api/jobs', { body: { processor: 'wordcount', items } });
    expect(submitted.status).toBe(202);
    const waiting = await jobFigures();
    expect(waiting.total).toMatchObject({ messages: 2, poison: 0 });
    expect(waiting.queues.map((q) => q.messages)).toEqual([1, 1]);
    // The oldest envelope's age is the queue's own: from its insertion time to the read (the server's clock, this machine's).
    const [front] = (await (await storage.queue(`${prefix}-0`)).peekMessages()).peekedMessageItems;
    const age = Math.round((Date.parse(waiting.readAt) - (front?.insertedOn.getTime() ?? NaN)) / 1000);
    expect(Math.abs((waiting.queues[0]?.oldestAgeSeconds ?? -1) - Math.max(0, age))).toBeLessThanOrEqual(1);
    expect(waiting.total.oldestAgeSeconds).toBe(Math.max(...waiting.queues.map((q) => q.oldestAgeSeconds)));

    // The host's move to poison after the last failed delivery: the same message, on `<queue>-poison`.
    const work = await storage.queue(`${prefix}-0`);
    const [message] = (await work.receiveMessages({ numberOfMessages: 1 })).receivedMessageItems;
    if (message === undefined) throw new Error('no envelope in the work queue');
    await (await storage.queue(`${prefix}-0-poison`)).sendMessage(message.messageText);
    await work.deleteMessage(message.messageId, message.popReceipt);

    const poisoned = await jobFigures();
    expect(poisoned.total).toMatchObject({ messages: 1, poison: 1 });
    expect(poisoned.queues[0]).toMatchObject({ queue: `${prefix}-0`, messages: 0, poison: 1 });
    expect(Date.parse(poisoned.readAt)).toBeGreaterThanOrEqual(Date.parse(waiting.readAt));
  });

  ownHostTest(
    'a declared processor shows its backlog, its waiting and leased envelopes and its oldest one (before: not at all)',
    async () => {
      const name = unique('figs');
      expect(
        (
          await requestJson(host, 'PUT', `/api/processors/${name}`, {
            body: { type: 'external', batchSize: 5, leaseSeconds: heldLeaseSeconds },
            key: 'admin',
          })
        ).status,
      ).toBe(201);
      const declaredOf = async () => (await jobFigures()).declared.find((d) => d.processor === name);
      expect(await declaredOf()).toEqual({
        processor: name,
        type: 'external',
        queue: `${prefix}-x-${name}`,
        backlog: 0,
        waiting: 0,
        waitingAtLeast: false,
        leased: 0,
        oldestAgeSeconds: 0,
      });
      // 12 items in batches of 5: three envelopes on the processor's own queue.
      const items = Array.from({ length: 12 }, (_, i) => ({ id: `f-${i}` }));
      expect((await requestJson(host, 'POST', '/api/jobs', { body: { processor: name, items } })).status).toBe(202);
      expect(await declaredOf()).toMatchObject({ backlog: 3, waiting: 3, leased: 0 });
      // A worker leases one batch: it stays in the backlog, no longer waiting, counted as leased.
      const lease = await requestJson<{ items: unknown[] }>(host, 'POST', `/api/processors/${name}/leases`, { body: { wait: 0 } });
      expect(lease.status).toBe(200);
      expect(lease.body.items).toHaveLength(5);
      const leased = await declaredOf();
      expect(leased).toMatchObject({ backlog: 3, waiting: 2, leased: 1 });
      const [front] = (await (await storage.queue(`${prefix}-x-${name}`)).peekMessages()).peekedMessageItems;
      const readAt = Date.now();
      expect((leased?.oldestAgeSeconds ?? -1) - Math.round((readAt - (front?.insertedOn.getTime() ?? NaN)) / 1000)).toBeLessThanOrEqual(1);
    },
  );

  describeWithTool(chromiumTool, 'in the console', () => {
    let browser: Browser;
    let page: Page;
    beforeAll(async () => {
      browser = await launchBrowser();
      page = await browser.newPage();
    });
    afterAll(async () => {
      await browser?.close();
    });

    const figure = (label: string) => page.locator(`[data-figure="${label}"] .figure-value`);

    ownHostTest('the Jobs page shows the backlog and the poison count, and a failed read as failed, not as a number', async () => {
      // The state the previous test left: one envelope waiting, one poisoned.
      expect((await jobFigures()).total).toMatchObject({ messages: 1, poison: 1 });
      // The page's clock, so the test moves the figures' 5-second refresh on instead of waiting for it.
      await page.clock.install();
      await page.goto(host.url('/api/console#jobs'));
      await page.getByLabel('Admin key').fill(host.keys.admin ?? '');
      await page.getByRole('button', { name: 'Use key' }).click();
      await page.getByRole('heading', { name: 'Jobs' }).waitFor();
      const backlog = page.getByRole('group', { name: 'Work queue backlog' });
      const inState = (state: string) => page.locator(`.figures[aria-label="Work queue backlog"][data-state="${state}"]`);
      await inState('ok').waitFor();
      expect(await figure('Envelopes waiting').textContent()).toBe('1');
      expect(await figure('Poisoned envelopes').textContent()).toBe('1');
      expect(await page.locator('[data-figure="Poisoned envelopes"]').getAttribute('class')).toContain('alarm');
      // The declared processor of the previous test: its backlog of 3, two waiting and one leased.
      const declared = (await jobFigures()).declared.find((d) => d.processor.startsWith('figs'));
      const processor = page.getByRole('group', { name: 'Declared processors' }).locator(`[data-figure="${declared?.processor ?? ''}"]`);
      expect(await processor.locator('.figure-value').textContent()).toBe('3');
      expect(await processor.locator('.figure-detail').textContent()).toMatch(/^external · waiting 2 · leased 1 · oldest /);
      await screenshot(page, 'jobs-figures', { docs: true, fullPage: false });

      // The next reads fail: the numbers give way to the failure (with when the last good read was).
      await page.route('**/api/figures/jobs', (route) =>
        route.fulfill({
          status: 503,
          contentType: 'application/problem+json',
          body: JSON.stringify({
            type: 'about:blank',
            title: 'Service Unavailable',
            status: 503,
            code: 'DependencyUnavailable',
            detail: 'storage is down',
          }),
        }),
      );
      await page.clock.fastForward(5_000);
      await inState('failed').waitFor();
      expect(await backlog.textContent()).toContain('the latest read failed');
      expect(await backlog.textContent()).toContain('storage is down');
      expect(await page.locator('[data-figure]').count()).toBe(0);
      await page.unroute('**/api/figures/jobs');
      await page.clock.fastForward(5_000);
      await inState('ok').waitFor();
      expect(await figure('Envelopes waiting').textContent()).toBe('1');
      // The 503 was the test's own; the console logged nothing else.
      expect(browser.errors.filter((e) => !e.includes('503'))).toEqual([]);
    });
  });

  test('counters and schedules figures answer their shape', async () => {
    const counters = await requestJson<Record<string, unknown>>(host, 'GET', '/api/figures/counters', { key: 'admin' });
    expect(counters.status).toBe(200);
    expect(counters.body).toEqual({
      readAt: expect.any(String),
      rollupLagSeconds: expect.any(Number),
      oldestUnfoldedAt: counters.body.oldestUnfoldedAt === null ? null : expect.any(String),
      partitionsWaiting: expect.any(Number),
      countersWaiting: expect.any(Array),
      truncated: expect.any(Boolean),
    });
    const schedules = await requestJson<Record<string, unknown>>(host, 'GET', '/api/figures/schedules', { key: 'admin' });
    expect(schedules.status).toBe(200);
    expect(schedules.body).toEqual({
      readAt: expect.any(String),
      schedules: expect.any(Number),
      worstLatenessSeconds: expect.any(Number),
      latestRuns: expect.any(Array),
      overdue: expect.any(Array),
      truncated: expect.any(Boolean),
    });
  });
});
