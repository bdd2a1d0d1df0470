import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { until } from '../../test/support/waits';
import { fixture, storageConnection } from './support';

const cli = join(__dirname, '..', '..', 'dist', 'devhost', 'cli.js');

describe('graceful shutdown of the CLI', () => {
  // SIGINT is what Ctrl+C sends; both must behave the same.
  test.each(['SIGTERM', 'SIGINT'] as const)(
    '%s lets the in-flight request finish (Connection: close), refuses new connections, answers a request already on its way 503 problem+json with Retry-After, runs appTerminate and exits 0',
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
      // A request whose headers are still arriving when the stop begins (the connection is not idle).
      const { port } = new URL(baseUrl);
      const socket = connect(Number(port), '127.0.0.1');
      let straggler = '';
      socket.on('data', (c: Buffer) => (straggler += c.toString()));
      const strayEnded = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write('GET /api/nothing HTTP/1.1\r\nHost: devhost\r\n');
      child.kill(signal);
      await until('the signal received', () => (output.includes(`${signal} received: draining`) ? true : undefined));
      // As on the real host (devhost/docs/real-host.md#shutdown, observed 2026-11-28): the port no
      // longer listens, so a new connection is refused (before: a bare 503 on the open port).
      // (Providers pause in order, so the HTTP one may take a moment after the signal: a probe before it is served.)
      const refused = await until('a new connection refused', () =>
        fetch(`${baseUrl}/api/nothing`).then(
          () => undefined,
          () => 'refused',
        ),
      );
      expect(refused).toBe('refused');
      socket.end('\r\n');
      await strayEnded;
      expect(straggler).toMatch(/^HTTP\/1\.1 503 /);
      expect(straggler).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/i);
      expect(straggler).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(JSON.parse(straggler.slice(straggler.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 503, title: 'Service Unavailable' });
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(res.headers.get('connection')).toBe('close');
      expect(await res.json()).toEqual({ slept: true });
      expect(await exit).toBe(0);
      expect(readFileSync(marker, 'utf8')).toBe('terminated');
    },
  );
});
