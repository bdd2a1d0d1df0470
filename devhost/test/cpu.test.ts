/**
 * What a host's processes have cost (devhost/realHost/cpu.ts), read from Linux's /proc: the test
 * suite's report counts each host's CPU with it. A busy process in a group of its own, with a busy
 * child in the same group, stands in for the real host and its Node worker. CPU time only grows, so
 * a group read after its members' reads is at least their sum, however busy the machine is.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';

import { groupCpuMs, processCpuMs, statFields } from '../realHost/cpu';
import { until } from '../../test/support/waits';

const onLinux = process.platform === 'linux';

/** A busy loop; the first one also starts a second, in its process group. */
const busy = 'for (;;) {}';
const parentOfBusy = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(busy)}], { stdio: 'ignore' }); ${busy}`;

/** Another process's children, from /proc (the busy child the group leader started): ppid is the 2nd field after "pid (comm) ". */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e) && Number(statFields(Number(e))?.[1]) === pid)
    .map(Number);
}

let group: number | undefined;
afterEach(() => {
  if (group === undefined) return;
  try {
    process.kill(-group, 'SIGKILL');
  } catch {
    // already gone
  }
  group = undefined;
});

(onLinux ? test : test.skip)('[Linux /proc] a group counts every live process in it, the leader and its child', async () => {
  const leader = spawn(process.execPath, ['-e', parentOfBusy], { detached: true, stdio: 'ignore' });
  const pid = leader.pid as number;
  group = pid;
  const child = await until('the leader to start its busy child', () => childrenOf(pid)[0]);
  await until('both to have run for a while', () => (processCpuMs(pid) >= 100 && processCpuMs(child) >= 100 ? true : undefined));
  const apart = processCpuMs(pid) + processCpuMs(child);
  expect(groupCpuMs(pid)).toBeGreaterThanOrEqual(apart);
  // The child alone is not the group: its own reading is below the group's.
  expect(processCpuMs(child)).toBeLessThan(groupCpuMs(pid));
});

(onLinux ? test : test.skip)('[Linux /proc] a process that is gone, or none, reads as NaN; a group with no live process as 0', async () => {
  const gone = spawn(process.execPath, ['-e', ''], { detached: true, stdio: 'ignore' });
  const pid = gone.pid as number;
  await new Promise((r) => gone.once('exit', r));
  expect(processCpuMs(undefined)).toBeNaN();
  expect(processCpuMs(pid)).toBeNaN();
  expect(groupCpuMs(pid)).toBe(0);
});
