/**
 * The namespace map: every identifier the app derives — Durable instance and entity ids,
 * idempotency keys, Service Bus message ids, queue names, blob paths, table keys — with the part a
 * caller controls and the routes it comes through. Each form is computed here by the capability's
 * own function wherever one exists, so the map is the code's; docs/security.md carries it
 * (`npm run security:sync`), and the namespace property test (test/unit/namespace.test.ts) feeds
 * adversarial names to every route that creates something and checks each id against its entry.
 *
 * The rule that keeps the namespaces apart is shared/names.ts: a caller's name never holds `:` (the
 * app's own instance ids are `<owner>:<parts>`), `|`, a space (the app's own keys) or a trailing
 * dot, and a reserved name is compared after normalisation.
 */
import { billingSettings } from '../shared/billing/settings';
import { effectKey, jobKey } from '../shared/effects/effect';
import { dataPartitionKey, markerRowKey, totalRowKey } from '../shared/counters/keys';
import { gateInstanceIds } from '../shared/gates/names';
import { gateRowKey, rowKeys } from '../shared/gates/rows';
import type { RouteName } from '../shared/http/authorization';
import { type AzureStore, isAppInstanceId, isAppKey } from '../shared/names';
import { queues as appQueues, containers, tables } from '../shared/resources';
import { readSettings } from '../shared/config';
import { autoCreatedPartition } from '../shared/storage/cappedSet';
import {
  flusherInstanceId,
  ledgerEntity,
  legacyFlusherInstanceId,
  logBlobName,
  logBlobPrefix,
  writerEntity,
} from '../shared/streams/names';
import { defaultRoute, routeWriterKey } from '../shared/streams/route';
import { streamSettings } from '../shared/streams/settings';
import { processorLaneName, processorQueueName } from '../shared/jobs/processors/processorDefinition';
import { jobSettings } from '../shared/jobs/settings';

/** What the map needs of the deployment: the default partition count and the app's own stream types. */
export interface NamespaceContext {
  readonly partitions: number;
  readonly ownStreamTypes: readonly string[];
}

/** The context of a deployment with the default settings: what docs/security.md shows. */
export function defaultNamespaceContext(): NamespaceContext {
  const ledger = readSettings({ billing: billingSettings }, {}).billing.ledgerStream;
  return { partitions: streamSettings.settings.partitions.fallback, ownStreamTypes: ledger === undefined ? [] : [ledger] };
}

type Space =
  /** The app's own form: no caller input can produce it; a caller's name, if any, is one confined part of it. */
  | 'app'
  /** A caller's name in a place of its own: it cannot be in the app's form. */
  | 'caller';

export interface NamespaceEntry {
  /** Where the id lives, e.g. "Durable instance id" or "table `schedules`". */
  readonly store: string;
  /** What it names. */
  readonly names: string;
  /** Its form, computed by the capability's function from placeholders. */
  readonly form: string;
  readonly space: Space;
  /** What a caller controls in it, and the routes it comes through; undefined: nothing. */
  readonly caller?: { readonly part: string; readonly routes: readonly RouteName[] };
  /** The ids a caller's (validated) name makes, for the property test. */
  readonly of?: (name: string) => readonly string[];
  /** The Azure naming rule every one of those ids (or, for a path, each segment) satisfies. */
  readonly rule?: AzureStore;
  /** For an `app` entry with a caller part: the separator the caller's name never holds, so the form's structure is fixed. */
  readonly separator?: string;
  /** For a `caller` entry: tells the app's own form apart (no caller id may pass it). */
  readonly appForm?: (id: string) => boolean;
  readonly note?: string;
}

const p = (name: string): string => `{${name}}`;

/** The writer key of a type on its default route (what an append of a new type addresses). */
function defaultKey(type: string, ctx: NamespaceContext): string {
  return routeWriterKey(defaultRoute(type, ctx.partitions));
}

const placeholderKey = `${p('partition')}:${p('resource')}`;

