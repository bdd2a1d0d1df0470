import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { until } from '../../test/support/waits';
import { fixture, storageConnection } from './support';

const cli = join(__dirname, '..', '..', 'dist', 'devhost', 'cli.js');

describe('graceful shutdown of the CLI', () => {
  // SIGINT is what Ctrl+C sends; both must behave the same.
  test.each(['SIGTERM', 'SIGINT'] as const)(
    '%s lets the in-flight request finish, refuses new ones, runs appTerminate and exits 0',
    async (signal) => {
      expect(existsSync(cli)).toBe(true); // run `npm run build` first
      const marker = join(mkdtempSync(join(tmpdir(), 'devhost-')), 'terminated');
      // Not quiet: the invocation's start and the signal's receipt are the conditions waited on.
      const child = spawn(process.execPath, [cli, '--app', fixture('basic'), '--port', '0'], {
        env: {
          ...process.env,
          AzureWebJobsStorage: storageConnection(),
          OUT_QUEUE: 'unused',
          OUT_CONTAINER: 'unused',
          TERMINATE_MARKER: marker,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const baseUrl = await new Promise<string>((resolve, reject) => {
        const onData = (chunk: Buffer): void => {
          output += chunk.toString();
          const m = /devhost listening on (\S+)/.exec(output);
          if (m !== null) resolve(m[1] as string);
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        void exit.then(() => reject(new Error(`exited early:\n${output}`)));
      });

      const inFlight = fetch(`${baseUrl}/api/slow?ms=1500`);
      await until('the slow request in flight', () => (output.includes("Executing 'Functions.slow'") ? true : undefined));
      child.kill(signal);
      await until('the signal received', () => (output.includes(`${signal} received: draining`) ? true : undefined));
      const refused = await fetch(`${baseUrl}/api/nothing`).then(
        (r) => r.status,
        () => 'refused',
      );
      expect([503, 'refused']).toContain(refused);
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ slept: true });
      expect(await exit).toBe(0);
      expect(readFileSync(marker, 'utf8')).toBe('terminated');
    },
  );
});
