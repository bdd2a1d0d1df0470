/**
 * The CPU-by-process account the timing reporter prints (test/support/cpuByProcess.cjs): what a run
 * spent, by kind of process, from samples of /proc.
 */
import { cpuAccount, kindOf, startCpuSampler } from '../support/cpuByProcess.cjs';

describe('CPU by process kind', () => {
  it.each([
    ['dotnet\0/tmp/x/functions-host-a/Microsoft.Azure.WebJobs.Script.WebHost.dll\0', 'real host (.NET)'],
    ['node\0/tmp/x/workers/node/dist/src/nodejsWorker.js --host 127.0.0.1', 'real host worker (Node)'],
    ['/usr/bin/node /work/main/dist/devhost/cli.js --app /tmp/a --port 0', 'devhost'],
    ['/usr/bin/node\0-e\0…\0--\0/work/main/node_modules/azurite/dist/src/azurite.js\0--silent\0', 'azurite'],
    ['dotnet\0build\0/work/main/clients/dotnet/Tallyho.sln\0', '.NET builds'],
    ['/usr/lib/chromium/chromium\0--headless\0', 'chromium'],
    ['/usr/bin/node\0/work/main/node_modules/jest-worker/build/workers/processChild.js\0', 'jest workers'],
    ['node\0/work/main/node_modules/.bin/eslint\0--max-warnings\0', 'eslint'],
    ['node\0/work/main/node_modules/.bin/tsc\0-p\0tsconfig.json\0', 'tsc'],
    ['node\0/work/main/node_modules/.bin/jest\0', 'jest main'],
    ['/bin/bash\0.ci/run\0', 'other'],
  ])('%j is %s', (commandLine, kind) => {
    expect(kindOf(commandLine)).toBe(kind);
  });

  it('counts growth after the first sample, all of a process first seen later, and keeps what an exited one spent', () => {
    const account = cpuAccount();
    const azurite = { pid: '10:1', commandLine: 'node azurite.js' };
    const host = { pid: '20:5', commandLine: 'dotnet WebHost.dll' };
    account.sample([{ ...azurite, ticks: 500 }]);
    account.sample([
      { ...azurite, ticks: 530 },
      { ...host, ticks: 400 },
    ]);
    expect([account.knows(azurite.pid), account.knows(host.pid)]).toEqual([true, true]);
    // The host exited; a new process took its pid number (another start time: another process). A
    // known process's command line is not read again: its kind stays the one first seen.
    account.sample([
      { ...azurite, commandLine: '', ticks: 560 },
      { pid: '20:9', commandLine: 'dotnet WebHost.dll', ticks: 50 },
    ]);
    expect([account.knows(azurite.pid), account.knows(host.pid)]).toEqual([true, false]);
    expect(account.totals()).toEqual([
      ['real host (.NET)', 450],
      ['azurite', 60],
    ]);
  });

  it('samples this machine: CPU this test burns is counted', () => {
    const sampler = startCpuSampler(60_000);
    // Burn 100 ms of CPU (10 clock ticks), however long that takes on this machine.
    const start = process.cpuUsage();
    let spins = 0;
    while (process.cpuUsage(start).user < 100_000) spins++;
    const totals = sampler.stop();
    expect(spins).toBeGreaterThan(0);
    if (totals === undefined) return void expect(process.platform).not.toBe('linux');
    const seconds = totals.reduce((sum, k) => sum + k.seconds, 0);
    expect(seconds).toBeGreaterThanOrEqual(0.05);
  });
});