function durableEntries(ctx: NamespaceContext): NamespaceEntry[] {
  return [
    {
      store: 'Durable instance id',
      names: "a schedule's orchestration",
      form: p('id'),
      space: 'caller',
      caller: { part: 'the schedule id (body `id`)', routes: ['schedulesCreate', 'schedulesCreatePrivileged'] },
      of: (id) => [id],
      rule: 'instanceId',
      appForm: isAppInstanceId,
    },
    {
      store: 'Durable instance id',
      names: "a stream writer's flusher",
      form: flusherInstanceId(placeholderKey),
      space: 'app',
      caller: { part: 'the event type (resource and, hashed, partition of its default route)', routes: ['streamsAppend'] },
      of: (type) => [flusherInstanceId(defaultKey(type, ctx))],
      rule: 'instanceId',
      separator: ':',
      note: `Before this release \`${legacyFlusherInstanceId(placeholderKey)}\`, a valid schedule id: flushers started under it run on until they retire idle; none is started under it any more.`,
    },
    {
      store: 'Durable instance id',
      names: "a gate's generation, release and late-joiner orchestrations",
      form: [
        gateInstanceIds.generation(p('gate'), 1, null).replace(':1:none', `:${p('n')}:${p('releaseAt ms or none')}`),
        gateInstanceIds.release(p('gate'), 1).replace(/1$/, p('n')),
        gateInstanceIds.late(p('gate'), 1, p('batch')).replace(':1:', `:${p('n')}:`),
      ].join(', '),
      space: 'app',
      caller: { part: 'the gate name', routes: ['gatesCreate'] },
      of: (gate) => [gateInstanceIds.generation(gate, 1, null), gateInstanceIds.release(gate, 1), gateInstanceIds.late(gate, 1, '0')],
      rule: 'instanceId',
      separator: ':',
    },
    {
      store: 'gated run id',
      names: 'a gated run as the API names it (`instanceId` of the run status; no orchestration runs under it)',
      form: gateInstanceIds.run(p('gate'), p('runId')),
      space: 'app',
      caller: { part: 'the run id (body `runId`) under its gate', routes: ['gatesStartRun'] },
      of: (runId) => [gateInstanceIds.run('launch', runId)],
      rule: 'instanceId',
      separator: ':',
    },
    {
      store: 'Durable entity id',
      names: "a stream's single writer and its ledger",
      form: `${writerEntity(placeholderKey).toString()}, ${ledgerEntity(placeholderKey).toString()}`,
      space: 'app',
      caller: { part: 'the event type', routes: ['streamsAppend'] },
      of: (type) => [writerEntity(defaultKey(type, ctx)).key],
      rule: 'entityKey',
      separator: ':',
    },
  ];
}

const scheduleRun = {
  kind: 'scheduleRun',
  scheduleId: p('id'),
  runId: `${p('id')}#${p('n')}`,
  scheduledFor: '',
  fireKind: '',
  createdBy: '',
} as const;
const gateRun = { kind: 'gateRun', gate: p('gate'), generation: 1, runId: p('runId') } as const;

function keyEntries(): NamespaceEntry[] {
  return [
    {
      store: 'job Idempotency-Key',
      names: 'the job a caller submits (its id is `k-` and an HMAC of the key, so a key does not tell the job)',
      form: p('Idempotency-Key'),
      space: 'caller',
      caller: { part: 'the whole key (header `Idempotency-Key`: printable ASCII, no spaces)', routes: ['jobsSubmit'] },
      of: (key) => [key],
      appForm: isAppKey,
    },
    {
      store: 'job Idempotency-Key',
      names: 'the job a schedule run submits (`job` target)',
      form: jobKey(scheduleRun),
      space: 'app',
      caller: { part: 'the schedule id', routes: ['schedulesCreate', 'schedulesCreatePrivileged'] },
      of: (id) => [jobKey({ ...scheduleRun, scheduleId: id, runId: `${id}#1` })],
      separator: ' ',
    },
    {
      store: 'job Idempotency-Key',
      names: 'the job a gated run submits (`job` action)',
      form: jobKey(gateRun),
      space: 'app',
      caller: { part: 'the gate name and run id', routes: ['gatesStartRun'] },
      of: (runId) => [jobKey({ ...gateRun, gate: 'launch', runId })],
      separator: ' ',
    },
    {
      store: 'Service Bus messageId',
      names: "a schedule run's message (`serviceBus` target); a scheduled delivery's message is the schedule id",
      form: `${effectKey(scheduleRun)}, ${p('id')}`,
      space: 'caller',
      caller: { part: 'the schedule id', routes: ['schedulesCreate', 'schedulesCreatePrivileged'] },
      of: (id) => [effectKey({ ...scheduleRun, scheduleId: id, runId: `${id}#1` }), id],
      note: "Sent only to entities the allow-list admits (TALLYHO_SCHEDULES_ALLOWED_SERVICEBUS_ENTITIES), never the app's own topics, whose message ids are the app's (`<gate>:<generation>:<kind>`, `<job>:<round>:completed`).",
    },
    {
      store: `table \`${tables.idempotency}\``,
      names: 'a stored answer to a keyed `next` (PartitionKey / RowKey)',
      form: `sequences:${p('name')} / sha256(${p('caller')} LF ${p('Idempotency-Key')})`,
      space: 'app',
      caller: { part: 'the sequence name; the key only hashed', routes: ['sequencesNext'] },
      of: (name) => [`sequences:${name}`],
      rule: 'tableKey',
      separator: ':',
    },
  ];
}

