/**
 * Every Service Bus topic drops duplicates: gate and job events are published with deterministic
 * message ids, and a republish after a crash must not reach subscribers twice. Checked on what each
 * scenario deploys (bicep snapshot), and on a copy of infra/ with the setting turned off, so the
 * check is known to bite.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { resourceManifest } from '../../../shared/resourceManifest';
import { findBicep } from '../../support/infra/bicepCli';
import { scenarios, snapshot } from '../../support/infra/compile';
import { at, type Deployment, deploymentOf, leafName, ofType } from '../../support/infra/deployment';
import { describeInfra, infraDir, repoRoot } from '../../support/infra/templates';

const topicType = 'Microsoft.ServiceBus/namespaces/topics';

/** Topics without duplicate detection (or without a history window). */
function topicsWithoutDuplicateDetection(deployment: Deployment): string[] {
  return ofType(deployment, topicType)
    .filter((topic) => {
      const window = at(topic.body, 'properties.duplicateDetectionHistoryTimeWindow');
      return at(topic.body, 'properties.requiresDuplicateDetection') !== true || typeof window !== 'string' || !/^P/.test(window);
    })
    .map(leafName);
}

describeInfra('Service Bus topics', (templates) => {
  it('every topic the app uses is provisioned with duplicate detection and a history window', () => {
    const expected = resourceManifest().serviceBus.topics.map((t) => t.name);
    expect(expected).toEqual(expect.arrayContaining(['gate-events', 'job-events']));
    for (const deployment of Object.values(templates().deployments)) {
      const { scenario } = deployment;
      expect({ scenario, topics: ofType(deployment, topicType).map(leafName).sort() }).toEqual({ scenario, topics: [...expected].sort() });
      expect({ scenario, missing: topicsWithoutDuplicateDetection(deployment) }).toEqual({ scenario, missing: [] });
    }
  });

  it('the check bites: a copy of infra/ with duplicate detection off fails it', () => {
    const copy = join(repoRoot, 'test-artifacts', 'infra-no-dedup');
    rmSync(copy, { recursive: true, force: true });
    mkdirSync(copy, { recursive: true });
    cpSync(infraDir, copy, { recursive: true, filter: (source) => !source.startsWith(join(infraDir, 'tools')) });
    const module = join(copy, 'modules', 'servicebus-topic.bicep');
    const text = readFileSync(module, 'utf8');
    expect(text).toMatch(/requiresDuplicateDetection: true/);
    writeFileSync(module, text.replace('requiresDuplicateDetection: true', 'requiresDuplicateDetection: false'));
    const broken = snapshot(findBicep()!, copy, join(copy, 'snapshot'), 'defaults', scenarios.defaults);
    expect(broken.problems).toEqual([]);
    expect(topicsWithoutDuplicateDetection(deploymentOf('defaults', broken.text)).length).toBe(resourceManifest().serviceBus.topics.length);
    rmSync(copy, { recursive: true, force: true });
  });
});
