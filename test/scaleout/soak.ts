/**
 * `npm run soak -- --instances 3 --minutes 10 --kills 5`: the long scale-out run, printing each
 * invariant's figures. Options: `--host real|devhost` (default: the real host when FUNCTIONS_HOST_BUILD
 * names one), `--scale-ins N` (graceful stops, default 1), `--scale N` (load multiplier), `--out DIR`
 * (history and instance logs), `--only a,b` (capabilities), `--settings '{"K":"V"}'` (host settings,
 * e.g. Durable tuning). Exit code 1 when any invariant was violated.
 */
import { parseArgs } from 'node:util';

import { configuredHostBuild } from '../../devhost/realHost/hostBuild';
import { formatReport, ownerOf, scaleOutRun } from './run';
import { workloadsFor } from './workloads';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      host: { type: 'string' },
      instances: { type: 'string', default: '3' },
      minutes: { type: 'string', default: '10' },
      kills: { type: 'string', default: '5' },
      'scale-ins': { type: 'string', default: '1' },
      scale: { type: 'string', default: '1' },
      drain: { type: 'string', default: '420' },
      out: { type: 'string' },
      'keep-storage': { type: 'boolean', default: false },
      only: { type: 'string' },
      settings: { type: 'string' },
    },
  });
  const kind = values.host === 'devhost' || (values.host === undefined && configuredHostBuild() === undefined) ? 'devhost' : 'real';
  const instances = Number(values.instances);
  if (!(instances >= 2 && instances <= 4)) throw new Error('--instances must be 2 to 4');
  const only = values.only?.split(',').map((s) => s.trim());
  const result = await scaleOutRun({
    kind,
    instances,
    loadMs: Number(values.minutes) * 60_000,
    chaos: { kills: Number(values.kills), scaleIns: Number(values['scale-ins']) },
    workloads: workloadsFor(kind, only === undefined ? {} : { only }),
    scale: Number(values.scale),
    drainMs: Number(values.drain) * 1000,
    settings: values.settings === undefined ? {} : (JSON.parse(values.settings) as Record<string, string>),
    ...(values.out === undefined ? {} : { outDir: values.out, keepStorage: values['keep-storage'] }),
    say: (m) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${m}`),
  });
  console.log(formatReport(result));
  const storage = [...result.storageByResource].sort((a, b) => b[1] - a[1]);
  const perSecond = (n: number): string => `${(n / result.loadSeconds).toFixed(1)}/s`;
  console.log(`storage transactions during the load (${result.loadSeconds.toFixed(0)} s), by resource:`);
  for (const [resource, n] of storage) console.log(`  ${resource}: ${n} (${perSecond(n)})`);
  const byOwner = new Map<string, number>();
  for (const [resource, n] of storage)
    byOwner.set(ownerOf(resource, result.taskHub), (byOwner.get(ownerOf(resource, result.taskHub)) ?? 0) + n);
  console.log('… by the part of the app they serve:');
  for (const [owner, n] of [...byOwner].sort((a, b) => b[1] - a[1])) console.log(`  ${owner}: ${n} (${perSecond(n)})`);
  console.log(`operations answered: ${JSON.stringify(result.operations)}`);
  return result.violations === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
