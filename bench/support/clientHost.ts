/**
 * The host bench/client.ts measures, in processes of its own so that their CPU is theirs alone: the
 * devhost as a child process, or with `--real-host` the real Functions host and its Node worker
 * (./benchHost.ts). Either runs on a fresh Azurite behind the counting proxy, so the storage requests
 * it makes are counted too.
 */
import { startAzurite } from '../../devhost/azurite';
import { startBenchHost } from './benchHost';
import { startCountingProxy } from './countingProxy';
import { startDevhostChild } from './devhostChild';
import { processCpuMs } from './proc';
import { sampleSettings } from './settings';

export interface ClientBenchHost {
  readonly name: string;
  readonly baseUrl: string;
  readonly keys: { readonly function?: string; readonly admin?: string };
  /** CPU the serving processes have used so far, in ms. */
  cpuMs(): number;
  /** Storage requests the host has made so far. */
  storage(): number;
  stop(): Promise<void>;
}

/**
 * The app's sample settings, but the counter rollup only once a year: a run every 30 s would fall in
 * one design's window and not another's, and it folds rows the designs before wrote. What each design
 * leaves for it is in its storage requests (a hit row each).
 */
const settings = (): Record<string, string> => ({ ...sampleSettings(), TALLYHO_COUNTERS_ROLLUP_SCHEDULE: '0 0 0 1 1 *' });

export async function startClientBenchHost(realHost: boolean): Promise<ClientBenchHost> {
  if (realHost) {
    const real = await startBenchHost({ env: settings() });
    return {
      name: 'the real Functions host (4.1037.0, Node worker 3.9.1) on Azurite',
      baseUrl: real.baseUrl,
      keys: real.keys,
      cpuMs: () => real.processIds().reduce((sum, pid) => sum + processCpuMs(pid), 0),
      storage: () => real.totals().storage,
      stop: () => real.stop(),
    };
  }
  const azurite = await startAzurite();
  const proxy = await startCountingProxy(azurite.ports);
  let storage = 0;
  try {
    const devhost = await startDevhostChild({ ...settings(), AzureWebJobsStorage: proxy.connectionString });
    return {
      name: 'the devhost (a child process) on Azurite',
      baseUrl: devhost.baseUrl,
      keys: {},
      cpuMs: () => processCpuMs(devhost.pid),
      storage: () => (storage += proxy.take().length),
      stop: async () => {
        await devhost.stop();
        await proxy.close();
        await azurite.stop();
      },
    };
  } catch (err) {
    await proxy.close();
    await azurite.stop();
    throw err;
  }
}