function storageEntries(ctx: NamespaceContext): NamespaceEntry[] {
  return [
    {
      store: 'storage queue',
      names: "a schedule's `queueMessage` target",
      form: p('queue'),
      space: 'caller',
      caller: { part: 'the queue name (body `target.queue`)', routes: ['schedulesCreate', 'schedulesCreatePrivileged'] },
      rule: 'queue',
      note: "Only queues TALLYHO_SCHEDULES_ALLOWED_QUEUES admits, never the app's own, their `-poison` twins, `azure-webjobs-*` or a task hub's.",
    },
    {
      store: 'storage queue',
      names: "the app's own queues",
      form: [
        appQueues.gateActions,
        `${p('TALLYHO_JOBS_QUEUE_PREFIX')}-${p('n')}`,
        `${p('TALLYHO_JOBS_QUEUE_PREFIX')}-d`,
        `${p('TALLYHO_JOBS_QUEUE_PREFIX')}-c`,
      ].join(', '),
      space: 'app',
    },
    {
      store: `blob (container \`${containers.streams}\`)`,
      names: "a stream writer's log",
      form: logBlobName({ partition: p('partition'), resource: p('resource') }, 0).replace('000000', p('seq')),
      space: 'app',
      caller: { part: 'the event type (the resource, and the partition it hashes to)', routes: ['streamsAppend'] },
      of: (type) => {
        const route = defaultRoute(type, ctx.partitions);
        return logBlobPrefix({ partition: route.partition, resource: route.resource })
          .split('/')
          .filter((s) => s !== '');
      },
      rule: 'blobSegment',
      separator: '/',
    },
    {
      store: `blob (container \`${containers.jobs}\`)`,
      names: "a job's input and files",
      form: `${p('job')}/input-${p('hash')}.ndjson, ${p('job')}/files/${p('file')}`,
      space: 'app',
      note: 'Job ids are made by the app (a time stamp and random hex, or `k-` and an HMAC of the Idempotency-Key).',
    },
    {
      store: `blob (container \`${containers.secrets}\`)`,
      names: "the app's signing key",
      form: 'signing-key',
      space: 'app',
    },
    {
      store: `table \`${tables.sequences}\`, \`${tables.counters}\``,
      names: 'a sequence or counter (PartitionKey / RowKey), and the auto-created ones counted',
      form: `${p('name')} / sequence (counter); ${autoCreatedPartition} / m|${p('name')} and count`,
      space: 'caller',
      caller: { part: 'the name', routes: ['sequencesConfigure', 'sequencesNext', 'countersConfigure', 'countersIncrement'] },
      of: (name) => [name],
      rule: 'tableKey',
      appForm: (key) => key.startsWith('|'),
    },
    {
      store: `table \`${tables.callers}\``,
      names: 'a caller issued a credential, and a revoked credential (PartitionKey / RowKey)',
      form: `c / ${p('name')}; r / ${p('credential id')}`,
      space: 'caller',
      caller: { part: 'the caller name (RowKey of partition `c`)', routes: ['callersIssue'] },
      of: (name) => [name],
      rule: 'tableKey',
      note: "A revocation row's key is the credential id, which the app makes: no caller name reaches partition `r`.",
    },
    {
      store: `table \`${tables.counterData}\``,
      names: "a counter's hit rows, total and idempotency markers (PartitionKey / RowKey)",
      form: `${dataPartitionKey(p('name'), 0).replace(/00$/, p('NN'))} / ${p('time')}-${p('instance')}-${p('seq')}, ${totalRowKey}, ${markerRowKey('').slice(0, 2)}${p('sha256 of caller and Idempotency-Key')}`,
      space: 'app',
      caller: { part: 'the counter name', routes: ['countersIncrement'] },
      of: (name) => [dataPartitionKey(name, 0)],
      rule: 'tableKey',
      separator: '|',
    },
    {
      store: `table \`${tables.schedules}\``,
      names: 'a schedule (PartitionKey / RowKey)',
      form: `${p('id')} / schedule`,
      space: 'caller',
      caller: { part: 'the schedule id', routes: ['schedulesCreate', 'schedulesCreatePrivileged'] },
      of: (id) => [id],
      rule: 'tableKey',
    },
    {
      store: `table \`${tables.streamRoutes}\``,
      names: "a type's route, and the types admitted per task hub (PartitionKey / RowKey)",
      form: `route / ${p('type')}; types|${p('hub')} / m|${p('type')} and count`,
      space: 'caller',
      caller: { part: 'the event type', routes: ['streamsAppend', 'streamsRemap'] },
      of: (type) => [type, `m|${type}`],
      rule: 'tableKey',
    },
    {
      store: `table \`${tables.gates}\``,
      names: "a gate's partition: the gate row, its releases, audit records and registered runs (PartitionKey)",
      form: p('gate'),
      space: 'caller',
      caller: { part: 'the gate name', routes: ['gatesCreate'] },
      of: (gate) => [gate],
      rule: 'tableKey',
    },
    {
      store: `table \`${tables.gates}\` RowKey`,
      names: 'the rows of a gate (RowKey)',
      form: [
        gateRowKey,
        rowKeys.release(1).replace(/0*1$/, p('n')),
        rowKeys.audit(1, 'create').replace(/0*1-1-create$/, `${p('n')}-${p('kind')}`),
        rowKeys.run(p('runId')).replace(/^run-[0-9a-f]+-/, `run-${p('shard')}-`),
      ].join(', '),
      space: 'app',
      caller: { part: 'the run id, after `run-<shard>-`', routes: ['gatesStartRun'] },
      of: (runId) => [rowKeys.run(runId)],
      rule: 'tableKey',
      note: 'A run row always starts `run-`, so no run id can name the gate row, a release or an audit record.',
    },
    {
      store: 'storage queue',
      names: "a declared processor's queue and its retry lane",
      form: [
        processorQueueName(p('TALLYHO_JOBS_QUEUE_PREFIX'), p('processor')),
        processorLaneName(p('TALLYHO_JOBS_QUEUE_PREFIX'), p('processor')),
      ].join(', '),
      space: 'app',
      caller: { part: 'the processor name (lowercase letters, digits and single hyphens)', routes: ['processorsDeclare'] },
      of: (name) => [
        processorQueueName(jobSettings.settings.queuePrefix.fallback, name),
        processorLaneName(jobSettings.settings.queuePrefix.fallback, name),
      ],
      rule: 'queue',
      note: "The app's own job queues are `<prefix>-<n>` and their retry lanes `<prefix>-r-<n>`; a processor's are `<prefix>-x-<name>` and `<prefix>-r-<name>`, and a processor name starts with a letter.",
    },
    {
      store: `table \`${tables.jobs}\`, \`${tables.jobResults}\``,
      names: "a job, the open-job index, a job's results (PartitionKey / RowKey)",
      form: `${p('job')}; open / ${p('job')}; ${p('job')} / r|${p('item')}`,
      space: 'app',
      caller: { part: 'the item id (body `items[].id`), after `r|`', routes: ['jobsSubmit'] },
      note: "Job ids are the app's; an item id is confined to its job's partition.",
    },
  ];
}

