/**
 * infra/ provisions exactly what the app uses. The app side is read from its single sources of
 * truth — `shared/resources.ts`, `shared/storage/connection.ts` and `shared/messaging/connection.ts` (the connections), the settings declarations (docgen/settingsDoc.ts), `host.json` and the bindings
 * the compiled app registers (captured through the devhost's registry) — and compared with what a
 * deployment of infra/ creates (the Bicep CLI's snapshot of the default scenario), so a capability
 * that adds a queue, a setting or a Service Bus trigger fails here until infra/ provides it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { hostBodyLimitBytes } from '../../../docgen/hostSettings';
import { declaredSettings } from '../../../docgen/settingsDoc';
import { connectionNames } from '../../../shared/app/settings';
import { invalidResourceNames, resourceManifest } from '../../../shared/resourceManifest';
import { type Binding, captureRegistrations, type Registration, settingReferences } from '../../support/infra/registrations';
import { at, type Deployment, isPlainObject, type Json, leafName, ofType, textOf } from '../../support/infra/deployment';
import { describeInfra, infraDir, repoRoot, type Templates } from '../../support/infra/templates';

const storageBindings = new Set(['queueTrigger', 'queue', 'blobTrigger', 'blob', 'table']);
const serviceBusBindings = new Set(['serviceBusTrigger', 'serviceBus']);
const durableBindings = new Set(['orchestrationTrigger', 'activityTrigger', 'entityTrigger', 'durableClient', 'orchestrationClient']);
/** Settings the platform reads (Application Insights with Entra auth), not the app. */
const platformSettings = ['APPLICATIONINSIGHTS_CONNECTION_STRING', 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING'];

interface AppSettingsFile {
  readonly settings: Readonly<Record<string, string>>;
  readonly hostSettings: Readonly<Record<string, string>>;
  readonly appDefaults: readonly string[];
}

const manifest = resourceManifest();
const hostJson = JSON.parse(readFileSync(join(repoRoot, 'host.json'), 'utf8')) as unknown;
const appSettingsFile = JSON.parse(readFileSync(join(infraDir, 'app-settings.json'), 'utf8')) as AppSettingsFile;

let deployment: Deployment;
let registrations: Registration[];
let provided: Record<string, Json>;

function load(templates: Templates): void {
  deployment = templates.deployments.defaults;
  registrations = captureRegistrations(repoRoot);
  const config = ofType(deployment, 'Microsoft.Web/sites/config').find((c) => c.name.endsWith('/appsettings'));
  const properties = config === undefined ? undefined : at(config.body, 'properties');
  if (!isPlainObject(properties)) throw new Error('infra/: the appsettings of the Function App are not a known object');
  provided = { ...properties };
}

function bindings(): { fn: string; binding: Binding }[] {
  return registrations.flatMap((r) => Object.values(r.bindings).map((binding) => ({ fn: r.name, binding })));
}

/** A binding value with `%Setting%` replaced by the value infra/ gives that setting. */
function resolved(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return value.replace(/%([A-Za-z0-9_.:-]+)%/g, (whole, name: string) => {
    const setting = provided[name];
    return typeof setting === 'string' ? setting : whole;
  });
}

function durableConnection(): string {
  const name = at(hostJson as Json, 'extensions.durableTask.storageProvider.connectionName');
  return typeof name === 'string' ? name : 'AzureWebJobsStorage';
}

/** Every connection the app uses and its kind: binding connections plus the SDK clients' settings. */
function connections(): Map<string, 'storage' | 'serviceBus'> {
  const found = new Map<string, 'storage' | 'serviceBus'>([
    [connectionNames.storage, 'storage'],
    [connectionNames.serviceBus, 'serviceBus'],
  ]);
  for (const { binding } of bindings()) {
    const explicit = typeof binding.connection === 'string' && binding.connection !== '' ? binding.connection : undefined;
    if (storageBindings.has(binding.type)) found.set(explicit ?? 'AzureWebJobsStorage', 'storage');
    else if (serviceBusBindings.has(binding.type)) found.set(explicit ?? 'AzureWebJobsServiceBus', 'serviceBus');
    else if (durableBindings.has(binding.type)) found.set(durableConnection(), 'storage');
  }
  return found;
}

/** The settings an identity-based connection needs: storage by service URI (as Flex templates write it). */
function identitySettingsFor(name: string, kind: 'storage' | 'serviceBus'): string[] {
  const address =
    kind === 'storage'
      ? [`${name}__blobServiceUri`, `${name}__queueServiceUri`, `${name}__tableServiceUri`]
      : [`${name}__fullyQualifiedNamespace`];
  return [...address, `${name}__credential`, `${name}__clientId`];
}

describeInfra('infra/ and the app agree', (templates) => {
  beforeAll(() => load(templates()), 120_000);

  it('the compiled app registers its functions under the devhost registry (the capture works)', () => {
    expect(registrations.length).toBeGreaterThan(0);
    expect(registrations.every((r) => Object.keys(r.bindings).length > 0)).toBe(true);
  });

  it('infra/app-resources.json is shared/resources.ts (run `npm run infra:sync` after adding a resource)', () => {
    const file = JSON.parse(readFileSync(join(infraDir, 'app-resources.json'), 'utf8')) as Record<string, unknown>;
    delete file.$comment;
    expect(file).toEqual(JSON.parse(JSON.stringify(manifest)));
  });

  it('every resource name in shared/resources.ts is one Azure accepts', () => {
    expect(invalidResourceNames(manifest)).toEqual([]);
  });

  it('Bicep creates exactly the tables, queues and containers of shared/resources.ts', () => {
    const names = (type: string): string[] => ofType(deployment, type).map(leafName).sort();
    expect(names('Microsoft.Storage/storageAccounts/tableServices/tables')).toEqual([...manifest.tables]);
    expect(names('Microsoft.Storage/storageAccounts/queueServices/queues')).toEqual([...manifest.queues]);
    // Besides the app's containers, the one Flex Consumption deploys the package from.
    const site = ofType(deployment, 'Microsoft.Web/sites')[0];
    const packageContainer = /'([^']+)'\)\]$/.exec(textOf(at(site?.body, 'properties.functionAppConfig.deployment.storage.value')))?.[1];
    expect(packageContainer).toMatch(/^app-package-/);
    expect(names('Microsoft.Storage/storageAccounts/blobServices/containers').filter((name) => name !== packageContainer)).toEqual([
      ...manifest.containers,
    ]);
  });

  it('Bicep creates exactly the Service Bus queues, topics and subscriptions of shared/resources.ts', () => {
    const names = (type: string): string[] => ofType(deployment, type).map(leafName).sort();
    expect(names('Microsoft.ServiceBus/namespaces/queues')).toEqual([...manifest.serviceBus.queues]);
    expect(names('Microsoft.ServiceBus/namespaces/topics')).toEqual(manifest.serviceBus.topics.map((t) => t.name).sort());
    expect(names('Microsoft.ServiceBus/namespaces/topics/subscriptions')).toEqual(
      manifest.serviceBus.topics.flatMap((t) => t.subscriptions).sort(),
    );
  });

  it("the registrations' queues, containers, tables, topics and subscriptions are all provisioned", () => {
    const missing: string[] = [];
    const topics = new Map(manifest.serviceBus.topics.map((t) => [t.name, new Set(t.subscriptions)]));
    for (const { fn, binding } of bindings()) {
      const where = `${fn} (${binding.type})`;
      if (binding.type === 'queueTrigger' || binding.type === 'queue') {
        const queue = resolved(binding.queueName);
        if (queue === undefined || !manifest.queues.includes(queue.replace(/-poison$/, ''))) missing.push(`${where}: queue ${queue}`);
      } else if (binding.type === 'blobTrigger' || binding.type === 'blob') {
        const container = resolved(binding.path)?.split('/')[0];
        if (container === undefined || !manifest.containers.includes(container)) missing.push(`${where}: container ${container}`);
      } else if (binding.type === 'table') {
        const table = resolved(binding.tableName);
        if (table === undefined || !manifest.tables.includes(table)) missing.push(`${where}: table ${table}`);
      } else if (serviceBusBindings.has(binding.type)) {
        const queue = resolved(binding.queueName);
        const topic = resolved(binding.topicName);
        const subscription = resolved(binding.subscriptionName);
        if (queue !== undefined && !manifest.serviceBus.queues.includes(queue)) missing.push(`${where}: Service Bus queue ${queue}`);
        if (topic !== undefined && !topics.has(topic)) missing.push(`${where}: topic ${topic}`);
        if (topic !== undefined && subscription !== undefined && topics.get(topic)?.has(subscription) !== true) {
          missing.push(`${where}: subscription ${topic}/${subscription}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('every connection is identity-based in Azure: address, credential and client id, never a connection string', () => {
    const problems: string[] = [];
    for (const [name, kind] of connections()) {
      if (name in provided) problems.push(`${name} is set as a connection string`);
      for (const setting of identitySettingsFor(name, kind)) if (!(setting in provided)) problems.push(`${setting} is not set`);
      if (provided[`${name}__credential`] !== undefined && provided[`${name}__credential`] !== 'managedidentity') {
        problems.push(`${name}__credential is not managedidentity`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every %Setting% that host.json and the bindings reference has a value in Azure', () => {
    const referenced = [...settingReferences(hostJson), ...settingReferences(registrations.map((r) => r.bindings))];
    expect(referenced.filter((name) => !(name in provided))).toEqual([]);
  });

  it('infra/app-settings.json classifies exactly the TALLYHO_* settings the app reads', () => {
    const read = new Set(
      [
        ...declaredSettings().map((s) => s.env),
        ...settingReferences(hostJson),
        ...settingReferences(registrations.map((r) => r.bindings)),
      ].filter((name) => name.startsWith('TALLYHO_')),
    );
    const classified = [...Object.keys(appSettingsFile.settings), ...appSettingsFile.appDefaults];
    expect({ unclassified: [...read].filter((name) => !classified.includes(name)).sort() }).toEqual({ unclassified: [] });
    expect({ notRead: classified.filter((name) => !read.has(name)).sort() }).toEqual({ notRead: [] });
    expect(Object.keys(appSettingsFile.settings).filter((name) => appSettingsFile.appDefaults.includes(name))).toEqual([]);
  });

  it('the Function App gets exactly the identity settings, the Azure-specific TALLYHO_* values, the host settings and App Insights', () => {
    const expected = new Set([
      ...[...connections()].flatMap(([name, kind]) => identitySettingsFor(name, kind)),
      ...Object.keys(appSettingsFile.settings),
      ...Object.keys(appSettingsFile.hostSettings),
      ...platformSettings,
    ]);
    expect(Object.keys(provided).sort()).toEqual([...expected].sort());
    for (const [name, value] of Object.entries({ ...appSettingsFile.settings, ...appSettingsFile.hostSettings })) {
      expect(provided[name]).toBe(value);
    }
    // The host refuses a body larger than the largest a route accepts, before it reads it.
    expect(provided.FUNCTIONS_REQUEST_BODY_SIZE_LIMIT).toBe(String(hostBodyLimitBytes));
  });
});
