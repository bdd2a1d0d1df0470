import { loadAppConfig } from '../../../shared/app/settings';
import { readGroup } from '../../../shared/config';
import { jobSettings } from '../../../shared/jobs/settings';
import { poisonQueueName, workLaneNames, workQueueNames } from '../../../shared/jobs/queueNames';
import { queues } from '../../../shared/resources';

describe('job settings', () => {
  it('has documented defaults, and the default work queues are the ones infra/ provisions', () => {
    const s = readGroup(jobSettings, {});
    expect(s).toMatchObject({
      queues: 4,
      queuePrefix: 'jobs-work',
      maxItems: 10_000,
      maxRequestBytes: 4 * 1024 * 1024,
      envelopeMaxItems: 32,
      envelopeMaxBytes: 48_000,
      claimCheckBytes: 8192,
      maxAttempts: 3,
    });
    expect(s).toMatchObject({ maxOpen: 1000, maxProcessors: 100, retentionDays: 30, pushSchedule: '*/2 * * * * *' });
    expect(workQueueNames(s)).toEqual(queues.jobsWork.slice(0, 4));
    expect(workQueueNames(readGroup(jobSettings, { TALLYHO_JOBS_QUEUES: '8' }))).toEqual([...queues.jobsWork]);
    expect(workLaneNames(readGroup(jobSettings, { TALLYHO_JOBS_QUEUES: '8' }))).toEqual([...queues.jobsLanes]);
  });

  it('infra/ provisions the poison queue of every work queue and lane a trigger listens on', () => {
    const eight = readGroup(jobSettings, { TALLYHO_JOBS_QUEUES: '8' });
    const listened = [...workQueueNames(eight), ...workLaneNames(eight)].map(poisonQueueName);
    expect([...queues.jobsPoison].sort()).toEqual(listened.sort());
  });

  it('names every bad setting at once', () => {
    const env = {
      AzureWebJobsStorage: 'UseDevelopmentStorage=true',
      TALLYHO_JOBS_QUEUES: '9',
      TALLYHO_JOBS_QUEUE_PREFIX: 'Jobs_Work',
      TALLYHO_JOBS_ENVELOPE_MAX_BYTES: '60000',
      TALLYHO_JOBS_RETENTION_DAYS: '-1',
      TALLYHO_JOBS_RECONCILE_SCHEDULE: '* * *',
    };
    let message = '';
    try {
      loadAppConfig(env);
    } catch (err) {
      message = err instanceof Error ? err.message : String(err);
    }
    for (const name of [
      'TALLYHO_JOBS_QUEUES',
      'TALLYHO_JOBS_QUEUE_PREFIX',
      'TALLYHO_JOBS_ENVELOPE_MAX_BYTES',
      'TALLYHO_JOBS_RETENTION_DAYS',
      'TALLYHO_JOBS_RECONCILE_SCHEDULE',
    ]) {
      expect(message).toContain(name);
    }
  });

  it('keeps inline items small enough to fit an envelope', () => {
    expect(() => readGroup(jobSettings, { TALLYHO_JOBS_ENVELOPE_MAX_BYTES: '8192', TALLYHO_JOBS_CLAIM_CHECK_BYTES: '8000' })).toThrow(
      /TALLYHO_JOBS_CLAIM_CHECK_BYTES/,
    );
  });
});
