/**
 * The e2e hosts start on storage provisioned as a deployment's is (test/e2e/support/provision.ts):
 * with the default settings, every jobs queue the harness creates is one infra/ creates.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { jobQueuesOf } from '../support/provision';

const infraQueues = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'infra', 'app-resources.json'), 'utf8')) as { queues: string[] })
  .queues;

describe('e2e hosts start on provisioned storage', () => {
  it('with the default settings, the jobs queues the harness creates are the ones infra/ creates', () => {
    const names = jobQueuesOf({});
    expect(names).toHaveLength(18);
    expect(names?.filter((name) => !infraQueues.includes(name))).toEqual([]);
    expect(names).toEqual(
      expect.arrayContaining(['jobs-work-0', 'jobs-work-r-3', 'jobs-work-0-poison', 'jobs-work-r-3-poison', 'jobs-work-d', 'jobs-work-c']),
    );
  });

  it("follows a host's own prefix and count, and gives nothing for settings the app refuses", () => {
    expect(jobQueuesOf({ TALLYHO_JOBS_QUEUE_PREFIX: 'lw-1', TALLYHO_JOBS_QUEUES: '2' })?.sort()).toEqual(
      [
        'lw-1-0',
        'lw-1-1',
        'lw-1-r-0',
        'lw-1-r-1',
        'lw-1-0-poison',
        'lw-1-1-poison',
        'lw-1-r-0-poison',
        'lw-1-r-1-poison',
        'lw-1-d',
        'lw-1-c',
      ].sort(),
    );
    expect(jobQueuesOf({ TALLYHO_JOBS_QUEUES: '9' })).toBeUndefined();
  });
});
