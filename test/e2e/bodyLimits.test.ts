/**
 * Issue #24 finding 7 on the host of the run: a body larger than the host's limit
 * (FUNCTIONS_REQUEST_BODY_SIZE_LIMIT, set by local.settings.sample.json and infra to twice the largest
 * body a route accepts) is refused before the host reads it. The real host answers such a body 500 (its
 * own answer, which the app cannot change: devhost/docs/real-host.md#request-body-limit), so what is
 * pinned is the bound that matters — how much of the body the host took, and its memory.
 */
import { hostBodyLimitBytes } from '../../docgen/hostSettings';
import { type E2eHost, hostLabel } from './support/harness';
import { sharedE2eHost } from './support/sharedHost';
import { requestJson } from './support/http';
import { unique } from './support/names';
import { realHostMemory, upload } from './support/upload';

const MiB = 1024 * 1024;
/** What socket buffers on the way may hold besides what the host reads. */
const inFlight = 12 * MiB;

describe(`request bodies over the host's limit (${hostLabel()})`, () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await sharedE2eHost();
  });
  afterAll(async () => {
    await host.dispose();
  });

  test('90 MiB with a Content-Length to a 1 KiB route: refused without being read (the host does not buffer it)', async () => {
    const before = realHostMemory(host);
    const { status, sent } = await upload(host, `/api/streams/${unique('big')}/route`, {
      key: host.keys.admin ?? '',
      total: 90 * MiB,
      declareLength: true,
    });
    // At the default limit (100 MB) the real host read all 90 MiB for binding data (+361 MB RSS), then the app's 413.
    expect(status === 0 || status >= 400).toBe(true);
    expect(sent).toBeLessThan(hostBodyLimitBytes + inFlight);
    const after = realHostMemory(host);
    if (before !== undefined && after !== undefined) expect(after.peakKb - before.peakKb).toBeLessThan(64 * 1024);
    expect((await requestJson(host, 'GET', '/api/health', { key: 'none' })).status).toBe(200);
  });

  test('90 MiB chunked to a 1 KiB route: read no further than the limits, and the host stays well', async () => {
    const before = realHostMemory(host);
    const { status, sent } = await upload(host, `/api/streams/${unique('big')}/route`, { key: host.keys.admin ?? '', total: 90 * MiB });
    // The app counts the bytes and answers 413 at 1 KiB; the real host turns that into its 500 when the body is still arriving.
    expect(status === 0 || status >= 400).toBe(true);
    expect(sent).toBeLessThan(hostBodyLimitBytes + 3 * inFlight);
    const after = realHostMemory(host);
    if (before !== undefined && after !== undefined) expect(after.peakKb - before.peakKb).toBeLessThan(64 * 1024);
    expect((await requestJson(host, 'GET', '/api/health', { key: 'none' })).status).toBe(200);
  });
});