/** The map, in the order docs/security.md shows it. */
export function namespaceMap(ctx: NamespaceContext): NamespaceEntry[] {
  return [...durableEntries(ctx), ...keyEntries(), ...storageEntries(ctx)];
}

/** One id the app uses for itself, with the store it lives in (the `store` of its map entry). */
export interface OwnId {
  readonly store: string;
  readonly id: string;
}

/**
 * The ids the app uses for itself with no caller input in them, which no caller's id in the same
 * store may equal (compared after normalisation where the store compares loosely): its own streams'
 * writers, flushers and logs. Stores are apart: a job key may read like a writer key.
 */
export function ownIds(ctx: NamespaceContext): readonly OwnId[] {
  return ctx.ownStreamTypes.flatMap((type) => {
    const route = defaultRoute(type, ctx.partitions);
    const key = routeWriterKey(route);
    return [
      { store: 'Durable entity id', id: key },
      { store: 'Durable instance id', id: flusherInstanceId(key) },
      { store: `blob (container \`${containers.streams}\`)`, id: logBlobPrefix({ partition: route.partition, resource: route.resource }) },
    ];
  });
}

export const namespaceBlock = {
  begin: '<!-- BEGIN:namespace (generated from docgen/namespace.ts) -->',
  end: '<!-- END:namespace -->',
};

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

export function namespaceMarkdown(ctx: NamespaceContext): string {
  const rows = namespaceMap(ctx).map((e) => {
    const caller = e.caller === undefined ? 'nothing' : `${e.caller.part}: ${e.caller.routes.map((r) => `\`${r}\``).join(', ')}`;
    const space = e.space === 'app' ? "the app's" : "the caller's";
    return `| ${cell(e.store)} | ${cell(e.names)} | \`${cell(e.form)}\` | ${space} | ${cell(caller)} | ${cell(e.note ?? '')} |`;
  });
  return [
    '| where | what it names | form | whose form | what a caller controls, through | notes |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
