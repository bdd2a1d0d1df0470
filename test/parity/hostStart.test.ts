/**
 * A real host start is ours only when our process bound the port. Pinned on the real host (4.1037):
 * a host whose port is taken logs "Failed to bind to address … address already in use" and exits,
 * and until then the status route on that port is whatever else listens there. In CI two test files
 * once drew the same free port: the second host never bound it, its start was taken as done because
 * the first host answered Running (same build, same keys), and the file's tests then hit a host that
 * another file stopped (ECONNREFUSED).
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { copyApp } from '../../devhost/realHost/appCopy';
import { startRealHost } from '../../devhost/realHost/process';
import { repoRoot } from '../e2e/support/harness';
import { deployed } from '../support/deployment';
import { realHostEnvironment } from '../support/realHostPrepared';

test('a host that cannot bind its port fails its start, though another server on that port answers Running', async () => {
  // Stands for another host on the port: it answers the status route the way a running host does.
  const other = createServer((req, res) => {
    const running = req.url === '/admin/host/status';
    res.writeHead(running ? 200 : 404, { 'content-type': 'application/json' });
    res.end(running ? JSON.stringify({ state: 'Running' }) : '{}');
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  const port = (other.address() as AddressInfo).port;
  const { build, extensionsBin, scratch } = realHostEnvironment();
  const appDir = copyApp({ appRoot: repoRoot, extensionsBin, parent: scratch, ...deployed });
  const started = startRealHost({
    build,
    appDir,
    port,
    settings: { AzureWebJobsStorage: 'UseDevelopmentStorage=true' },
    // Until it exits: a busy machine only makes the exit later.
    startTimeoutMs: 0,
  });
  try {
    await expect(started).rejects.toThrow(/address already in use/i);
  } finally {
    // Taken for started (the fault this pins): its process is still up, retrying the bind.
    await started.then(
      (host) => host.kill(),
      () => undefined,
    );
    await new Promise<void>((resolve) => other.close(() => resolve()));
    rmSync(appDir, { recursive: true, force: true });
  }
});
