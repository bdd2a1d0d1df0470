#!/usr/bin/env node
// The app roles of Tallyho's Microsoft Entra app registration, as the JSON `az ad app create
// --app-roles` and `az ad app update --app-roles` take: admin, submitter, worker of every processor,
// and worker of each processor named on the command line. shared/identity reads the same values from
// a token's `roles` claim (docs/security.md). Each role's id is a name-based UUID of its value, so
// running this again gives the same ids and an update keeps the roles already assigned.
//
//   node scripts/entra-app-roles.mjs [processor ...] > app-roles.json
import { createHash } from 'node:crypto';

/** The processor names the app accepts (shared/jobs/processors/processorDefinition.ts). */
const processorName = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** A version 5 (SHA-1, name-based) UUID of `name` in a namespace of Tallyho's own. */
function roleId(name) {
  const namespace = Buffer.from('6f1c0d2e4b8a4f3c9e7d5a1b2c3d4e5f', 'hex');
  const hash = createHash('sha1').update(namespace).update(name, 'utf8').digest().subarray(0, 16);
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.toString('hex');
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-');
}

function role(value, displayName, description) {
  // Users and applications (a worker's or a caller's managed identity) may both be given a role.
  return { id: roleId(value), allowedMemberTypes: ['User', 'Application'], value, displayName, description, isEnabled: true };
}

export function appRoles(processors) {
  const bad = processors.filter((p) => !processorName.test(p) || p.length > 32);
  if (bad.length > 0) throw new Error(`not a processor name: ${bad.join(', ')} (2-32 lower-case letters, digits and single hyphens)`);
  return [
    role('Tallyho.Admin', 'Tallyho admin', 'Every route, admin actions included.'),
    role(
      'Tallyho.Submitter',
      'Tallyho submitter',
      'Submits jobs and makes schedules, gated runs and stream producers; reads and cancels its own.',
    ),
    role('Tallyho.Worker', 'Tallyho worker (every processor)', "Leases, extends and completes every declared processor's batches."),
    ...[...new Set(processors)].map((p) =>
      role(`Tallyho.Worker.${p}`, `Tallyho worker of ${p}`, `Leases, extends and completes the batches of processor ${p}.`),
    ),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.stdout.write(`${JSON.stringify(appRoles(process.argv.slice(2)), null, 2)}\n`);
  } catch (err) {
    process.stderr.write(`entra-app-roles: ${err.message}\n`);
    process.exit(2);
  }
}
